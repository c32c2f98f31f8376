package synclock

import (
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
	// may now get its lock. It is called without the Locks' mutex held;
	// nil tells no one.
	Notify func(workflowKey string)
}

// Locks keeps every semaphore and mutex of one controller: a Table
// behind a mutex, whose limits it reads through Config. It is safe for
// concurrent use.
type Locks struct {
	cfg Config

	// txn is held from View to Commit (a Session) and by TryAcquire, so
	// that what a reconcile decided on its view is still true when it is
	// committed: nobody takes a lock in between.
	txn sync.Mutex
	mu  sync.Mutex
	t   *Table
}

// New returns an empty Locks.
func New(cfg Config) *Locks {
	return &Locks{cfg: cfg, t: NewTable()}
}

// TryAcquire is Table.TryAcquire on the controller's table, with the
// limits of the locks read now.
func (m *Locks) TryAcquire(holder, namespace string, s *v1alpha1.Synchronization, priority int32, created time.Time) (acquired bool, waitingOn, message string) {
	rs, err := refs(namespace, s)
	if err != nil {
		return false, "", "invalid synchronization: " + err.Error()
	}
	m.txn.Lock()
	defer m.txn.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range rs {
		m.readLimit(m.t.lockFor(r))
	}
	return m.t.tryAcquire(holder, rs, priority, created)
}

// readLimit reads a lock's limit now into the table.
func (m *Locks) readLimit(l *lock) {
	l.limit, l.limitErr = 0, ""
	n, err := m.limit(l.ref)
	if err != nil {
		l.limitErr = err.Error()
		return
	}
	l.limit = n
}

// Release gives back every lock holder holds and takes it out of every
// queue; the workflows whose turn may have come are notified.
func (m *Locks) Release(holder string) {
	m.mu.Lock()
	wake := m.t.Release(holder)
	m.mu.Unlock()
	m.notify(wake)
}

// ReleaseWorkflow releases every holder of a workflow ("namespace/name"):
// the workflow's own locks and those of its nodes.
func (m *Locks) ReleaseWorkflow(workflowKey string) {
	m.mu.Lock()
	wake := m.t.ReleaseWorkflow(workflowKey)
	m.mu.Unlock()
	m.notify(wake)
}

// LimitsChanged wakes the waiters that fit in their lock's free places
// now: call it when the limits may have changed (a new config).
func (m *Locks) LimitsChanged() {
	m.mu.Lock()
	var wake []string
	for _, l := range m.t.locks {
		m.readLimit(l)
		wake = append(wake, l.turns()...)
	}
	m.mu.Unlock()
	m.notify(wake)
}

func (m *Locks) notify(keys []string) {
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
func (m *Locks) Restore(key, holder string, mutex bool) error {
	r, err := parseKey(key, mutex)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.t.lockFor(r)
	m.readLimit(l)
	m.t.take(holder, []ref{r})
	return nil
}

// Holders lists the holders of a workflow that hold or wait for a lock,
// sorted.
func (m *Locks) Holders(workflowKey string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.Holders(workflowKey)
}

// Involved reports whether a workflow holds or waits for any lock.
func (m *Locks) Involved(workflowKey string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.Involved(workflowKey)
}

// Status is Table.Status on the controller's table.
func (m *Locks) Status(workflowKey string) *v1alpha1.SynchronizationStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.Status(workflowKey)
}
