package sqlite

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// next receives one event or fails after a while.
func next(t *testing.T, ch <-chan store.Event) store.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("watch channel closed")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatalf("no event")
	}
	return store.Event{}
}

// quiet checks that no event is pending.
func quiet(t *testing.T, ch <-chan store.Event) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("unexpected event %s %s", ev.Type, ev.Object.GetName())
		}
	case <-time.After(20 * time.Millisecond):
	}
}

// closed checks that the channel is closed once its buffer is drained, and
// returns how many events were buffered.
func closed(t *testing.T, ch <-chan store.Event) int {
	t.Helper()
	n := 0
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return n
			}
			n++
		case <-time.After(5 * time.Second):
			t.Fatalf("watch channel not closed")
		}
	}
}

func TestWatchEvents(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	all, err := s.Watch(ctx, store.KindWorkflow, "")
	must(t, err, "Watch")
	argo, err := s.Watch(ctx, store.KindWorkflow, "argo")
	must(t, err, "Watch argo")
	tmpl, err := s.Watch(ctx, store.KindWorkflowTemplate, "")
	must(t, err, "Watch templates")

	wf := bigWorkflow("w", 5)
	must(t, s.Create(ctx, wf), "Create")
	n := wf.Status.Nodes[wf.Status.Nodes["w"].Children[0]]
	n.Phase = v1alpha1.NodeFailed
	wf.Status.Nodes[n.ID] = n
	must(t, s.UpdateWorkflowStatus(ctx, wf, []string{n.ID}), "UpdateWorkflowStatus")
	wf.Labels["done"] = "true"
	must(t, s.Update(ctx, wf), "Update")
	other := bigWorkflow("x", 2)
	other.Namespace = "dev"
	must(t, s.Create(ctx, other), "Create in dev")
	must(t, s.Delete(ctx, store.KindWorkflow, "argo", "w"), "Delete")

	want := []struct {
		typ  store.EventType
		name string
		rv   string
	}{
		{store.Added, "w", "1"}, {store.Modified, "w", "2"}, {store.Modified, "w", "3"},
		{store.Added, "x", "1"}, {store.Deleted, "w", "3"},
	}
	for i, w := range want {
		ev := next(t, all)
		if ev.Type != w.typ || ev.Object.GetName() != w.name || ev.Object.GetResourceVersion() != w.rv {
			t.Errorf("event %d: %s %s rv %s, want %s %s rv %s", i, ev.Type, ev.Object.GetName(), ev.Object.GetResourceVersion(), w.typ, w.name, w.rv)
		}
		got, ok := ev.Object.(*v1alpha1.Workflow)
		if !ok {
			t.Fatalf("event object %T", ev.Object)
		}
		if got.Status.Nodes != nil {
			t.Errorf("event %d carries %d nodes; events carry workflows without nodes", i, len(got.Status.Nodes))
		}
		if got.Kind != "Workflow" || got.APIVersion != v1alpha1.APIVersion {
			t.Errorf("event %d: TypeMeta %+v", i, got.TypeMeta)
		}
		if w.name == "w" && got == wf {
			t.Errorf("event %d shares the caller's object", i)
		}
		if w.name != "x" {
			if ev := next(t, argo); ev.Type != w.typ || ev.Object.GetResourceVersion() != w.rv {
				t.Errorf("namespaced watch, event %d: %s rv %s", i, ev.Type, ev.Object.GetResourceVersion())
			}
		}
	}
	quiet(t, all)
	quiet(t, argo)
	quiet(t, tmpl)
}

func TestWatchRollbackPublishesNothing(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	ch, err := s.Watch(ctx, store.KindWorkflow, "")
	must(t, err, "Watch")
	_ = s.Tx(ctx, func(tx *Tx) error {
		must(t, tx.Create(bigWorkflow("w", 1)), "Create")
		return fmt.Errorf("abandon")
	})
	quiet(t, ch)
}

func TestWatchStops(t *testing.T) {
	s := testStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := s.Watch(ctx, store.KindWorkflow, "")
	must(t, err, "Watch")
	cancel()
	if n := closed(t, ch); n != 0 {
		t.Errorf("%d events after cancel", n)
	}

	ch, err = s.Watch(context.Background(), store.KindWorkflow, "")
	must(t, err, "Watch")
	must(t, s.Close(), "Close")
	if n := closed(t, ch); n != 0 {
		t.Errorf("%d events after Close", n)
	}
}

// A watcher that stops reading is dropped when its buffer fills; writers
// never wait for it, and other watchers keep every event.
func TestWatchSlowSubscriber(t *testing.T) {
	const buffer, writes = 4, 50
	ctx := context.Background()
	s := testStore(t, noMonitor, withOptions(func(o *Options) { o.WatchBuffer = buffer }))
	slow, err := s.Watch(ctx, store.KindWorkflow, "")
	must(t, err, "Watch slow")
	fast, err := s.Watch(ctx, store.KindWorkflow, "")
	must(t, err, "Watch fast")

	// The fast watcher acknowledges each event before the next write, so
	// it never falls behind; the slow one never reads.
	var (
		wg   sync.WaitGroup
		seen []string
		ack  = make(chan struct{})
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ack)
		for ev := range fast {
			seen = append(seen, ev.Object.GetName())
			ack <- struct{}{}
			if len(seen) == writes {
				return
			}
		}
	}()

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range writes {
			if err := s.Create(ctx, bigWorkflow(fmt.Sprintf("w%02d", i), 1)); err != nil {
				t.Errorf("Create: %v", err)
				return
			}
			if _, ok := <-ack; !ok {
				t.Errorf("fast watcher stopped after %d events", i)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("writers blocked by a slow watcher")
	}
	wg.Wait()
	if len(seen) != writes {
		t.Errorf("fast watcher saw %d events, want %d", len(seen), writes)
	}
	for i, name := range seen {
		if want := fmt.Sprintf("w%02d", i); name != want {
			t.Fatalf("fast watcher event %d is %s, want %s (order)", i, name, want)
		}
	}
	if n := closed(t, slow); n != buffer {
		t.Errorf("slow watcher got %d events before being dropped, want its buffer (%d)", n, buffer)
	}
}

// Events come in commit order even with many writers.
func TestWatchOrderConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	s := testStore(t) // the monitor checks rv order per object
	ch, err := s.Watch(ctx, store.KindWorkflow, "")
	must(t, err, "Watch")
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wf := bigWorkflow(fmt.Sprintf("wf-%d", w), 3)
			if err := s.Create(ctx, wf); err != nil {
				t.Errorf("Create: %v", err)
				return
			}
			for range each {
				wf.Status.Message += "."
				if err := s.UpdateWorkflowStatus(ctx, wf, nil); err != nil {
					t.Errorf("UpdateWorkflowStatus: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	last := map[string]int{}
	for range writers * (each + 1) {
		ev := next(t, ch)
		var rv int
		_, _ = fmt.Sscan(ev.Object.GetResourceVersion(), &rv)
		name := ev.Object.GetName()
		if rv != last[name]+1 {
			t.Fatalf("%s: rv %d after %d", name, rv, last[name])
		}
		if got := len(ev.Object.(*v1alpha1.Workflow).Status.Message); got != rv-1 {
			t.Fatalf("%s rv %d: the event's object is from another write (message length %d)", name, rv, got)
		}
		last[name] = rv
	}
}
