package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// startAdmissionManager runs a Manager with synchronization and
// parallelism configured, on a real store and runtime.
func startAdmissionManager(t *testing.T, dir string, a Admission) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := local.New(local.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Store: st, Runtime: rt, Admission: a})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.NewManager(st, func(string) engine.TemplateResolver { return nil })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; _ = rt.Close(); _ = st.Close() })
	return st
}

func testAdmission() Admission {
	return Admission{ConfigMapValue: func(ns, name, key string) (string, bool) {
		v, ok := map[string]string{"my-config/workflow": "1", "my-config/template": "1"}[name+"/"+key]
		return v, ok
	}}
}

// create stores a workflow whose one step appends "start <name>" and
// "end <name>" to marker around a short sleep.
func create(t *testing.T, st *sqlite.Store, name, specExtra, marker string) {
	t.Helper()
	wf := workflow(t, `
metadata: {name: `+name+`}
spec:
  entrypoint: main
`+specExtra+`
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, "echo start `+name+` >> `+marker+`; sleep 0.3; echo end `+name+` >> `+marker+`"]}
`)
	wf.CreationTimestamp.Time = time.Now()
	if err := st.Create(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
}

// waitMessage polls until a workflow shows a phase and a message.
func waitMessage(t *testing.T, st *sqlite.Store, name string, phase v1alpha1.WorkflowPhase, msg string) *v1alpha1.Workflow {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		obj, err := st.Get(context.Background(), store.KindWorkflow, "default", name)
		if err == nil {
			wf := obj.(*v1alpha1.Workflow)
			if wf.Status.Phase == phase && strings.Contains(wf.Status.Message, msg) {
				return wf
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is %s %q, want %s %q", name, wf.Status.Phase, wf.Status.Message, phase, msg)
			}
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runsOf reads the marker: the order in which the steps started and ended.
// It fails the test when two ran at once.
func runsOf(t *testing.T, marker string) []string {
	t.Helper()
	data, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	running := ""
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		what, name, _ := strings.Cut(line, " ")
		switch {
		case what == "start" && running != "":
			t.Fatalf("%s started while %s ran:\n%s", name, running, data)
		case what == "start":
			running = name
			order = append(order, name)
		case what == "end":
			running = ""
		}
	}
	return order
}

// Two workflows with the same workflow-level mutex: the second waits,
// Pending with Argo's message and its status.synchronization, then runs.
func TestWorkflowMutex(t *testing.T) {
	dir := t.TempDir()
	st := startAdmissionManager(t, dir, testAdmission())
	marker := filepath.Join(dir, "order.txt")
	const lock = "  synchronization: {mutexes: [{name: test}]}"
	create(t, st, "first", lock, marker)
	waitPhase(t, st, "first", v1alpha1.WorkflowRunning)
	create(t, st, "second", lock, marker)
	second := waitMessage(t, st, "second", v1alpha1.WorkflowPending, "Waiting for default/Mutex/test lock. Lock status: 0/1")
	if s := second.Status.Synchronization; s == nil || s.Mutex == nil || len(s.Mutex.Waiting) != 1 ||
		s.Mutex.Waiting[0].Mutex != "default/Mutex/test" || s.Mutex.Waiting[0].Holder != "default/first" {
		t.Errorf("second's synchronization %+v", s)
	}
	first := waitPhase(t, st, "first", v1alpha1.WorkflowSucceeded)
	if first.Status.Synchronization != nil {
		t.Errorf("first keeps its synchronization status %+v", first.Status.Synchronization)
	}
	done := waitPhase(t, st, "second", v1alpha1.WorkflowSucceeded)
	if done.Status.Message != "" {
		t.Errorf("second's message %q", done.Status.Message)
	}
	eq(t, runsOf(t, marker), []string{"first", "second"})
}

// parallelism 1: the second workflow is postponed, then runs; with
// several waiting, the higher priority goes first.
func TestParallelismAndPriority(t *testing.T) {
	dir := t.TempDir()
	a := testAdmission()
	a.Parallelism = 1
	st := startAdmissionManager(t, dir, a)
	marker := filepath.Join(dir, "order.txt")
	create(t, st, "one", "", marker)
	waitPhase(t, st, "one", v1alpha1.WorkflowRunning)
	create(t, st, "low", "  priority: 1", marker)
	waitMessage(t, st, "low", v1alpha1.WorkflowPending, throttledMessage)
	create(t, st, "high", "  priority: 5", marker)
	waitMessage(t, st, "high", v1alpha1.WorkflowPending, throttledMessage)
	for _, n := range []string{"one", "low", "high"} {
		waitPhase(t, st, n, v1alpha1.WorkflowSucceeded)
	}
	eq(t, runsOf(t, marker), []string{"one", "high", "low"})
}

// A semaphore whose ConfigMap key does not exist: the workflow waits with
// the reason; it does not fail.
func TestMissingConfigMapKeyWaits(t *testing.T) {
	dir := t.TempDir()
	st := startAdmissionManager(t, dir, testAdmission())
	create(t, st, "orphan", "  synchronization: {semaphores: [{configMapKeyRef: {name: my-config, key: nope}}]}", filepath.Join(dir, "order.txt"))
	waitMessage(t, st, "orphan", v1alpha1.WorkflowPending, "failed to get semaphore limit: config map my-config has no key nope")
	// A check that nothing happens: no event says so, so the test gives it
	// a moment (several passes' worth) to go wrong.
	time.Sleep(300 * time.Millisecond)
	waitMessage(t, st, "orphan", v1alpha1.WorkflowPending, "failed to get semaphore limit")
	if _, err := os.Stat(filepath.Join(dir, "order.txt")); err == nil {
		t.Error("the step ran")
	}
}

// A template-level semaphore of limit 1 over three parallel steps: one
// runs at a time, the others wait Pending with Argo's message.
func TestTemplateSemaphore(t *testing.T) {
	dir := t.TempDir()
	st := startAdmissionManager(t, dir, testAdmission())
	marker := filepath.Join(dir, "order.txt")
	wf := workflow(t, `
metadata: {name: tmpl}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: s, template: locked, arguments: {parameters: [{name: n, value: "{{item}}"}]}, withItems: [a, b, c]}
  - name: locked
    inputs: {parameters: [{name: n}]}
    synchronization:
      semaphores: [{configMapKeyRef: {name: my-config, key: template}}]
    container: {image: busybox, command: [sh, -c, "echo start {{inputs.parameters.n}} >> `+marker+`; sleep 0.2; echo end {{inputs.parameters.n}} >> `+marker+`"]}
`)
	if err := st.Create(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		obj, err := st.Get(context.Background(), store.KindWorkflow, "default", "tmpl")
		if err != nil {
			t.Fatal(err)
		}
		got := obj.(*v1alpha1.Workflow)
		waiting := 0
		for _, n := range got.Status.Nodes {
			if n.SynchronizationStatus != nil && n.Message == "Waiting for default/ConfigMap/my-config/template lock. Lock status: 0/1" {
				waiting++
			}
		}
		if waiting == 2 {
			if s := got.Status.Synchronization; s == nil || s.Semaphore == nil || len(s.Semaphore.Holding) != 1 {
				t.Errorf("synchronization %+v", s)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never two waiting: %s", got.Status.Phase)
		}
		time.Sleep(5 * time.Millisecond)
	}
	done := waitPhase(t, st, "tmpl", v1alpha1.WorkflowSucceeded)
	if done.Status.Synchronization != nil {
		t.Errorf("synchronization kept: %+v", done.Status.Synchronization)
	}
	if got := runsOf(t, marker); len(got) != 3 {
		t.Errorf("runs %q", got)
	}
}

func eq(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %q, want %q", got, want)
	}
}
