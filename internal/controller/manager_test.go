package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// startManager runs a Manager on a real store and runtime until the test ends.
func startManager(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	st, _ := startManagerAt(t, t.TempDir())
	return st, t.TempDir()
}

// waitPhase polls the store until the workflow reaches a phase.
func waitPhase(t *testing.T, st *sqlite.Store, name string, want v1alpha1.WorkflowPhase) *v1alpha1.Workflow {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		obj, err := st.Get(context.Background(), store.KindWorkflow, "default", name)
		if err == nil {
			wf := obj.(*v1alpha1.Workflow)
			if wf.Status.Phase == want {
				return wf
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is %s (%s), want %s", name, wf.Status.Phase, wf.Status.Message, want)
			}
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func nodeByDisplayName(wf *v1alpha1.Workflow, name string) v1alpha1.NodeStatus {
	for _, n := range wf.Status.Nodes {
		if n.DisplayName == name {
			return n
		}
	}
	return v1alpha1.NodeStatus{}
}

// Workflows written to the store by someone else (the API) are run, many
// at once, each to its own result.
func TestManagerRunsStoredWorkflows(t *testing.T) {
	st, _ := startManager(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, cmd string }{{"ok-1", "true"}, {"ok-2", "true"}, {"bad", "exit 2"}} {
		wf := workflow(t, `
metadata: {name: `+tc.name+`}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, "`+tc.cmd+`"]}
`)
		if err := st.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	waitPhase(t, st, "ok-1", v1alpha1.WorkflowSucceeded)
	waitPhase(t, st, "ok-2", v1alpha1.WorkflowSucceeded)
	bad := waitPhase(t, st, "bad", v1alpha1.WorkflowFailed)
	if n := bad.Status.Nodes[bad.Name]; !strings.Contains(n.Message, "exit code 2") {
		t.Errorf("bad's node message %q", n.Message)
	}
}

// A change to the stored spec reaches the running driver: suspend, then
// resume, then the workflow finishes.
func TestManagerFollowsStoredChanges(t *testing.T) {
	st, _ := startManager(t)
	ctx := context.Background()
	wf := workflow(t, `
metadata: {name: gate}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: wait, template: wait}
    - - {name: after, template: echo}
  - name: wait
    suspend: {}
  - name: echo
    container: {image: busybox, command: [echo, done]}
`)
	if err := st.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	var cur *v1alpha1.Workflow
	deadline := time.Now().Add(20 * time.Second)
	for {
		obj, err := st.Get(ctx, store.KindWorkflow, "default", "gate")
		if err != nil {
			t.Fatal(err)
		}
		cur = obj.(*v1alpha1.Workflow)
		if n := nodeByDisplayName(cur, "wait"); n.Phase == v1alpha1.NodeRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the suspend node never ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Resume the way the API does: the suspend node Succeeded, written with
	// the whole workflow under optimistic concurrency.
	for {
		n := nodeByDisplayName(cur, "wait")
		n.Phase = v1alpha1.NodeSucceeded
		cur.Status.Nodes[n.ID] = n
		err := st.Update(ctx, cur)
		if err == nil {
			break
		}
		obj, gerr := st.Get(ctx, store.KindWorkflow, "default", "gate")
		if gerr != nil {
			t.Fatal(err, gerr)
		}
		cur = obj.(*v1alpha1.Workflow)
	}
	done := waitPhase(t, st, "gate", v1alpha1.WorkflowSucceeded)
	if n := nodeByDisplayName(done, "after"); n.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("after is %s", n.Phase)
	}
}

// After a crash: a step persisted Pending but never started is launched
// and runs once; a step a previous process started and lost is Error with
// a message that says why; a completed step is not run again.
func TestManagerRecovers(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The first process: it persists the first reconcile of each workflow
	// and dies before starting any step.
	src := func(name string) *v1alpha1.Workflow {
		return workflow(t, `
metadata: {name: `+name+`}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, "echo `+name+` >> `+marker+`"]}
`)
	}
	fresh := src("never-started")
	fresh.UID = "uid-fresh"
	if err := st.Create(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	res, err := engine.Reconcile(engine.Snapshot{Workflow: fresh}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fresh.Status = res.Status
	if err := st.UpdateWorkflowStatus(ctx, fresh, res.Changed); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st2, _ := startManagerAt(t, dir)
	wf := waitPhase(t, st2, "never-started", v1alpha1.WorkflowSucceeded)
	if n := wf.Status.Nodes[wf.Name]; n.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("node %s: %s", n.Phase, n.Message)
	}
	data, _ := os.ReadFile(marker)
	if got := strings.Count(string(data), "never-started"); got != 1 {
		t.Fatalf("the step ran %d times, want 1", got)
	}
}

// startManagerAt runs a Manager on an existing data directory.
func startManagerAt(t *testing.T, dir string) (*sqlite.Store, *Manager) {
	t.Helper()
	c, st := newControllerAt(t, dir)
	return st, runManager(t, c, st, func(string) engine.TemplateResolver { return nil })
}

// runManager starts a Manager of c on st until the test ends.
func runManager(t *testing.T, c *Controller, st *sqlite.Store, templates Templates) *Manager {
	t.Helper()
	m, err := c.NewManager(st, templates)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return m
}

// A workflow that completes is copied into the store's archive.
func TestManagerArchives(t *testing.T) {
	st, _ := startManager(t)
	ctx := context.Background()
	wf := workflow(t, `
metadata: {name: archived}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, hi]}
`)
	if err := st.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	done := waitPhase(t, st, "archived", v1alpha1.WorkflowSucceeded)
	var got *v1alpha1.Workflow
	testutil.Eventually(t, 10*time.Second, "archived", func() (err error) {
		got, err = st.GetArchived(ctx, string(done.UID))
		return err
	})
	if got.Status.Phase != v1alpha1.WorkflowSucceeded || len(got.Status.Nodes) != 1 {
		t.Fatalf("archived %s with %d nodes", got.Status.Phase, len(got.Status.Nodes))
	}
}
