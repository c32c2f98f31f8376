package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// newPodLogs returns PodLogs on c's config, closed at the end of the test.
func newPodLogs(t *testing.T, c PodLogsConfig) *PodLogs {
	t.Helper()
	logs, err := NewPodLogs(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := logs.Close(); err != nil {
			t.Error(err)
		}
	})
	return logs
}

// readPodLog reads run's log through logs.
func readPodLog(t *testing.T, logs *PodLogs, run runtime.Run) string {
	t.Helper()
	f, err := logs.Open(context.Background(), run.Namespace, run.Workflow, run.PodName)
	if err != nil {
		t.Fatalf("Open the log of %s: %v", run.PodName, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// PodLogs reads a pod's work containers' logs through the API, keeps a
// finished pod's, and reads the shipped log once the pod is gone. The
// clientset is a fake: these are the API's answers, not a cluster's
// behaviour (TestKubeRuns and TestKubePodGC read real pods' logs).
func TestPodLogs(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(
		&apiv1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: "one"},
			Status: apiv1.PodStatus{Phase: apiv1.PodRunning}},
		&apiv1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: "set",
			Annotations: map[string]string{AnnotationContainers: "a,b"}},
			Status: apiv1.PodStatus{Phase: apiv1.PodSucceeded}})
	c.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
		if a.GetSubresource() != "log" {
			return false, nil, nil
		}
		opts, _ := a.(k8stesting.GenericAction).GetValue().(*apiv1.PodLogOptions)
		return true, &k8sruntime.Unknown{Raw: []byte(opts.Container + " says hi\n")}, nil
	})
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "k"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "k", "main.log"), []byte("shipped\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shipped := func(_ context.Context, ns, wf, pod string) (*v1alpha1.ArtifactLocation, error) {
		if pod != "gone" {
			return nil, fmt.Errorf("no pod %s/%s in %s", ns, pod, wf)
		}
		return &v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: "k/main.log"}}, nil
	}
	logs := newPodLogs(t, PodLogsConfig{Client: c, Artifacts: &artifact.Drivers{File: file.New(repo)}, Shipped: shipped})
	run := func(pod string) runtime.Run {
		r := runtime.Run{Namespace: "argo", Workflow: "wf"}
		r.PodName = pod
		return r
	}
	for pod, want := range map[string]string{"one": "main says hi\n", "set": "a says hi\nb says hi\n", "gone": "shipped\n"} {
		if got := readPodLog(t, logs, run(pod)); got != want {
			t.Errorf("log of %s = %q, want %q", pod, got, want)
		}
	}
	// A finished pod's log is fetched once: it is still served after the
	// pod is gone, rather than the shipped one.
	if err := c.CoreV1().Pods("argo").Delete(ctx, "set", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readPodLog(t, logs, run("set")); got != "a says hi\nb says hi\n" {
		t.Errorf("log of a finished pod, again = %q", got)
	}
	// No pod and nothing shipped: no log.
	if _, err := logs.Open(ctx, "argo", "wf", "nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a pod that never was = %v, want fs.ErrNotExist", err)
	}
	bare := newPodLogs(t, PodLogsConfig{Client: c})
	if _, err := bare.Open(ctx, "argo", "wf", "gone"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a gone pod with no repository = %v, want fs.ErrNotExist", err)
	}
}
