package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/executor/emissary"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// TestKubePodRoles runs sidecars, containerSets and a daemon on the node
// (make kube-images first: the emissary of braid:dev must be this one).
func TestKubePodRoles(t *testing.T) {
	c, ca := kubeClient(t)
	ns := testNamespace(t, c, ca)
	rt := newRuntime(t, c, ns)
	events := collect(rt)
	ctx := context.Background()

	sidecar := newRun(t, ns, "sidecar", `
name: sidecar
container: {image: busybox:1.36, command: [sh, -c, "sleep 1; echo main done"]}
sidecars:
- {name: forever, image: busybox:1.36, command: [sh, -c, "trap 'exit 9' TERM; while :; do sleep 0.1; done"]}
- {name: stubborn, image: busybox:1.36, command: [sh, -c, "trap '' TERM; while :; do sleep 0.1; done"]}`)
	set := newRun(t, ns, "set", `
name: set
volumes: [{name: ws, emptyDir: {}}]
containerSet:
  volumeMounts: [{name: ws, mountPath: /ws}]
  containers:
  - {name: a, image: busybox:1.36, command: [sh, -c, "sleep 1; echo -n written-by-a > /ws/x"]}
  - {name: main, image: busybox:1.36, command: [sh, -c, "cat /ws/x"], dependencies: [a]}
outputs: {parameters: [{name: x, valueFrom: {path: /ws/x}}]}`)
	set.IncludeResult = true
	setFail := newRun(t, ns, "set-fail", `
name: set-fail
containerSet:
  retryStrategy: {retries: 1}
  containers:
  - {name: a, image: busybox:1.36, command: [sh, -c, "exit 2"]}
  - {name: b, image: busybox:1.36, command: [sh, -c, "echo b ran"], dependencies: [a]}
  - {name: main, image: busybox:1.36, command: [sh, -c, "echo main ran"], dependencies: [b]}`)
	daemon := newRun(t, ns, "daemon", `
name: daemon
daemon: true
container:
  image: busybox:1.36
  command: [sh, -c, "sleep 2; mkdir -p /www && echo hi-from-daemon > /www/index.html && exec httpd -f -p 8080 -h /www"]
  readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}`)
	for _, r := range []runtime.Run{sidecar, set, setFail, daemon} {
		if err := rt.Start(ctx, r); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("sidecars stopped when main ends", func(t *testing.T) {
		evs := events.wait(t, sidecar.ID, v1alpha1.NodeSucceeded, 90*time.Second)
		last := evs[len(evs)-1]
		if last.PodIP == "" || last.HostNode == "" {
			t.Errorf("no pod IP or host node: %+v", last)
		}
		// Both sidecars are stopped by their emissaries (the stubborn one
		// after the kill grace), before the runtime's fallback, and the pod
		// Succeeds.
		var pod *apiv1.Pod
		testutil.Eventually(t, sidecarStopWait+20*time.Second, "the sidecar's pod ended", func() error {
			p, err := c.CoreV1().Pods(ns).Get(ctx, "sidecar", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pod = p
			if p.Status.Phase == apiv1.PodSucceeded || p.Status.Phase == apiv1.PodFailed {
				return nil
			}
			return fmt.Errorf("pod still %s: %+v", p.Status.Phase, p.Status.ContainerStatuses)
		})
		for _, s := range pod.Status.ContainerStatuses {
			tm := s.State.Terminated
			if tm == nil || tm.ExitCode != 0 || s.Name != MainContainer && !strings.Contains(tm.Message, emissary.MsgSidecarStopped) {
				t.Errorf("container %s: %+v", s.Name, s.State)
			}
		}
		if pod.Status.Phase != apiv1.PodSucceeded {
			t.Errorf("pod %s (%s)", pod.Status.Phase, pod.Status.Reason)
		}
	})
	t.Run("containerSet: b reads what a wrote", func(t *testing.T) {
		evs := events.wait(t, set.ID, v1alpha1.NodeSucceeded, 90*time.Second)
		last := evs[len(evs)-1]
		if last.Outputs == nil || last.Outputs.Result == nil || *last.Outputs.Result != "written-by-a" ||
			len(last.Outputs.Parameters) != 1 || last.Outputs.Parameters[0].Value.String() != "written-by-a" {
			t.Fatalf("outputs %+v", last.Outputs)
		}
	})
	t.Run("containerSet: a failed dependency skips its dependents", func(t *testing.T) {
		evs := events.wait(t, setFail.ID, v1alpha1.NodeFailed, 90*time.Second)
		last := evs[len(evs)-1]
		if last.Message != "a: Error (exit code 2); skipped: b, main" || last.ExitCode == nil || *last.ExitCode != 2 {
			t.Fatalf("event %+v", last)
		}
		logs, err := c.CoreV1().Pods(ns).GetLogs("set-fail", &apiv1.PodLogOptions{Container: "a"}).DoRaw(ctx)
		if err != nil || strings.Count(string(logs), "retry 1 of 1") != 1 {
			t.Errorf("a's log (one retry): %q %v", logs, err)
		}
		for _, ctr := range []string{"b", "main"} {
			logs, _ := c.CoreV1().Pods(ns).GetLogs("set-fail", &apiv1.PodLogOptions{Container: ctr}).DoRaw(ctx)
			if strings.Contains(string(logs), "ran") {
				t.Errorf("%s ran: %q", ctr, logs)
			}
		}
	})
	t.Run("daemon: Running once ready, with its IP", func(t *testing.T) {
		evs := events.wait(t, daemon.ID, v1alpha1.NodeRunning, 90*time.Second)
		run := evs[len(evs)-1]
		pod, err := c.CoreV1().Pods(ns).Get(ctx, "daemon", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if run.PodIP == "" || run.PodIP != pod.Status.PodIP || run.HostNode != pod.Spec.NodeName || !podReady(pod) {
			t.Fatalf("running event %+v; pod IP %s node %s ready %v", run, pod.Status.PodIP, pod.Spec.NodeName, podReady(pod))
		}
		if d := run.StartedAt.Sub(pod.CreationTimestamp.Time); d < time.Second {
			t.Logf("started %v after creation", d)
		}
		client := newRun(t, ns, "client", `{name: client, container: {image: busybox:1.36, command: [wget, -qO-, "http://`+run.PodIP+`:8080/"]}}`)
		client.IncludeResult = true
		if err := rt.Start(ctx, client); err != nil {
			t.Fatal(err)
		}
		evs = events.wait(t, client.ID, v1alpha1.NodeSucceeded, 90*time.Second)
		if out := evs[len(evs)-1].Outputs; out == nil || out.Result == nil || *out.Result != "hi-from-daemon" {
			t.Fatalf("client outputs %+v", out)
		}
		if err := rt.Kill(ctx, daemon.ID); err != nil {
			t.Fatal(err)
		}
		evs = events.wait(t, daemon.ID, v1alpha1.NodeFailed, 10*time.Second)
		if evs[len(evs)-1].Message != MsgKilled {
			t.Fatalf("events %+v", evs)
		}
	})
}
