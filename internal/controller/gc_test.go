package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// fakeClock is a clock the test moves by hand; WakeAt channels fire when
// it reaches their time.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{now: t} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) WakeAt(t time.Time) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(f.now) {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, fakeWaiter{at: t, ch: ch})
	return ch
}

// Set moves the clock to t and fires every waiter that is due.
func (f *fakeClock) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t
	keep := f.waiters[:0]
	for _, w := range f.waiters {
		if w.at.After(t) {
			keep = append(keep, w)
			continue
		}
		w.ch <- t
	}
	f.waiters = keep
}

// startGCManager runs a Manager on a fresh data directory (or dir, holding
// a store already) with a fake clock and a retention policy.
func startGCManager(t *testing.T, dir string, clock *fakeClock, r Retention) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	st, rt := openStoreAndRuntime(t, dir)
	c, err := New(Options{Store: st, Runtime: rt, Archive: st, Clock: clock.Now, WakeAt: clock.WakeAt, Retention: r})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.NewManager(st, func(string) engine.TemplateResolver { return nil })
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = m.Run(mctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return st
}

// waitGone waits until the workflow has left the live store, then checks
// that the archive still holds it, nodes included.
func waitGone(t *testing.T, st *sqlite.Store, wf *v1alpha1.Workflow) {
	t.Helper()
	ctx := context.Background()
	testutil.Eventually(t, 10*time.Second, wf.Name+" gone from the live store", func() error {
		if _, err := st.Get(ctx, store.KindWorkflow, wf.Namespace, wf.Name); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("still live (%v)", err)
		}
		return nil
	})
	got, err := st.GetArchived(ctx, string(wf.UID))
	if err != nil {
		t.Fatalf("%s was deleted but is not archived: %v", wf.Name, err)
	}
	if len(got.Status.Nodes) != len(wf.Status.Nodes) || got.Status.Phase != wf.Status.Phase {
		t.Fatalf("%s archived %s with %d nodes, want %s with %d", wf.Name, got.Status.Phase, len(got.Status.Nodes), wf.Status.Phase, len(wf.Status.Nodes))
	}
}

// assertStays checks that the workflow is still live a moment later: a
// check that nothing happens, which no event can signal, so it waits.
func assertStays(t *testing.T, st *sqlite.Store, names ...string) {
	t.Helper()
	time.Sleep(150 * time.Millisecond)
	for _, n := range names {
		if _, err := st.Get(context.Background(), store.KindWorkflow, "default", n); err != nil {
			t.Errorf("%s should still be live: %v", n, err)
		}
	}
}

func int32p(v int32) *int32 { return &v }

func TestTTL(t *testing.T) {
	finished := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name   string
		phase  v1alpha1.WorkflowPhase
		spec   *v1alpha1.TTLStrategy
		stored *v1alpha1.TTLStrategy
		want   time.Duration
		has    bool
	}{
		{"none", v1alpha1.WorkflowSucceeded, nil, nil, 0, false},
		{"completion", v1alpha1.WorkflowSucceeded, &v1alpha1.TTLStrategy{SecondsAfterCompletion: int32p(5)}, nil, 5 * time.Second, true},
		{"success wins", v1alpha1.WorkflowSucceeded, &v1alpha1.TTLStrategy{SecondsAfterCompletion: int32p(5), SecondsAfterSuccess: int32p(9)}, nil, 9 * time.Second, true},
		{"success does not apply to a failure", v1alpha1.WorkflowFailed, &v1alpha1.TTLStrategy{SecondsAfterCompletion: int32p(5), SecondsAfterSuccess: int32p(9)}, nil, 5 * time.Second, true},
		{"failure wins", v1alpha1.WorkflowFailed, &v1alpha1.TTLStrategy{SecondsAfterCompletion: int32p(5), SecondsAfterFailure: int32p(7)}, nil, 7 * time.Second, true},
		{"error is a failure", v1alpha1.WorkflowError, &v1alpha1.TTLStrategy{SecondsAfterFailure: int32p(7)}, nil, 7 * time.Second, true},
		{"failure only, succeeded", v1alpha1.WorkflowSucceeded, &v1alpha1.TTLStrategy{SecondsAfterFailure: int32p(7)}, nil, 0, false},
		{"zero", v1alpha1.WorkflowSucceeded, &v1alpha1.TTLStrategy{SecondsAfterSuccess: int32p(0)}, nil, 0, true},
		{"not completed", v1alpha1.WorkflowRunning, &v1alpha1.TTLStrategy{SecondsAfterCompletion: int32p(5)}, nil, 0, false},
		{"from the workflow template", v1alpha1.WorkflowSucceeded, nil, &v1alpha1.TTLStrategy{SecondsAfterCompletion: int32p(3)}, 3 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wf := &v1alpha1.Workflow{}
			wf.Spec.TTLStrategy = tc.spec
			if tc.stored != nil { // a workflow made from a template runs its stored spec
				wf.Spec.WorkflowTemplateRef = &v1alpha1.WorkflowTemplateRef{Name: "t"}
				wf.Status.StoredWorkflowSpec = &v1alpha1.WorkflowSpec{TTLStrategy: tc.stored}
			}
			wf.Status.Phase, wf.Status.FinishedAt = tc.phase, finished
			got, has := TTL(wf)
			if got != tc.want || has != tc.has {
				t.Errorf("TTL = %v, %v; want %v, %v", got, has, tc.want, tc.has)
			}
		})
	}
}

