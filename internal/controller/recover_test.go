package controller

import (
	"context"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// A panic in a reconcile ends that workflow Error, through the normal
// write path, with its steps in flight ended too; it is counted, and the
// other workflows go on. The panic is injected by the one test hook: the
// engine cannot be made to panic on demand.
func TestReconcilePanicFailsOnlyThatWorkflow(t *testing.T) {
	for _, tc := range []struct {
		name string
		// when says in which pass the panic comes.
		when func(wf *v1alpha1.Workflow) bool
		// node is the node that must end Error with the message ("" none).
		node string
	}{
		{name: "first-pass", when: func(wf *v1alpha1.Workflow) bool { return true }},
		{name: "step-in-flight", when: func(wf *v1alpha1.Workflow) bool { return len(wf.Status.Nodes) > 0 }, node: "step-in-flight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, st := newController(t)
			c.faults.beforeReconcile = func(wf *v1alpha1.Workflow) {
				if wf.Name == tc.name && tc.when(wf) {
					panic("kaboom")
				}
			}
			m := runManager(t, c, st, func(string) engine.TemplateResolver { return nil })
			ctx := context.Background()
			for _, name := range []string{tc.name, "bystander"} {
				if err := st.Create(ctx, workflow(t, `
metadata: {name: `+name+`}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, "sleep 0.5"]}
`)); err != nil {
					t.Fatal(err)
				}
			}
			const want = "internal error: reconcile panicked: kaboom"
			wf := waitPhase(t, st, tc.name, v1alpha1.WorkflowError)
			if wf.Status.Message != want || wf.Status.FinishedAt.IsZero() {
				t.Errorf("message %q, finishedAt %v; want %q", wf.Status.Message, wf.Status.FinishedAt, want)
			}
			if wf.Labels["workflows.argoproj.io/completed"] != "true" {
				t.Errorf("labels %v", wf.Labels)
			}
			if tc.node != "" {
				if n := wf.Status.Nodes[wf.Name]; n.Phase != v1alpha1.NodeError || n.Message != want {
					t.Errorf("node %s %q, want Error %q", n.Phase, n.Message, want)
				}
			}
			waitPhase(t, st, "bystander", v1alpha1.WorkflowSucceeded)
			if got := c.Panics(); got != 1 {
				t.Errorf("Panics() = %d, want 1", got)
			}
			if err := m.Ready(); err != nil {
				t.Errorf("Ready: %v", err)
			}
		})
	}
}

// braid run (Controller.Run, no Manager) ends the workflow Error too, and
// returns it rather than an error.
func TestRunPanicEndsError(t *testing.T) {
	c, _ := newController(t)
	c.faults.beforeReconcile = func(*v1alpha1.Workflow) { panic("kaboom") }
	wf := workflow(t, `
metadata: {name: run-panics, uid: uid-run-panics}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, hi]}
`)
	final, err := c.Run(context.Background(), RunRequest{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
	if final.Status.Phase != v1alpha1.WorkflowError || !strings.Contains(final.Status.Message, "reconcile panicked: kaboom") {
		t.Fatalf("%s %q", final.Status.Phase, final.Status.Message)
	}
}

// panickyRuntime is the real local runtime, except that starting a step of
// the workflow "starter" panics: a bug outside the engine, at the driver's
// own boundary.
type panickyRuntime struct{ *local.Runtime }

func (p panickyRuntime) Start(ctx context.Context, run runtime.Run) error {
	if run.Workflow == "starter" {
		panic("a bug in a runtime")
	}
	return p.Runtime.Start(ctx, run)
}

// A panic in a Manager's driver outside the engine ends that workflow
// Error from its stored state; the Manager and the others go on.
func TestDriverPanicFailsOnlyThatWorkflow(t *testing.T) {
	dir := t.TempDir()
	st, rt := openStoreAndRuntime(t, dir)
	c, err := New(Options{Store: st, Runtime: panickyRuntime{rt}})
	if err != nil {
		t.Fatal(err)
	}
	runManager(t, c, st, func(string) engine.TemplateResolver { return nil })
	for _, name := range []string{"starter", "bystander"} {
		if err := st.Create(context.Background(), workflow(t, `
metadata: {name: `+name+`}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, hi]}
`)); err != nil {
			t.Fatal(err)
		}
	}
	wf := waitPhase(t, st, "starter", v1alpha1.WorkflowError)
	if want := "internal error: driver panicked: a bug in a runtime"; wf.Status.Message != want {
		t.Errorf("message %q, want %q", wf.Status.Message, want)
	}
	if n := wf.Status.Nodes[wf.Name]; n.Phase != v1alpha1.NodeError {
		t.Errorf("node %s, want Error", n.Phase)
	}
	waitPhase(t, st, "bystander", v1alpha1.WorkflowSucceeded)
	if got := c.Panics(); got != 1 {
		t.Errorf("Panics() = %d, want 1", got)
	}
}
