package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// kubeClient connects to the cluster of KUBECONFIG (make kube-up; make
// kube-images for braid:dev with this emissary), or skips.
func kubeClient(t *testing.T) (kubernetes.Interface, []byte) {
	t.Helper()
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		if os.Getenv("BRAID_REQUIRE_KUBE") == "1" {
			t.Fatal("KUBECONFIG is not set and BRAID_REQUIRE_KUBE=1")
		}
		t.Skip("KUBECONFIG is not set (make kube-up)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		ca, _ = os.ReadFile(cfg.CAFile)
	}
	return c, ca
}

// testNamespace creates a namespace with what pods need on the test node
// (the default ServiceAccount and kube-root-ca.crt), deleted after.
func testNamespace(t *testing.T, c kubernetes.Interface, ca []byte) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ns := "braid-rt-" + hex.EncodeToString(b)
	ctx := context.Background()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &apiv1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &apiv1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &apiv1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": string(ca)}}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		_ = c.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return ns
}

// collector gathers events by run.
type collector struct {
	mu  sync.Mutex
	evs map[string][]runtime.StepEvent
	at  map[string]time.Time // when the final event arrived
	cnd *sync.Cond
}

func collect(rt *Runtime) *collector {
	c := &collector{evs: map[string][]runtime.StepEvent{}, at: map[string]time.Time{}}
	c.cnd = sync.NewCond(&c.mu)
	go func() {
		for ev := range rt.Events() {
			now := time.Now()
			c.mu.Lock()
			c.evs[ev.RunID] = append(c.evs[ev.RunID], ev)
			if ev.Phase.Completed() {
				c.at[ev.RunID] = now
			}
			c.cnd.Broadcast()
			c.mu.Unlock()
		}
	}()
	return c
}

// wait returns the run's events once one has phase (or fails after d).
func (c *collector) wait(t *testing.T, runID string, phase v1alpha1.NodePhase, d time.Duration) []runtime.StepEvent {
	t.Helper()
	timer := time.AfterFunc(d, func() { c.mu.Lock(); c.cnd.Broadcast(); c.mu.Unlock() })
	defer timer.Stop()
	end := time.Now().Add(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		evs := c.evs[runID]
		if slices.ContainsFunc(evs, func(e runtime.StepEvent) bool { return e.Phase == phase }) {
			return slices.Clone(evs)
		}
		if time.Now().After(end) {
			t.Fatalf("run %s: no %s event within %v; events %+v", runID, phase, d, evs)
		}
		c.cnd.Wait()
	}
}

func newRun(t *testing.T, ns, name, tmpl string) runtime.Run {
	id := "uid-" + ns + "-" + name
	return runtime.Run{ID: id, Namespace: ns, Workflow: "wf",
		Launch: step.Launch{NodeID: name, PodName: name, Template: mustTemplate(t, tmpl),
			Env: map[string]string{"ARGO_NODE_NAME": name}}}
}

