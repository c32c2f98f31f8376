package synclock

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func syncOf(t *testing.T, src string) *v1alpha1.Synchronization {
	t.Helper()
	s := &v1alpha1.Synchronization{}
	if err := yaml.UnmarshalStrict([]byte(src), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// notes records the workflow keys a Manager notifies.
type notes struct {
	mu   sync.Mutex
	keys []string
}

func (n *notes) add(k string) { n.mu.Lock(); n.keys = append(n.keys, k); n.mu.Unlock() }
func (n *notes) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.keys
	n.keys = nil
	slices.Sort(out)
	return out
}

func newManager(n *notes) *Locks {
	return New(Config{
		ConfigMapValue: func(ns, name, key string) (string, bool) {
			v, ok := map[string]string{"my-config/workflow": "1", "my-config/template": "2", "my-config/bad": "x"}[name+"/"+key]
			return v, ok
		},
		DatabaseLimit: func(key string) (int, bool) { n, ok := map[string]int{"default/db": 2}[key]; return n, ok },
		Notify:        n.add,
	})
}

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func TestKeys(t *testing.T) {
	s := syncOf(t, `
semaphore: {configMapKeyRef: {name: my-config, key: workflow}}
semaphores:
- configMapKeyRef: {name: my-config, key: workflow}
- {namespace: other, configMapKeyRef: {name: c, key: k}}
- database: {key: db}
mutex: {name: welcome}
mutexes:
- {name: db-mutex, database: true}
- {name: welcome}
`)
	got, err := Keys("default", s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"default/ConfigMap/my-config/workflow", "other/ConfigMap/c/k", "default/Database/db",
		"default/Mutex/welcome", "default/Database/db-mutex"}
	if !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	for _, bad := range []string{`semaphores: [{}]`, `mutexes: [{}]`, `semaphores: [{configMapKeyRef: {name: a, key: b}, database: {key: c}}]`} {
		if _, err := Keys("default", syncOf(t, bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// A semaphore of limit 2 takes two holders; the third waits with Argo's
// message and gets the lock when one is released, and is notified then.
func TestSemaphoreLimitAndRelease(t *testing.T) {
	var n notes
	m := newManager(&n)
	s := syncOf(t, `semaphores: [{configMapKeyRef: {name: my-config, key: template}}]`)
	for i, h := range []string{"default/wf/a", "default/wf/b"} {
		if ok, _, msg := m.TryAcquire(h, "default", s, 0, t0); !ok {
			t.Fatalf("holder %d: %s", i, msg)
		}
	}
	ok, on, msg := m.TryAcquire("default/wf/c", "default", s, 0, t0)
	if ok || on != "default/ConfigMap/my-config/template" || msg != "Waiting for default/ConfigMap/my-config/template lock. Lock status: 0/2" {
		t.Fatalf("third: %v %q %q", ok, on, msg)
	}
	if ok, _, _ := m.TryAcquire("default/wf/a", "default", s, 0, t0); !ok {
		t.Error("a holder asking again is refused")
	}
	m.Release("default/wf/a")
	if got := n.take(); !slices.Equal(got, []string{"default/wf"}) {
		t.Errorf("notified %q", got)
	}
	if ok, _, msg := m.TryAcquire("default/wf/c", "default", s, 0, t0); !ok {
		t.Errorf("after release: %s", msg)
	}
	st := m.Status("default/wf")
	if st == nil || st.Semaphore == nil || len(st.Semaphore.Holding) != 1 ||
		!slices.Equal(st.Semaphore.Holding[0].Holders, []string{"default/wf/b", "default/wf/c"}) || len(st.Semaphore.Waiting) != 0 {
		t.Errorf("status %+v", st)
	}
}

// Waiters are served by priority, then creation time, then arrival.
func TestPriorityOrder(t *testing.T) {
	var n notes
	m := newManager(&n)
	s := syncOf(t, `mutexes: [{name: m}]`)
	if ok, _, _ := m.TryAcquire("default/first", "default", s, 0, t0); !ok {
		t.Fatal("first refused")
	}
	type w struct {
		key     string
		prio    int32
		created time.Time
	}
	waiters := []w{{"default/old-low", 0, t0}, {"default/new-high", 5, t0.Add(time.Hour)}, {"default/new-low", 0, t0.Add(time.Minute)}, {"default/old-high", 5, t0}}
	for _, x := range waiters {
		if ok, _, _ := m.TryAcquire(x.key, "default", s, x.prio, x.created); ok {
			t.Fatalf("%s got a held mutex", x.key)
		}
	}
	var order []string
	holder := "default/first"
	for range waiters {
		m.Release(holder)
		notified := n.take()
		if len(notified) != 1 {
			t.Fatalf("notified %q", notified)
		}
		// Everyone asks; only the one whose turn it is gets it.
		got := ""
		for _, x := range waiters {
			if slices.Contains(order, x.key) {
				continue // done: it does not ask again
			}
			if ok, _, _ := m.TryAcquire(x.key, "default", s, x.prio, x.created); ok {
				if got != "" {
					t.Fatalf("both %s and %s hold the mutex", got, x.key)
				}
				got = x.key
			}
		}
		if got != notified[0] {
			t.Fatalf("%s got the mutex, %s was notified", got, notified[0])
		}
		order = append(order, got)
		holder = got
	}
	want := []string{"default/old-high", "default/new-high", "default/old-low", "default/new-low"}
	if !slices.Equal(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}
}

// Several locks are taken all together or not at all.
func TestAllOrNone(t *testing.T) {
	var n notes
	m := newManager(&n)
	if ok, _, _ := m.TryAcquire("default/a", "default", syncOf(t, `mutexes: [{name: my}]`), 0, t0); !ok {
		t.Fatal("a refused")
	}
	both := syncOf(t, `mutexes: [{name: mx}, {name: my}]`)
	ok, on, _ := m.TryAcquire("default/b", "default", both, 0, t0)
	if ok || on != "default/Mutex/my" {
		t.Fatalf("b: %v %s", ok, on)
	}
	// b holds nothing while it waits, but it is at the front of mx's queue,
	// so c waits for mx too (Argo's rule for several locks).
	if ok, _, _ := m.TryAcquire("default/c", "default", syncOf(t, `mutexes: [{name: mx}]`), 0, t0.Add(time.Second)); ok {
		t.Error("c jumped the queue of x")
	}
	st := m.Status("default/b")
	if st == nil || st.Mutex == nil || len(st.Mutex.Holding) != 0 || len(st.Mutex.Waiting) != 2 {
		t.Fatalf("b's status %+v", st)
	}
	m.Release("default/a")
	if ok, _, msg := m.TryAcquire("default/b", "default", both, 0, t0); !ok {
		t.Fatalf("b after release: %s", msg)
	}
	if st := m.Status("default/b"); len(st.Mutex.Holding) != 2 || len(st.Mutex.Waiting) != 0 {
		t.Errorf("b's status %+v", st.Mutex)
	}
}

// A limit that cannot be read makes the holder wait with the reason.
func TestMissingLimitWaits(t *testing.T) {
	m := newManager(&notes{})
	for src, want := range map[string]string{
		`semaphores: [{configMapKeyRef: {name: my-config, key: nope}}]`: "failed to get semaphore limit: config map my-config has no key nope",
		`semaphores: [{configMapKeyRef: {name: my-config, key: bad}}]`:  "not a number",
		`semaphores: [{database: {key: missing}}]`:                      "no database limit for default/missing",
	} {
		ok, _, msg := m.TryAcquire("default/wf", "default", syncOf(t, src), 0, t0)
		if ok || !strings.Contains(msg, want) {
			t.Errorf("%s: %v %q, want %q", src, ok, msg, want)
		}
	}
	if ok, _, msg := m.TryAcquire("default/wf2", "default", syncOf(t, `semaphores: [{database: {key: db}}]`), 0, t0); !ok {
		t.Errorf("database semaphore with a limit: %s", msg)
	}
}

// After a restart the holders recorded in the statuses come back: nobody
// gets a lock twice, and the holder keeps it.
func TestRestoreFromStatus(t *testing.T) {
	var n notes
	before := newManager(&n)
	s := syncOf(t, `{semaphores: [{configMapKeyRef: {name: my-config, key: workflow}}], mutexes: [{name: m}]}`)
	if ok, _, _ := before.TryAcquire("default/a", "default", s, 0, t0); !ok {
		t.Fatal("a refused")
	}
	before.TryAcquire("default/b", "default", s, 0, t0)
	stA, stB := before.Status("default/a"), before.Status("default/b")
	if stB == nil || stB.Semaphore == nil || len(stB.Semaphore.Waiting) != 1 || stB.Semaphore.Holding != nil {
		t.Fatalf("b's status %+v", stB)
	}

	after := newManager(&n)
	if err := after.RestoreStatus(stA); err != nil {
		t.Fatal(err)
	}
	if err := after.RestoreStatus(stB); err != nil { // waiting only: restores nothing
		t.Fatal(err)
	}
	if ok, _, _ := after.TryAcquire("default/b", "default", s, 0, t0); ok {
		t.Fatal("b got a lock a holds")
	}
	if ok, _, _ := after.TryAcquire("default/a", "default", s, 0, t0); !ok {
		t.Fatal("a lost its locks")
	}
	after.ReleaseWorkflow("default/a")
	if ok, _, msg := after.TryAcquire("default/b", "default", s, 0, t0); !ok {
		t.Fatalf("b after a ended: %s", msg)
	}
	if after.Involved("default/a") {
		t.Error("a is still involved")
	}
	if err := after.Restore("default/Nope/x", "default/c", false); err == nil {
		t.Error("an unknown kind was restored")
	}
}

func TestWorkflowKey(t *testing.T) {
	for in, want := range map[string]string{"ns/wf": "ns/wf", "ns/wf/node-1": "ns/wf", "x": "x"} {
		if got := WorkflowKey(in); got != want {
			t.Errorf("WorkflowKey(%q) = %q", in, got)
		}
	}
}

// A limit raised in the config lets waiters in once LimitsChanged is
// called; a semaphore whose key appears lets its waiter in too.
func TestLimitsChanged(t *testing.T) {
	var n notes
	limits := map[string]string{"template": "1"}
	m := New(Config{
		ConfigMapValue: func(_, _, key string) (string, bool) { v, ok := limits[key]; return v, ok },
		Notify:         n.add,
	})
	s := syncOf(t, `semaphores: [{configMapKeyRef: {name: my-config, key: template}}]`)
	missing := syncOf(t, `semaphores: [{configMapKeyRef: {name: my-config, key: late}}]`)
	if ok, _, _ := m.TryAcquire("default/a/x", "default", s, 0, t0); !ok {
		t.Fatal("first refused")
	}
	for _, h := range []string{"default/b/x", "default/c/x"} {
		if ok, _, _ := m.TryAcquire(h, "default", s, 0, t0); ok {
			t.Fatalf("%s got a full semaphore", h)
		}
	}
	if ok, _, msg := m.TryAcquire("default/d/x", "default", missing, 0, t0); ok || !strings.Contains(msg, "has no key late") {
		t.Fatalf("missing key: %v %q", ok, msg)
	}
	m.LimitsChanged()
	if got := n.take(); len(got) != 0 {
		t.Fatalf("nothing changed, yet notified %q", got)
	}
	limits["template"], limits["late"] = "2", "1"
	m.LimitsChanged()
	got := n.take()
	slices.Sort(got)
	if !slices.Equal(got, []string{"default/b", "default/d"}) {
		t.Fatalf("notified %q, want the first waiter and the one whose key appeared", got)
	}
	if ok, _, msg := m.TryAcquire("default/d/x", "default", missing, 0, t0); !ok {
		t.Fatalf("after the key appeared: %s", msg)
	}
}
