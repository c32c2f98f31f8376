package controller

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Workflow garbage collection: a completed workflow leaves the live store
// (it stays in the archive) when its spec.ttlStrategy delay has passed
// since status.finishedAt, or when the retention policy keeps newer
// workflows of its final phase in its place. A workflow is deleted only
// once the archive holds it. Deadlines wait on one timer, reset to the
// earliest; nothing polls.

// Retention is Argo's controller retentionPolicy: at most that many
// completed workflows of each final phase stay in the live store
// (Succeeded counts as Completed, Error as Errored); 0 keeps them all.
type Retention struct {
	Completed, Failed, Errored int
}

func (r Retention) limit(p v1alpha1.WorkflowPhase) int {
	switch p {
	case v1alpha1.WorkflowSucceeded:
		return r.Completed
	case v1alpha1.WorkflowFailed:
		return r.Failed
	case v1alpha1.WorkflowError:
		return r.Errored
	}
	return 0
}

// TTL is how long a completed workflow stays after status.finishedAt,
// and false when it has no ttlStrategy that applies to its phase.
// secondsAfterSuccess (Succeeded) and secondsAfterFailure (Failed or
// Error) win over secondsAfterCompletion. The workflow's own strategy
// wins over its workflow template's.
func TTL(wf *v1alpha1.Workflow) (time.Duration, bool) {
	s := wf.ExecSpec().TTLStrategy
	if s == nil || !wf.Status.Phase.Completed() {
		return 0, false
	}
	secs := s.SecondsAfterCompletion
	switch wf.Status.Phase {
	case v1alpha1.WorkflowSucceeded:
		if s.SecondsAfterSuccess != nil {
			secs = s.SecondsAfterSuccess
		}
	case v1alpha1.WorkflowFailed, v1alpha1.WorkflowError:
		if s.SecondsAfterFailure != nil {
			secs = s.SecondsAfterFailure
		}
	}
	if secs == nil {
		return 0, false
	}
	return time.Duration(max(*secs, 0)) * time.Second, true
}

// finishedAt is status.finishedAt as the store keeps it (to the second),
// whether wf was read back or is still the copy that was written.
func finishedAt(wf *v1alpha1.Workflow) time.Time {
	return wf.Status.FinishedAt.Time.Truncate(time.Second)
}

// gcStore is what the collector needs from a store.
type gcStore interface {
	Get(ctx context.Context, kind store.Kind, namespace, name string) (store.Object, error)
	Delete(ctx context.Context, kind store.Kind, namespace, name string) error
}

// gcRetryAfter is how long a deletion that failed waits before the next try.
const gcRetryAfter = 30 * time.Second

// gcEntry is one completed workflow the collector follows.
type gcEntry struct {
	uid       types.UID
	namespace string
	name      string
	phase     v1alpha1.WorkflowPhase
	finished  time.Time
	// archived is set once the archive is known to hold the workflow.
	archived bool
	// due is when to delete it; index is its place in the due heap, -1
	// when it is not scheduled.
	due   time.Time
	index int
	// reason says why it is scheduled: "ttlStrategy" or "retentionPolicy".
	reason string
}

// collector deletes completed workflows; the zero of its pointer (nil)
// collects nothing.
type collector struct {
	st      gcStore
	archive Archiver // nil: the store keeps no archive
	policy  Retention
	c       *Controller

	mu      sync.Mutex
	entries map[types.UID]*gcEntry
	due     dueHeap
	kept    map[v1alpha1.WorkflowPhase][]*gcEntry // oldest first
	wake    chan struct{}
}

// newCollector returns the collector of st.
func (c *Controller) newCollector(st gcStore) *collector {
	g := &collector{st: st, policy: c.retention, c: c, entries: map[types.UID]*gcEntry{},
		kept: map[v1alpha1.WorkflowPhase][]*gcEntry{}, wake: make(chan struct{}, 1)}
	g.archive = c.archive
	return g
}

// completed follows a completed workflow: it schedules its TTL and counts
// it against the retention policy. archived says the archive holds it. It
// is idempotent; a workflow that completed again (a retry) starts over.
func (g *collector) completed(wf *v1alpha1.Workflow, archived bool) {
	if g == nil || !wf.Status.Phase.Completed() {
		return
	}
	ttl, hasTTL := TTL(wf)
	limit := g.policy.limit(wf.Status.Phase)
	if !hasTTL && limit <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if e := g.entries[wf.UID]; e != nil {
		if e.finished.Equal(finishedAt(wf)) && e.phase == wf.Status.Phase {
			e.archived = e.archived || archived
			return
		}
		g.remove(e)
	}
	e := &gcEntry{uid: wf.UID, namespace: wf.Namespace, name: wf.Name, phase: wf.Status.Phase,
		finished: finishedAt(wf), archived: archived, index: -1}
	g.entries[e.uid] = e
	if hasTTL {
		g.schedule(e, e.finished.Add(ttl), "ttlStrategy")
	}
	if limit > 0 {
		g.keep(e, limit)
	}
	g.poke()
}

