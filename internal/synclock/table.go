package synclock

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Table is the state of a set of locks as plain data: who holds each, who
// waits for it in what order, and its limit as read when the table was
// taken. Locks keeps the controller's whole table behind its mutex;
// View hands a copy of the part one workflow needs to engine.Reconcile,
// which decides on it without I/O, and the decisions come back to the
// Locks (Commit). A Table is not safe for concurrent use.
type Table struct {
	locks map[string]*lock
	// byWorkflow lists, per workflow key, each holder of that workflow and
	// the keys of the locks it holds or waits for.
	byWorkflow map[string]map[string]map[string]bool
	seq        uint64
}

type lock struct {
	ref     ref
	holders map[string]bool
	waiters map[string]waiter
	// limit is the lock's limit when last read; limitErr, when set, says
	// why it could not be read (the holder waits with it as its message).
	limit    int
	limitErr string
}

// waiter is a holder in a lock's queue.
type waiter struct {
	holder   string
	priority int32
	created  time.Time
	seq      uint64
}

// before orders waiters as Argo does: higher priority, then the older
// workflow, then the earlier request.
func (w waiter) before(o waiter) bool {
	if w.priority != o.priority {
		return w.priority > o.priority
	}
	if !w.created.Equal(o.created) {
		return w.created.Before(o.created)
	}
	return w.seq < o.seq
}

// NewTable returns an empty Table.
func NewTable() *Table {
	return &Table{locks: map[string]*lock{}, byWorkflow: map[string]map[string]map[string]bool{}}
}

// Clone returns a deep copy of t.
func (t *Table) Clone() *Table {
	c := NewTable()
	c.seq = t.seq
	for k, l := range t.locks {
		c.locks[k] = l.clone()
	}
	for wk, hs := range t.byWorkflow {
		c.copyWorkflow(wk, hs)
	}
	return c
}

func (l *lock) clone() *lock {
	return &lock{ref: l.ref, holders: maps.Clone(l.holders), waiters: maps.Clone(l.waiters), limit: l.limit, limitErr: l.limitErr}
}

func (t *Table) copyWorkflow(wk string, hs map[string]map[string]bool) {
	out := make(map[string]map[string]bool, len(hs))
	for h, keys := range hs {
		out[h] = maps.Clone(keys)
	}
	t.byWorkflow[wk] = out
}

// Has reports whether the table holds every lock s names (or s names an
// invalid lock, which needs no state to be refused).
func (t *Table) Has(namespace string, s *v1alpha1.Synchronization) bool {
	rs, err := refs(namespace, s)
	if err != nil {
		return true
	}
	for _, r := range rs {
		if t.locks[r.key] == nil {
			return false
		}
	}
	return true
}

// TryAcquire takes, for holder, every lock that s names, or none. When it
// cannot, the holder joins the queue of each lock (once: its place is kept
// between calls) and waitingOn and message name the first lock in the way,
// with Argo's message ("Waiting for <key> lock. Lock status: <free>/<limit>")
// or why the limit cannot be read. A holder that already holds the locks
// gets them again. priority and created are the workflow's spec.priority
// and creation time. A lock the table does not hold is taken as a new,
// free one with the limit it was given last (see Locks.TryAcquire, which
// reads limits first).
func (t *Table) TryAcquire(holder, namespace string, s *v1alpha1.Synchronization, priority int32, created time.Time) (acquired bool, waitingOn, message string) {
	rs, err := refs(namespace, s)
	if err != nil {
		return false, "", "invalid synchronization: " + err.Error()
	}
	return t.tryAcquire(holder, rs, priority, created)
}

func (t *Table) tryAcquire(holder string, rs []ref, priority int32, created time.Time) (acquired bool, waitingOn, message string) {
	acquired = true
	for _, r := range rs {
		l := t.lockFor(r)
		if l.holders[holder] {
			continue
		}
		if _, queued := l.waiters[holder]; !queued {
			t.seq++
			l.waiters[holder] = waiter{holder: holder, priority: priority, created: created, seq: t.seq}
			t.track(holder, r.key)
		}
		if !acquired {
			continue
		}
		switch {
		case l.limitErr != "":
			acquired, waitingOn, message = false, r.key, l.limitErr
		case !l.canTake(holder):
			acquired, waitingOn = false, r.key
			message = fmt.Sprintf("Waiting for %s lock. Lock status: %d/%d", r.key, max(l.limit-len(l.holders), 0), l.limit)
		}
	}
	if !acquired {
		return false, waitingOn, message
	}
	t.take(holder, rs)
	return true, "", ""
}

