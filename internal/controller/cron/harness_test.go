package cron

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// t0 is where the fake clock starts: 30 seconds past a minute.
var t0 = time.Date(2030, 1, 7, 10, 0, 30, 0, time.UTC)

// harness is a real SQLite store, a fake clock and a scheduler on them
// that the test starts and stops.
type harness struct {
	t     *testing.T
	st    *sqlite.Store
	clock *FakeClock
	sched *Scheduler
	stop  func()
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	clock := NewFakeClock(t0)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, st: st, clock: clock}
	t.Cleanup(func() {
		if h.stop != nil {
			h.stop()
		}
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

// start runs a new scheduler on the store (as a server start does) and
// waits until it has listed everything.
func (h *harness) start() {
	h.t.Helper()
	s, err := New(Options{Store: h.st, Clock: h.clock, Local: time.UTC})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	h.sched = s
	h.stop = func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("scheduler: %v", err)
		}
		h.stop = nil
	}
	h.sync()
}

// sync waits until the scheduler has handled everything so far.
func (h *harness) sync() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.sched.Sync(ctx); err != nil {
		h.t.Fatalf("sync: %v", err)
	}
}

// advance moves the clock and waits for the scheduler.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.clock.Advance(d)
	h.sync()
}

func (h *harness) createCron(doc string) *v1alpha1.CronWorkflow {
	h.t.Helper()
	cw := &v1alpha1.CronWorkflow{}
	if err := yaml.Unmarshal([]byte(doc), cw); err != nil {
		h.t.Fatal(err)
	}
	cw.APIVersion, cw.Kind = v1alpha1.APIVersion, "CronWorkflow"
	if cw.Namespace == "" {
		cw.Namespace = "default"
	}
	if err := h.st.Create(context.Background(), cw); err != nil {
		h.t.Fatal(err)
	}
	if h.sched != nil {
		h.sync()
	}
	return cw
}

func (h *harness) create(obj store.Object) {
	h.t.Helper()
	if err := h.st.Create(context.Background(), obj); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) cron(name string) *v1alpha1.CronWorkflow {
	h.t.Helper()
	o, err := h.st.Get(context.Background(), store.KindCronWorkflow, "default", name)
	if err != nil {
		h.t.Fatal(err)
	}
	return o.(*v1alpha1.CronWorkflow)
}

func (h *harness) workflow(name string) *v1alpha1.Workflow {
	h.t.Helper()
	o, err := h.st.Get(context.Background(), store.KindWorkflow, "default", name)
	if err != nil {
		h.t.Fatal(err)
	}
	return o.(*v1alpha1.Workflow)
}

// runs lists the names of the workflows created by the cron, sorted.
func (h *harness) runs(cron string) []string {
	h.t.Helper()
	objs, _, err := h.st.List(context.Background(), store.KindWorkflow, "default",
		store.ListOptions{LabelSelector: spec.LabelCronWorkflow + "=" + cron})
	if err != nil {
		h.t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	slices.Sort(names)
	return names
}

// finish ends a workflow in phase as the controller would, and waits for
// the scheduler to see it.
func (h *harness) finish(name string, phase v1alpha1.WorkflowPhase) {
	h.t.Helper()
	wf := h.workflow(name)
	wf.Status.Phase = phase
	wf.Status.FinishedAt = metav1.NewTime(h.clock.Now())
	if err := h.st.Update(context.Background(), wf); err != nil {
		h.t.Fatal(err)
	}
	h.sync()
}

// runName is the name of the run of cron at the wall time hh:mm on t0's day.
func runName(cron string, hh, mm int) string {
	return spec.CronRunName(cron, time.Date(t0.Year(), t0.Month(), t0.Day(), hh, mm, 0, 0, time.UTC))
}

func names(s ...string) []string {
	slices.Sort(s)
	return s
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

func notFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// cronYAML is a CronWorkflow named name with the extra spec lines.
func cronYAML(name, extra string) string {
	return `metadata: {name: ` + name + `}
spec:
` + extra + `
  workflowSpec:
    entrypoint: main
    templates:
    - name: main
      container: {image: busybox, command: [echo, "{{workflow.scheduledTime}}"]}
`
}

func cronContainer() *apiv1.Container {
	return &apiv1.Container{Image: "busybox", Command: []string{"echo", "hi"}}
}