// keep counts e against its phase's limit and schedules the oldest beyond
// it for deletion now.
func (g *collector) keep(e *gcEntry, limit int) {
	list := g.kept[e.phase]
	i := sort.Search(len(list), func(i int) bool { return list[i].finished.After(e.finished) })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = e
	for len(list) > limit {
		victim := list[0]
		list = list[1:]
		g.schedule(victim, time.Time{}, "retentionPolicy")
	}
	g.kept[e.phase] = list
}

// schedule sets when e is deleted; an earlier deadline already set wins.
func (g *collector) schedule(e *gcEntry, at time.Time, reason string) {
	if e.index >= 0 {
		if !at.Before(e.due) {
			return
		}
		e.due, e.reason = at, reason
		heap.Fix(&g.due, e.index)
		return
	}
	e.due, e.reason = at, reason
	heap.Push(&g.due, e)
}

// forget stops following a workflow (it was deleted).
func (g *collector) forget(uid types.UID) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if e := g.entries[uid]; e != nil {
		g.remove(e)
	}
}

func (g *collector) remove(e *gcEntry) {
	delete(g.entries, e.uid)
	if e.index >= 0 {
		heap.Remove(&g.due, e.index)
	}
	list := g.kept[e.phase]
	for i, k := range list {
		if k == e {
			g.kept[e.phase] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
}

func (g *collector) poke() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// run deletes workflows as they fall due, until ctx ends.
func (g *collector) run(ctx context.Context) {
	if g == nil {
		return
	}
	for {
		ready, next := g.ready()
		for _, e := range ready {
			g.collect(ctx, e)
		}
		if len(ready) > 0 {
			continue
		}
		var timer <-chan time.Time
		if !next.IsZero() {
			timer = g.c.wakeAt(next)
		}
		select {
		case <-timer:
		case <-g.wake:
		case <-ctx.Done():
			return
		}
	}
}

// ready takes the entries that are due off the heap, and returns the
// next deadline after them (zero: none).
func (g *collector) ready() ([]*gcEntry, time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.c.now()
	var out []*gcEntry
	for len(g.due) > 0 && !g.due[0].due.After(now) {
		out = append(out, heap.Pop(&g.due).(*gcEntry))
	}
	if len(g.due) == 0 {
		return out, time.Time{}
	}
	return out, g.due[0].due
}

// collect deletes one workflow that fell due, after making sure the
// archive holds it; a failure is retried later.
func (g *collector) collect(ctx context.Context, e *gcEntry) {
	log := g.c.log.With("workflow", e.namespace+"/"+e.name, "reason", e.reason)
	err := g.deleteArchived(ctx, e)
	switch {
	case err == nil:
		log.Info("deleted completed workflow")
	case errors.Is(err, errGone):
		// Deleted, retried or replaced meanwhile: nothing to do here.
	case ctx.Err() != nil:
		return
	default:
		log.Warn("delete completed workflow", "err", err)
		g.mu.Lock()
		if g.entries[e.uid] == e && e.index < 0 {
			g.schedule(e, g.c.now().Add(gcRetryAfter), e.reason)
		}
		g.mu.Unlock()
		return
	}
	g.drop(e)
}

// drop forgets e, unless another entry has replaced it.
func (g *collector) drop(e *gcEntry) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.entries[e.uid] == e {
		g.remove(e)
	}
}

// errGone: the workflow an entry names is no longer the completed one it
// followed.
var errGone = errors.New("workflow gone or changed")

func (g *collector) deleteArchived(ctx context.Context, e *gcEntry) error {
	obj, err := g.st.Get(ctx, store.KindWorkflow, e.namespace, e.name)
	if errors.Is(err, store.ErrNotFound) {
		return errGone
	}
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	wf, ok := obj.(*v1alpha1.Workflow)
	if !ok || wf.UID != e.uid || !wf.Status.Phase.Completed() {
		return errGone
	}
	if !finishedAt(wf).Equal(e.finished) {
		// It ran again and completed again: follow it anew.
		g.drop(e)
		g.completed(wf, false)
		return errGone
	}
	if err := g.ensureArchived(ctx, e, wf); err != nil {
		return err
	}
	if err := g.st.Delete(ctx, store.KindWorkflow, e.namespace, e.name); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}

// ensureArchived archives wf (read whole, nodes included) unless the
// archive is known to hold it already.
func (g *collector) ensureArchived(ctx context.Context, e *gcEntry, wf *v1alpha1.Workflow) error {
	if g.archive == nil || e.archived {
		return nil
	}
	_, err := g.archive.GetArchived(ctx, string(e.uid))
	if err == nil {
		return nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("read the archive: %w", err)
	}
	if err := g.archive.ArchiveBatch(ctx, []*v1alpha1.Workflow{wf}); err != nil {
		return fmt.Errorf("archive before deleting: %w", err)
	}
	return nil
}

// dueHeap orders entries by deadline, earliest first.
type dueHeap []*gcEntry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *dueHeap) Push(x any) {
	e := x.(*gcEntry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}
