package synclock

import (
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Op is what a Decision does to the table.
type Op string

// The decisions a reconcile returns about template-level locks.
const (
	// OpAcquire: the holder takes every lock of Sync (it was its turn).
	OpAcquire Op = "Acquire"
	// OpWait: the holder joins the queue of every lock of Sync it does not
	// hold, keeping its place if it is queued already.
	OpWait Op = "Wait"
	// OpRelease: the holder gives back every lock and leaves every queue.
	OpRelease Op = "Release"
	// OpReleaseWorkflow: every holder of the workflow Holder names
	// ("namespace/name") does so.
	OpReleaseWorkflow Op = "ReleaseWorkflow"
)

// Decision is one change to the lock table that a reconcile decided on
// its view: plain data, committed by the controller after it has
// persisted the status that records it.
type Decision struct {
	Op     Op
	Holder string
	// Namespace, Sync, Priority and Created are set for Acquire and Wait:
	// the locks and the holder's place in their queues.
	Namespace string
	Sync      *v1alpha1.Synchronization
	Priority  int32
	Created   time.Time
}

// apply carries d out on t and returns the workflows whose turn may have
// come. An Acquire takes the locks whatever the table says: it was
// decided on a view of this table taken in the same Session.
func (t *Table) apply(d Decision) []string {
	switch d.Op {
	case OpAcquire, OpWait:
		rs, err := refs(d.Namespace, d.Sync)
		if err != nil {
			return nil
		}
		if d.Op == OpAcquire {
			t.take(d.Holder, rs)
			return nil
		}
		for _, r := range rs {
			l := t.lockFor(r)
			if _, queued := l.waiters[d.Holder]; queued || l.holders[d.Holder] {
				continue
			}
			t.seq++
			l.waiters[d.Holder] = waiter{holder: d.Holder, priority: d.Priority, created: d.Created, seq: t.seq}
			t.track(d.Holder, r.key)
		}
	case OpRelease:
		return t.Release(d.Holder)
	case OpReleaseWorkflow:
		return t.ReleaseWorkflow(d.Holder)
	}
	return nil
}

// Session is one reconcile's hold on the Locks: from View to Commit or
// Abort, no one else takes a lock, so the decisions made on the view stay
// true. Keep it short: it spans one reconcile and one store write.
type Session struct {
	m    *Locks
	done bool
}

// View starts a Session and returns it with a copy of the part of the
// table that the workflow workflowKey needs: every lock it holds or waits
// for, and the locks that needs name (read from namespace), each with its
// limit read now. The copy is the caller's.
func (m *Locks) View(workflowKey, namespace string, needs []*v1alpha1.Synchronization) (*Session, *Table) {
	m.txn.Lock()
	m.mu.Lock()
	defer m.mu.Unlock()
	v := NewTable()
	v.seq = m.t.seq
	for _, keys := range m.t.byWorkflow[workflowKey] {
		for key := range keys {
			if l := m.t.locks[key]; l != nil && v.locks[key] == nil {
				m.readLimit(l)
				v.locks[key] = l.clone()
			}
		}
	}
	for _, s := range needs {
		rs, err := refs(namespace, s)
		if err != nil {
			continue
		}
		for _, r := range rs {
			if v.locks[r.key] == nil {
				l := m.t.lockFor(r)
				m.readLimit(l)
				v.locks[r.key] = l.clone()
			}
		}
	}
	if hs := m.t.byWorkflow[workflowKey]; hs != nil {
		v.copyWorkflow(workflowKey, hs)
	}
	return &Session{m: m}, v
}

// Commit carries out the decisions on the controller's table, ends the
// Session and wakes the workflows whose turn may have come.
func (s *Session) Commit(ds []Decision) {
	if s == nil || s.done {
		return
	}
	s.m.mu.Lock()
	var wake []string
	for _, d := range ds {
		wake = append(wake, s.m.t.apply(d)...)
	}
	s.m.mu.Unlock()
	s.end()
	s.m.notify(wake)
}

// Abort ends the Session and changes nothing (the decisions were not
// persisted). Both Abort and Commit do nothing on a nil or ended Session.
func (s *Session) Abort() { s.end() }

func (s *Session) end() {
	if s != nil && !s.done {
		s.done = true
		s.m.txn.Unlock()
	}
}