func newRuntime(t *testing.T, c kubernetes.Interface, ns string) *Runtime {
	rt, err := New(Config{Client: c, Namespace: ns, PullWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func TestKubeRuns(t *testing.T) {
	c, ca := kubeClient(t)
	ns := testNamespace(t, c, ca)
	rt := newRuntime(t, c, ns)
	events := collect(rt)
	ctx := context.Background()

	ok := newRun(t, ns, "ok", `
name: ok
script:
  image: busybox:1.36
  command: [sh]
  source: |
    echo -n param-value > /tmp/p
    echo hello from the pod
outputs: {parameters: [{name: p, valueFrom: {path: /tmp/p}}]}`)
	ok.IncludeResult = true
	fail := newRun(t, ns, "fail", `{name: fail, container: {image: "busybox:1.36", command: [sh, -c, "exit 3"]}}`)
	absent := newRun(t, ns, "absent", `{name: absent, container: {image: "braid-test/absent:1", imagePullPolicy: Never, command: ["true"]}}`)
	sleeper := newRun(t, ns, "sleeper", `{name: sleeper, container: {image: "busybox:1.36", command: [sleep, "300"]}}`)
	for _, r := range []runtime.Run{ok, fail, absent, sleeper} {
		if err := rt.Start(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := rt.Start(ctx, r); err != nil { // idempotent
			t.Fatal(err)
		}
	}

	t.Run("succeeded with outputs", func(t *testing.T) {
		evs := events.wait(t, ok.ID, v1alpha1.NodeSucceeded, 60*time.Second)
		if evs[0].Phase != v1alpha1.NodeRunning && len(evs) != 1 {
			t.Errorf("events %+v", evs)
		}
		last := evs[len(evs)-1]
		if last.Outputs == nil || last.Outputs.Result == nil || *last.Outputs.Result != "hello from the pod" ||
			len(last.Outputs.Parameters) != 1 || last.Outputs.Parameters[0].Value.String() != "param-value" {
			t.Fatalf("outputs %+v", last.Outputs)
		}
		logs := newPodLogs(t, PodLogsConfig{Client: c})
		if data := readPodLog(t, logs, ok); !strings.Contains(data, "hello from the pod") {
			t.Errorf("logs = %q", data)
		}
	})
	t.Run("exit 3", func(t *testing.T) {
		evs := events.wait(t, fail.ID, v1alpha1.NodeFailed, 60*time.Second)
		last := evs[len(evs)-1]
		if last.ExitCode == nil || *last.ExitCode != 3 || last.Message != "main: Error (exit code 3)" {
			t.Fatalf("event %+v", last)
		}
	})
	t.Run("image not present", func(t *testing.T) {
		start := time.Now()
		evs := events.wait(t, absent.ID, v1alpha1.NodeError, 30*time.Second)
		last := evs[len(evs)-1]
		if !strings.Contains(last.Message, "image braid-test/absent:1 is not present") {
			t.Fatalf("event %+v", last)
		}
		t.Logf("missing image reported after %v", time.Since(start))
	})
	t.Run("kill", func(t *testing.T) {
		events.wait(t, sleeper.ID, v1alpha1.NodeRunning, 60*time.Second)
		if err := rt.Kill(ctx, sleeper.ID); err != nil {
			t.Fatal(err)
		}
		evs := events.wait(t, sleeper.ID, v1alpha1.NodeFailed, 5*time.Second)
		if last := evs[len(evs)-1]; last.Message != MsgKilled {
			t.Fatalf("event %+v", last)
		}
		if len(evs) != 2 {
			t.Errorf("events after kill %+v", evs)
		}
	})
	t.Run("status after a restart", func(t *testing.T) {
		rt2 := newRuntime(t, c, ns)
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		ev, known, err := rt2.Status(sctx, ok.ID)
		if err != nil || !known || ev.Phase != v1alpha1.NodeSucceeded || ev.Outputs == nil || *ev.Outputs.Result != "hello from the pod" {
			t.Fatalf("status = %+v %v %v", ev, known, err)
		}
		ev, known, err = rt2.Status(sctx, fail.ID)
		if err != nil || !known || ev.Phase != v1alpha1.NodeFailed || *ev.ExitCode != 3 {
			t.Fatalf("status = %+v %v %v", ev, known, err)
		}
		if _, known, _ := rt2.Status(sctx, "never-started"); known {
			t.Fatal("an unknown run is known")
		}
		if err := rt2.Start(sctx, ok); err != nil { // the pod exists: nothing happens
			t.Fatal(err)
		}
	})
	t.Run("pod deleted", func(t *testing.T) {
		gone := newRun(t, ns, "gone", `{name: gone, container: {image: "busybox:1.36", command: [sleep, "300"]}}`)
		if err := rt.Start(ctx, gone); err != nil {
			t.Fatal(err)
		}
		events.wait(t, gone.ID, v1alpha1.NodeRunning, 60*time.Second)
		zero := int64(0)
		if err := c.CoreV1().Pods(ns).Delete(ctx, "gone", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		evs := events.wait(t, gone.ID, v1alpha1.NodeError, 30*time.Second)
		if last := evs[len(evs)-1]; last.Message != MsgPodDeleted && !strings.Contains(last.Message, "without a result") {
			t.Fatalf("event %+v", last)
		}
	})
}

// TestKubeEventLatency measures the time from the main container's end
// (the emissary's finishedAt) to the runtime's final event.
func TestKubeEventLatency(t *testing.T) {
	c, ca := kubeClient(t)
	ns := testNamespace(t, c, ca)
	rt := newRuntime(t, c, ns)
	events := collect(rt)
	ctx := context.Background()
	// A watch of its own sees when the apiserver has the main container's
	// end, to split the kubelet's share from the runtime's.
	seen := sync.Map{}
	w, err := c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		for e := range w.ResultChan() {
			if p, ok := e.Object.(*apiv1.Pod); ok {
				if m := containerStatus(p.Status.ContainerStatuses, MainContainer); m != nil && m.State.Terminated != nil {
					seen.LoadOrStore(p.Annotations[AnnotationRunID], time.Now())
				}
			}
		}
	}()
	var lat, inf []time.Duration
	for batch := 0; batch < 4; batch++ {
		var runs []runtime.Run
		for i := 0; i < 5; i++ {
			name := "lat-" + string(rune('a'+batch)) + string(rune('a'+i))
			r := newRun(t, ns, name, `{name: l, container: {image: "busybox:1.36", command: ["true"]}}`)
			if err := rt.Start(ctx, r); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, r)
		}
		for _, r := range runs {
			evs := events.wait(t, r.ID, v1alpha1.NodeSucceeded, 60*time.Second)
			last := evs[len(evs)-1]
			events.mu.Lock()
			at := events.at[r.ID]
			events.mu.Unlock()
			lat = append(lat, at.Sub(last.FinishedAt))
			if v, ok := seen.Load(r.ID); ok {
				inf = append(inf, at.Sub(v.(time.Time)))
			}
		}
	}
	slices.Sort(lat)
	slices.Sort(inf)
	t.Logf("main container end -> StepEvent over %d pods: median %v, min %v, max %v", len(lat), lat[len(lat)/2], lat[0], lat[len(lat)-1])
	if len(inf) > 0 {
		t.Logf("terminated status seen by a plain watch -> StepEvent over %d pods: median %v, max %v", len(inf), inf[len(inf)/2], inf[len(inf)-1])
	}
}
