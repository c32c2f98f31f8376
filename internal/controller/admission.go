package controller

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/braidwf/braid/internal/store"
	synclock "github.com/braidwf/braid/internal/synclock"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Admission configures synchronization (semaphores and mutexes) and how
// many workflows run at once.
type Admission struct {
	// ConfigMapValue resolves the ConfigMap key of a semaphore's limit
	// (config.Config.ConfigMapValue); nil resolves nothing.
	ConfigMapValue func(namespace, name, key string) (string, bool)
	// DatabaseLimit gives the limit of the database semaphore
	// "namespace/key"; nil knows none.
	DatabaseLimit func(key string) (int, bool)
	// Parallelism and NamespaceParallelism bound the workflows that run at
	// once, in all and per namespace; 0 bounds nothing.
	Parallelism, NamespaceParallelism int
}

// throttledMessage is Argo's message on a workflow held back by
// parallelism or namespaceParallelism.
const throttledMessage = "Workflow processing has been postponed because too many workflows are already running"

// admission is the controller's side of synchronization: the locks, the
// throttle, and the wake-up channel of each driver, by workflow key.
type admission struct {
	locks    *synclock.Locks
	throttle *synclock.Throttler

	mu     sync.Mutex
	wakers map[string]chan struct{}
}

func newAdmission(a Admission) *admission {
	ad := &admission{wakers: map[string]chan struct{}{}}
	ad.locks = synclock.New(synclock.Config{ConfigMapValue: a.ConfigMapValue, DatabaseLimit: a.DatabaseLimit, Notify: ad.wake})
	ad.throttle = synclock.NewThrottler(a.Parallelism, a.NamespaceParallelism, ad.wake)
	return ad
}

// LimitsChanged tells the controller that semaphore limits may have
// changed (a new config): the workflows and nodes waiting for a lock that
// now has room try again. The Manager also does this every
// limitsRecheck, for limits read from elsewhere (ConfigMaps in a cluster).
func (c *Controller) LimitsChanged() { c.adm.locks.LimitsChanged() }

// limitsRecheck is how often a Manager looks again at the limits of the
// locks that have waiters.
const limitsRecheck = 10 * time.Second

// wake tells the driver of a workflow, if any, to look again.
func (a *admission) wake(key string) {
	a.mu.Lock()
	ch := a.wakers[key]
	a.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// listen registers the wake-up channel of a workflow's driver; the
// returned func unregisters it.
func (a *admission) listen(key string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	a.mu.Lock()
	a.wakers[key] = ch
	a.mu.Unlock()
	return ch, func() {
		a.mu.Lock()
		if a.wakers[key] == ch {
			delete(a.wakers, key)
		}
		a.mu.Unlock()
	}
}

// release gives back everything a workflow holds or waits for.
func (a *admission) release(key string) {
	a.locks.ReleaseWorkflow(key)
	a.throttle.Remove(key)
}

// driverAdmission is a driver's admission state.
type driverAdmission struct {
	wake     <-chan struct{}
	admitted bool
	// needs are the synchronizations whose locks the engine asked for.
	needs []*v1alpha1.Synchronization
}

func workflowKey(wf *v1alpha1.Workflow) string { return wf.Namespace + "/" + wf.Name }

func priority(wf *v1alpha1.Workflow) int32 {
	if p := wf.ExecSpec().Priority; p != nil {
		return *p
	}
	return 0
}

func workflowSync(wf *v1alpha1.Workflow) *v1alpha1.Synchronization {
	return wf.ExecSpec().Synchronization
}

// listen registers the driver for wake-ups; the returned func ends that.
func (d *driver) listen() func() {
	wake, stop := d.c.adm.listen(workflowKey(d.wf))
	d.adm.wake = wake
	return stop
}

// admit decides whether the workflow may run now (Argo's throttler, then
// its workflow-level locks). One that may not stays Pending (or keeps its
// phase) with the reason as its message, and is not reconciled until a
// wake-up. A workflow being shut down is let through to finish.
func (d *driver) admit(ctx context.Context) (bool, error) {
	wf := d.wf
	if d.adm.admitted || wf.Status.Phase.Completed() {
		return true, nil
	}
	a, key, prio, created := d.c.adm, workflowKey(wf), priority(wf), wf.CreationTimestamp.Time
	if wf.Spec.Shutdown == "" {
		if wf.Status.Phase == v1alpha1.WorkflowRunning {
			a.throttle.Started(key, wf.Namespace)
		} else if !a.throttle.Admit(key, wf.Namespace, prio, created) {
			return false, d.postpone(ctx, throttledMessage)
		}
		if s := workflowSync(wf); s != nil {
			if ok, _, msg := a.locks.TryAcquire(key, wf.Namespace, s, prio, created); !ok {
				return false, d.postpone(ctx, msg)
			}
		}
	}
	d.adm.admitted = true
	if wf.Status.Phase == v1alpha1.WorkflowPending {
		wf.Status.Message = "" // the engine starts it Running
	}
	return true, nil
}

// postpone records why the workflow waits; only what changed is written.
func (d *driver) postpone(ctx context.Context, msg string) error {
	sync := d.c.adm.locks.Status(workflowKey(d.wf))
	return d.commit(ctx, update{status: d.withStatus(func(st *v1alpha1.WorkflowStatus) {
		if st.Phase == v1alpha1.WorkflowUnknown {
			st.Phase = v1alpha1.WorkflowPending
		}
		st.Message, st.Synchronization = msg, sync
	})})
}

// lockView is the lock state of the next pass: the part of the lock table
// this workflow holds, waits for or asked for, in a Session that holds the
// Locks until the pass's decisions are committed (or aborted). A
// workflow with no lock at all gets an empty table and no Session.
func (d *driver) lockView() (*synclock.Session, *synclock.Table) {
	key := workflowKey(d.wf)
	if len(d.adm.needs) == 0 && !d.c.adm.locks.Involved(key) {
		return nil, synclock.NewTable()
	}
	return d.c.adm.locks.View(key, d.wf.Namespace, d.adm.needs)
}

// wantLocks remembers the synchronizations a pass asked for: every later
// view of this workflow holds their locks.
func (d *driver) wantLocks(needs []*v1alpha1.Synchronization) {
	for _, s := range needs {
		if !slices.Contains(d.adm.needs, s) {
			d.adm.needs = append(d.adm.needs, s)
		}
	}
}

// restoreAdmission rebuilds the locks and the throttle from the stored
// workflows before any is driven (after a restart): the holders their
// status.synchronization records get their locks back, and the running
// workflows count against parallelism.
func (m *Manager) restoreAdmission(ctx context.Context) {
	cont := ""
	for {
		objs, next, err := m.st.List(ctx, store.KindWorkflow, "", store.ListOptions{Limit: 500, Continue: cont})
		if err != nil {
			m.c.log.Warn("restore synchronization: list workflows", "err", err)
			return
		}
		for _, o := range objs {
			wf, ok := o.(*v1alpha1.Workflow)
			if !ok || wf.Status.Phase.Completed() {
				continue
			}
			if err := m.c.adm.locks.RestoreStatus(wf.Status.Synchronization); err != nil {
				m.c.log.Warn("restore synchronization", "workflow", workflowKey(wf), "err", err)
			}
			if wf.Status.Phase == v1alpha1.WorkflowRunning {
				m.c.adm.throttle.Started(workflowKey(wf), wf.Namespace)
			}
		}
		if next == "" {
			return
		}
		cont = next
	}
}
