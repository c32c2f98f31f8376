package controller

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// newController wires a real SQLite store and a real local runtime.
func newController(t *testing.T) (*Controller, *sqlite.Store) {
	t.Helper()
	return newControllerAt(t, t.TempDir())
}

// newControllerAt wires them on an existing data directory.
func newControllerAt(t *testing.T, dir string) (*Controller, *sqlite.Store) {
	t.Helper()
	st, rt := openStoreAndRuntime(t, dir)
	c, err := New(Options{Store: st, Runtime: rt, Archive: st})
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

// openStoreAndRuntime opens a real SQLite store and a real local runtime
// on dir, closed when the test ends.
func openStoreAndRuntime(t *testing.T, dir string) (*sqlite.Store, *local.Runtime) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), dir+"/braid.db", sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := local.New(local.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(); _ = st.Close() })
	return st, rt
}

func workflow(t *testing.T, src string) *v1alpha1.Workflow {
	t.Helper()
	wf := &v1alpha1.Workflow{}
	if err := yaml.UnmarshalStrict([]byte(src), wf); err != nil {
		t.Fatal(err)
	}
	wf.Namespace = "default"
	return wf
}

// What the controller persisted, node by node, is what it ended with: every
// node the engine changed was written, and only through the status path.
func TestRunPersistsEveryChange(t *testing.T) {
	c, st := newController(t)
	wf := workflow(t, `
metadata: {name: persist}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: echo}
      - {name: b, template: echo, depends: a}
      - {name: c, template: fail, depends: a}
      - {name: d, template: echo, depends: "b && c.Failed"}
  - name: echo
    container: {image: busybox, command: [echo, hi]}
  - name: fail
    container: {image: busybox, command: [sh, -c, "exit 3"]}
`)
	var observed int
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	final, err := c.Run(ctx, RunRequest{Workflow: wf, Observe: func(*v1alpha1.Workflow, []string) { observed++ }})
	if err != nil {
		t.Fatal(err)
	}
	if final.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("phase %s: %s", final.Status.Phase, final.Status.Message)
	}
	if final.Labels["workflows.argoproj.io/phase"] != "Succeeded" || final.Labels["workflows.argoproj.io/completed"] != "true" {
		t.Fatalf("labels %v", final.Labels)
	}
	obj, err := st.Get(ctx, store.KindWorkflow, "default", "persist")
	if err != nil {
		t.Fatal(err)
	}
	stored := obj.(*v1alpha1.Workflow)
	if stored.Status.Phase != final.Status.Phase || len(stored.Status.Nodes) != len(final.Status.Nodes) {
		t.Fatalf("stored %s with %d nodes, ran %s with %d", stored.Status.Phase, len(stored.Status.Nodes), final.Status.Phase, len(final.Status.Nodes))
	}
	for id, n := range final.Status.Nodes {
		s := stored.Status.Nodes[id]
		if s.Phase != n.Phase || s.Message != n.Message || len(s.Children) != len(n.Children) {
			t.Errorf("node %s: stored %s %q %v, ran %s %q %v", n.Name, s.Phase, s.Message, s.Children, n.Phase, n.Message, n.Children)
		}
	}
	if observed == 0 {
		t.Error("the observer was never called")
	}
}

// A shutdown request reaches the spec, is persisted with it, and stops the run.
func TestRunShutdown(t *testing.T) {
	c, st := newController(t)
	wf := workflow(t, `
metadata: {name: stop}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [sleep, "30"]}
`)
	shutdown := make(chan v1alpha1.ShutdownStrategy, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	started := false
	observe := func(w *v1alpha1.Workflow, _ []string) {
		for _, n := range w.Status.Nodes {
			if n.Phase == v1alpha1.NodeRunning && !started {
				started = true
				shutdown <- v1alpha1.ShutdownTerminate
			}
		}
	}
	final, err := c.Run(ctx, RunRequest{Workflow: wf, Observe: observe, Shutdown: shutdown})
	if err != nil {
		t.Fatal(err)
	}
	if final.Status.Phase != v1alpha1.WorkflowFailed || final.Status.Message != "Stopped with strategy 'Terminate'" {
		t.Fatalf("phase %s: %q", final.Status.Phase, final.Status.Message)
	}
	obj, err := st.Get(ctx, store.KindWorkflow, "default", "stop")
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*v1alpha1.Workflow).Spec.Shutdown; got != v1alpha1.ShutdownTerminate {
		t.Fatalf("stored spec.shutdown = %q", got)
	}
}

// A workflow that starts is annotated with its pod name format (v2), as
// Argo's controller does, and the annotation is stored; one already there
// is kept.
func TestRunAnnotatesPodNameFormat(t *testing.T) {
	tests := []struct{ name, annotations, want string }{
		{name: "podname-new", want: "v2"},
		{name: "podname-kept", annotations: `annotations: {workflows.argoproj.io/pod-name-format: v1}`, want: "v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, st := newController(t)
			wf := workflow(t, `
metadata: {name: `+tt.name+`, `+tt.annotations+`}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, hi]}
`)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			final, err := c.Run(ctx, RunRequest{Workflow: wf})
			if err != nil {
				t.Fatal(err)
			}
			obj, err := st.Get(ctx, store.KindWorkflow, "default", tt.name)
			if err != nil {
				t.Fatal(err)
			}
			for what, got := range map[string]string{
				"returned": final.Annotations[podNameFormatAnnotation],
				"stored":   obj.(*v1alpha1.Workflow).Annotations[podNameFormatAnnotation],
			} {
				if got != tt.want {
					t.Errorf("%s annotation %q, want %q", what, got, tt.want)
				}
			}
		})
	}
}