// Workflows that complete under the Manager leave the live store when
// their TTL has passed on the clock, each by the rule for its outcome, and
// stay in the archive; a workflow without a TTL stays.
func TestManagerTTL(t *testing.T) {
	clock := newFakeClock(time.Now())
	st := startGCManager(t, t.TempDir(), clock, Retention{})
	ctx := context.Background()
	cases := []struct {
		name, cmd, ttl string
		want           time.Duration
	}{
		{"success", "true", "{secondsAfterCompletion: 100, secondsAfterSuccess: 10}", 10 * time.Second},
		{"failure-completion", "exit 1", "{secondsAfterCompletion: 100, secondsAfterSuccess: 10}", 100 * time.Second},
		{"failure", "exit 1", "{secondsAfterFailure: 20, secondsAfterCompletion: 5}", 20 * time.Second},
		{"keep", "true", "null", 0},
	}
	for _, tc := range cases {
		wf := workflow(t, `
metadata: {name: `+tc.name+`}
spec:
  entrypoint: main
  ttlStrategy: `+tc.ttl+`
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, "`+tc.cmd+`"]}
`)
		if err := st.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	type due struct {
		wf *v1alpha1.Workflow
		at time.Time
	}
	var dues []due
	for _, tc := range cases {
		phase := v1alpha1.WorkflowSucceeded
		if tc.cmd != "true" {
			phase = v1alpha1.WorkflowFailed
		}
		wf := waitPhase(t, st, tc.name, phase)
		if tc.want > 0 {
			dues = append(dues, due{wf, wf.Status.FinishedAt.Add(tc.want)})
		}
	}
	sort.Slice(dues, func(i, j int) bool { return dues[i].at.Before(dues[j].at) })
	for _, d := range dues {
		clock.Set(d.at.Add(-time.Second))
		assertStays(t, st, d.wf.Name, "keep")
		clock.Set(d.at)
		waitGone(t, st, d.wf)
	}
	assertStays(t, st, "keep")
}

// completedWorkflow is a workflow as a previous server left it: completed
// at finished, with one node, not archived.
func completedWorkflow(t *testing.T, name string, phase v1alpha1.WorkflowPhase, finished time.Time, ttl string) *v1alpha1.Workflow {
	t.Helper()
	wf := workflow(t, `
metadata: {name: `+name+`}
spec:
  entrypoint: main
  ttlStrategy: `+ttl+`
  templates:
  - name: main
    container: {image: busybox, command: [echo]}
`)
	wf.Status.Phase = phase
	wf.Status.StartedAt = metav1.NewTime(finished.Add(-time.Second))
	wf.Status.FinishedAt = metav1.NewTime(finished)
	nodePhase := v1alpha1.NodePhase(phase)
	wf.Status.Nodes = v1alpha1.Nodes{name: {ID: name, Name: name, DisplayName: name, Type: v1alpha1.NodeTypePod,
		Phase: nodePhase, StartedAt: wf.Status.StartedAt, FinishedAt: wf.Status.FinishedAt}}
	return wf
}

func createAll(t *testing.T, dir string, wfs ...*v1alpha1.Workflow) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, dir+"/braid.db", sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, wf := range wfs {
		if err := st.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// On start the Manager schedules the TTL of workflows that completed
// before it: one past due is archived and deleted at once, one not yet
// due when its time comes.
func TestManagerTTLAtStart(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	dir := t.TempDir()
	past := completedWorkflow(t, "past-due", v1alpha1.WorkflowSucceeded, now.Add(-time.Hour), "{secondsAfterCompletion: 60}")
	later := completedWorkflow(t, "later", v1alpha1.WorkflowFailed, now, "{secondsAfterFailure: 30}")
	keep := completedWorkflow(t, "keep", v1alpha1.WorkflowFailed, now.Add(-time.Hour), "{secondsAfterSuccess: 1}")
	createAll(t, dir, past, later, keep)

	clock := newFakeClock(now)
	st := startGCManager(t, dir, clock, Retention{})
	waitGone(t, st, past)
	assertStays(t, st, "later", "keep")
	clock.Set(now.Add(29 * time.Second))
	assertStays(t, st, "later")
	clock.Set(now.Add(30 * time.Second))
	waitGone(t, st, later)
	assertStays(t, st, "keep")
}

// The retention policy keeps the newest N workflows of each final phase:
// on start the older ones go (archived first), and each workflow that
// completes later pushes out the oldest of its phase.
func TestManagerRetention(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	dir := t.TempDir()
	at := func(h int) time.Time { return now.Add(-time.Duration(h) * time.Hour) }
	s1 := completedWorkflow(t, "s1", v1alpha1.WorkflowSucceeded, at(4), "null")
	s2 := completedWorkflow(t, "s2", v1alpha1.WorkflowSucceeded, at(3), "null")
	s3 := completedWorkflow(t, "s3", v1alpha1.WorkflowSucceeded, at(2), "null")
	s4 := completedWorkflow(t, "s4", v1alpha1.WorkflowSucceeded, at(1), "null")
	f1 := completedWorkflow(t, "f1", v1alpha1.WorkflowFailed, at(2), "null")
	f2 := completedWorkflow(t, "f2", v1alpha1.WorkflowFailed, at(1), "null")
	e1 := completedWorkflow(t, "e1", v1alpha1.WorkflowError, at(5), "null")
	// Created newest first: the order of the list is not the order kept.
	createAll(t, dir, s4, s3, f2, s2, s1, f1, e1)

	clock := newFakeClock(now)
	st := startGCManager(t, dir, clock, Retention{Completed: 2, Failed: 1})
	waitGone(t, st, s1)
	waitGone(t, st, s2)
	waitGone(t, st, f1)
	assertStays(t, st, "s3", "s4", "f2", "e1")

	live := workflow(t, `
metadata: {name: s5}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [echo, hi]}
`)
	if err := st.Create(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, st, "s5", v1alpha1.WorkflowSucceeded)
	waitGone(t, st, s3)
	assertStays(t, st, "s4", "s5", "f2", "e1")
}
