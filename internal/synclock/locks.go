package synclock

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Config says where the limits of semaphores come from and whom to tell
// when a lock may have become free.
type Config struct {
	// ConfigMapValue resolves a ConfigMap key (a semaphore's
	// configMapKeyRef); nil resolves nothing.
	ConfigMapValue func(namespace, name, key string) (string, bool)
	// DatabaseLimit gives the limit of the database semaphore
	// "namespace/key"; nil knows none.
	DatabaseLimit func(key string) (int, bool)
	// Notify is called with a workflow key ("namespace/name") whose waiter
	// may now get its lock. It is called without the Manager's lock held;
	// nil tells no one.
	Notify func(workflowKey string)
}

// Manager keeps every semaphore and mutex of one controller. It is safe
// for concurrent use.
type Manager struct {
	cfg Config

	mu    sync.Mutex
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

// New returns an empty Manager.
func New(cfg Config) *Manager {
	return &Manager{cfg: cfg, locks: map[string]*lock{}, byWorkflow: map[string]map[string]map[string]bool{}}
}

// TryAcquire takes, for holder, every lock that s names, or none. When it
// cannot, the holder joins the queue of each lock (once: its place is kept
// between calls) and waitingOn and message name the first lock in the way,
// with Argo's message ("Waiting for <key> lock. Lock status: <free>/<limit>")
// or why the limit cannot be read. A holder that already holds the locks
// gets them again. priority and created are the workflow's spec.priority
// and creation time.
func (m *Manager) TryAcquire(holder, namespace string, s *v1alpha1.Synchronization, priority int32, created time.Time) (acquired bool, waitingOn, message string) {
	rs, err := refs(namespace, s)
	if err != nil {
		return false, "", "invalid synchronization: " + err.Error()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	acquired = true
	for _, r := range rs {
		l := m.lockFor(r)
		if l.holders[holder] {
			continue
		}
		if _, queued := l.waiters[holder]; !queued {
			m.seq++
			l.waiters[holder] = waiter{holder: holder, priority: priority, created: created, seq: m.seq}
			m.track(holder, r.key)
		}
		if !acquired {
			continue
		}
		limit, err := m.limit(r)
		switch {
		case err != nil:
			acquired, waitingOn, message = false, r.key, err.Error()
		case !l.canTake(holder, limit):
			acquired, waitingOn = false, r.key
			message = fmt.Sprintf("Waiting for %s lock. Lock status: %d/%d", r.key, max(limit-len(l.holders), 0), limit)
		}
	}
	if !acquired {
		return false, waitingOn, message
	}
	for _, r := range rs {
		l := m.locks[r.key]
		delete(l.waiters, holder)
		l.holders[holder] = true
	}
	return true, "", ""
}

// canTake reports whether holder's turn has come: a place is free for it
// once the waiters before it have theirs.
func (l *lock) canTake(holder string, limit int) bool {
	free := limit - len(l.holders)
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
// queue; the workflows whose turn may have come are notified.
func (m *Manager) Release(holder string) {
	m.mu.Lock()
	wake := m.release(holder)
	m.mu.Unlock()
	m.notify(wake)
}

// ReleaseWorkflow releases every holder of a workflow ("namespace/name"):
// the workflow's own locks and those of its nodes.
func (m *Manager) ReleaseWorkflow(workflowKey string) {
	m.mu.Lock()
	var wake []string
	for holder := range m.byWorkflow[workflowKey] {
		wake = append(wake, m.release(holder)...)
	}
	m.mu.Unlock()
	m.notify(wake)
}

func (m *Manager) release(holder string) []string {
	wk := WorkflowKey(holder)
	var wake []string
	for key := range m.byWorkflow[wk][holder] {
		l := m.locks[key]
		if l == nil {
			continue
		}
		delete(l.holders, holder)
		delete(l.waiters, holder)
		wake = append(wake, m.turns(l)...)
	}
	if hs := m.byWorkflow[wk]; hs != nil {
		delete(hs, holder)
		if len(hs) == 0 {
			delete(m.byWorkflow, wk)
		}
	}
	return wake
}

// turns lists the workflows of the waiters that fit in a lock's free places.
func (m *Manager) turns(l *lock) []string {
	limit, err := m.limit(l.ref)
	free := limit - len(l.holders)
	if err != nil || free <= 0 || len(l.waiters) == 0 {
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

// LimitsChanged wakes the waiters that fit in their lock's free places
// now: call it when the limits may have changed (a new config).
func (m *Manager) LimitsChanged() {
	m.mu.Lock()
	var wake []string
	for _, l := range m.locks {
		wake = append(wake, m.turns(l)...)
	}
	m.mu.Unlock()
	m.notify(wake)
}

func (m *Manager) notify(keys []string) {
	if m.cfg.Notify == nil {
		return
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			m.cfg.Notify(k)
		}
	}
}

// Restore records holder as holding the lock key, whatever its limit: the
// state a stored status.synchronization shows after a restart. mutex says
// whether the status listed it under mutexes. A key braid cannot read is
// refused.
func (m *Manager) Restore(key, holder string, mutex bool) error {
	r, err := parseKey(key, mutex)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.lockFor(r)
	delete(l.waiters, holder)
	l.holders[holder] = true
	m.track(holder, key)
	return nil
}

// Holders lists the holders of a workflow that hold or wait for a lock,
// sorted.
func (m *Manager) Holders(workflowKey string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.byWorkflow[workflowKey]))
	for h := range m.byWorkflow[workflowKey] {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// Involved reports whether a workflow holds or waits for any lock.
func (m *Manager) Involved(workflowKey string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byWorkflow[workflowKey]) > 0
}

func (m *Manager) lockFor(r ref) *lock {
	l := m.locks[r.key]
	if l == nil {
		l = &lock{ref: r, holders: map[string]bool{}, waiters: map[string]waiter{}}
		m.locks[r.key] = l
	}
	return l
}

func (m *Manager) track(holder, key string) {
	wk := WorkflowKey(holder)
	hs := m.byWorkflow[wk]
	if hs == nil {
		hs = map[string]map[string]bool{}
		m.byWorkflow[wk] = hs
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
