package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// waitPodGone waits until the pod is deleted, or fails after d.
func waitPodGone(t *testing.T, c kubernetes.Interface, ns, name string, d time.Duration) {
	t.Helper()
	start := time.Now()
	testutil.Eventually(t, d, "pod "+ns+"/"+name+" deleted", func() error {
		_, err := c.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (err %v)", err)
	})
	t.Logf("pod %s gone after %v", name, time.Since(start).Round(time.Millisecond))
}

// podExists reports whether the pod is there and no one asked to delete it.
func podExists(t *testing.T, c kubernetes.Interface, ns, name string) bool {
	t.Helper()
	pod, err := c.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil && pod.DeletionTimestamp == nil
}

// Pod GC on a real node: OnPodCompletion deletes a pod once its result is
// reported, the runtime still answers Status for it and PodLogs reads the
// log it shipped; OnPodSuccess keeps a failed pod; the OnWorkflow
// strategies wait for WorkflowCompleted.
func TestKubePodGC(t *testing.T) {
	c, ca := kubeClient(t)
	ns := testNamespace(t, c, ca)
	repo := t.TempDir()
	rt, err := New(Config{Client: c, Namespace: ns, PullWait: 5 * time.Second,
		Artifacts: &artifact.Drivers{File: file.New(repo)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	events := collect(rt)
	ctx := context.Background()

	withGC := func(name, cmd, gc string) runtime.Run {
		r := newRun(t, ns, name, `
name: `+name+`
container: {image: busybox:1.36, command: [sh, -c, "`+cmd+`"]}
`)
		r.Spec = mustSpec(t, "podGC: "+gc)
		return r
	}
	onPod := withGC("on-pod", "echo from-the-pod", "{strategy: OnPodCompletion}")
	success := withGC("success", "exit 3", "{strategy: OnPodSuccess}")
	onWf := withGC("on-wf", "echo ok", "{strategy: OnWorkflowCompletion, deleteDelayDuration: 1s}")
	onWfSuccess := withGC("on-wf-success", "echo ok", "{strategy: OnWorkflowSuccess}")
	other := withGC("other", "echo ok", "{strategy: OnPodCompletion, labelSelector: {matchLabels: {gc: please}}}")
	for _, r := range []runtime.Run{onPod, success, onWf, onWfSuccess, other} {
		if err := rt.Start(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	events.wait(t, onPod.ID, v1alpha1.NodeSucceeded, 2*time.Minute)
	waitPodGone(t, c, ns, onPod.PodName, 30*time.Second)
	ev, known, err := rt.Status(ctx, onPod.ID)
	if err != nil || !known || ev.Phase != v1alpha1.NodeSucceeded {
		t.Errorf("Status after GC = %+v, %v, %v; want the Succeeded result", ev, known, err)
	}
	// The log the emissary ships (with a repository that pods reach) is
	// read once the pod is gone: stand in for that shipping here.
	if err := os.MkdirAll(filepath.Join(repo, "k"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "k", "main.log"), []byte("from-the-pod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shipped := func(_ context.Context, ns, wf, pod string) (*v1alpha1.ArtifactLocation, error) {
		if ns != onPod.Namespace || wf != onPod.Workflow || pod != onPod.PodName {
			return nil, fmt.Errorf("no shipped log for %s/%s/%s", ns, wf, pod)
		}
		return &v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: "k/main.log"}}, nil
	}
	logs := newPodLogs(t, PodLogsConfig{Client: c, Artifacts: rt.cfg.Artifacts, Shipped: shipped})
	if data := readPodLog(t, logs, onPod); data != "from-the-pod\n" {
		t.Errorf("log after GC = %q", data)
	}

	for _, run := range []runtime.Run{success, onWf, onWfSuccess, other} {
		want := v1alpha1.NodeSucceeded
		if run.ID == success.ID {
			want = v1alpha1.NodeFailed
		}
		events.wait(t, run.ID, want, 2*time.Minute)
	}
	// A negative check, so a wait: nothing tells that a pod was not
	// collected. collectPod decided with each final event above; a wrong
	// decision's delete call would have marked the pod within this time.
	time.Sleep(2 * time.Second)
	for _, run := range []runtime.Run{success, onWf, onWfSuccess, other} {
		if !podExists(t, c, ns, run.PodName) {
			t.Errorf("pod %s deleted before WorkflowCompleted", run.PodName)
		}
	}
	wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: ns}}
	wf.Spec.PodGC = &v1alpha1.PodGC{Strategy: v1alpha1.PodGCOnWorkflowCompletion}
	wf.Status.Phase = v1alpha1.WorkflowFailed
	if err := workflowCompleted(ctx, rt, wf); err != nil {
		t.Fatal(err)
	}
	if !podExists(t, c, ns, onWf.PodName) {
		t.Errorf("pod %s deleted before its deleteDelayDuration", onWf.PodName)
	}
	// The delete of on-wf came deleteDelayDuration (1 s) after
	// WorkflowCompleted; one of another pod, at once, would have marked it
	// by the time on-wf is gone.
	waitPodGone(t, c, ns, onWf.PodName, 30*time.Second)
	for _, run := range []runtime.Run{success, onWfSuccess, other} {
		if !podExists(t, c, ns, run.PodName) {
			t.Errorf("pod %s deleted at the end of a failed workflow", run.PodName)
		}
	}
	wf.Status.Phase = v1alpha1.WorkflowSucceeded
	if err := workflowCompleted(ctx, rt, wf); err != nil {
		t.Fatal(err)
	}
	waitPodGone(t, c, ns, onWfSuccess.PodName, 30*time.Second)
	if !podExists(t, c, ns, success.PodName) || !podExists(t, c, ns, other.PodName) {
		t.Error("a pod that is not OnWorkflow* collected, or not selected, was deleted")
	}
}