// take gives holder every lock of rs.
func (t *Table) take(holder string, rs []ref) {
	for _, r := range rs {
		l := t.lockFor(r)
		delete(l.waiters, holder)
		l.holders[holder] = true
		t.track(holder, r.key)
	}
}

// canTake reports whether holder's turn has come: a place is free for it
// once the waiters before it have theirs.
func (l *lock) canTake(holder string) bool {
	free := l.limit - len(l.holders)
	if free <= 0 {
		return false
	}
	me := l.waiters[holder]
	ahead := 0
	for _, w := range l.waiters {
		if w.holder != holder && w.before(me) {
			ahead++
		}
	}
	return ahead < free
}

// Release gives back every lock holder holds and takes it out of every
// queue. It returns the workflows whose turn may have come.
func (t *Table) Release(holder string) []string {
	wk := WorkflowKey(holder)
	var wake []string
	for key := range t.byWorkflow[wk][holder] {
		l := t.locks[key]
		if l == nil {
			continue
		}
		delete(l.holders, holder)
		delete(l.waiters, holder)
		wake = append(wake, l.turns()...)
	}
	if hs := t.byWorkflow[wk]; hs != nil {
		delete(hs, holder)
		if len(hs) == 0 {
			delete(t.byWorkflow, wk)
		}
	}
	return wake
}

// ReleaseWorkflow releases every holder of a workflow ("namespace/name"):
// the workflow's own locks and those of its nodes. It returns the
// workflows whose turn may have come.
func (t *Table) ReleaseWorkflow(workflowKey string) []string {
	var wake []string
	for _, holder := range t.Holders(workflowKey) {
		wake = append(wake, t.Release(holder)...)
	}
	return wake
}

// turns lists the workflows of the waiters that fit in a lock's free places.
func (l *lock) turns() []string {
	free := l.limit - len(l.holders)
	if l.limitErr != "" || free <= 0 || len(l.waiters) == 0 {
		return nil
	}
	ws := make([]waiter, 0, len(l.waiters))
	for _, w := range l.waiters {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].before(ws[j]) })
	out := make([]string, 0, min(free, len(ws)))
	for _, w := range ws[:min(free, len(ws))] {
		out = append(out, WorkflowKey(w.holder))
	}
	return out
}

// Holders lists the holders of a workflow that hold or wait for a lock,
// sorted.
func (t *Table) Holders(workflowKey string) []string {
	out := make([]string, 0, len(t.byWorkflow[workflowKey]))
	for h := range t.byWorkflow[workflowKey] {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// Involved reports whether a workflow holds or waits for any lock.
func (t *Table) Involved(workflowKey string) bool {
	return len(t.byWorkflow[workflowKey]) > 0
}

func (t *Table) lockFor(r ref) *lock {
	l := t.locks[r.key]
	if l == nil {
		l = &lock{ref: r, holders: map[string]bool{}, waiters: map[string]waiter{}, limit: 1}
		if !r.mutex {
			l.limit, l.limitErr = 0, "failed to get semaphore limit: the limit of "+r.key+" was never read"
		}
		t.locks[r.key] = l
	}
	return l
}

func (t *Table) track(holder, key string) {
	wk := WorkflowKey(holder)
	hs := t.byWorkflow[wk]
	if hs == nil {
		hs = map[string]map[string]bool{}
		t.byWorkflow[wk] = hs
	}
	if hs[holder] == nil {
		hs[holder] = map[string]bool{}
	}
	hs[holder][key] = true
}

// WorkflowKey is the workflow part ("namespace/name") of a holder key.
func WorkflowKey(holder string) string {
	first := strings.IndexByte(holder, '/')
	if first < 0 {
		return holder
	}
	if second := strings.IndexByte(holder[first+1:], '/'); second >= 0 {
		return holder[:first+1+second]
	}
	return holder
}
