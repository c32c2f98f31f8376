package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/synclock"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// faults counts the panics the controller recovered, and holds the one
// fault a test may inject.
type faults struct {
	panics atomic.Int64
	// beforeReconcile, when set (by tests only), runs inside the recovered
	// region just before each engine.Reconcile: a panic the engine cannot
	// be made to produce on demand.
	beforeReconcile func(wf *v1alpha1.Workflow)
}

// Panics is how many panics the controller has recovered since it was
// built: in engine.Reconcile (the workflow ended Error) and in a driver
// (ended likewise, or logged). For metrics.
func (c *Controller) Panics() int64 { return c.faults.panics.Load() }

// PanicError is a panic recovered at a boundary: what was raised, and
// where.
type PanicError struct {
	// Where names the boundary, such as "reconcile".
	Where string
	// Value is the panic value as text.
	Value string
}

func (e *PanicError) Error() string { return e.Where + " panicked: " + e.Value }

// recovered logs a recovered panic with its stack, counts it and turns it
// into a *PanicError. Call it from the deferred func that recovered v.
func (c *Controller) recovered(where, workflow string, v any) *PanicError {
	c.faults.panics.Add(1)
	e := &PanicError{Where: where, Value: fmt.Sprint(v)}
	c.log.Error("recovered a panic", "where", where, "workflow", workflow, "panic", e.Value, "stack", string(debug.Stack()))
	return e
}

// decide calls the engine on a snapshot of the workflow. A panic in the
// pass is recovered here, at its boundary: it comes back as a *PanicError,
// which ends this workflow (and only this one) Error.
func (d *driver) decide(locks *synclock.Table) (res engine.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = d.c.recovered("reconcile", workflowKey(d.wf), v)
		}
	}()
	if f := d.c.faults.beforeReconcile; f != nil {
		f(d.wf)
	}
	return engine.Reconcile(engine.Snapshot{
		Workflow: d.wf, Templates: d.req.Templates, Results: d.results, Limits: d.c.limits, Prepared: d.prepared,
		Relaunch: d.relaunch, Memos: d.memos, NoMemos: d.c.memos == nil, Locks: locks,
	}, d.c.now())
}

// failPanicked ends the workflow Error after its reconcile panicked. The
// pass may have changed the workflow in memory before it panicked, so a
// Manager's driver starts again from the stored workflow.
func (d *driver) failPanicked(ctx context.Context, pe *PanicError) error {
	if d.req.h != nil {
		if err := d.reload(ctx); err != nil {
			d.log.Warn("reload after a panic", "err", err)
		}
	}
	d.prepared = engine.NewPrepared() // what the panicked pass kept is not to be trusted
	return d.failWorkflow(ctx, "internal error: "+pe.Error())
}

// failWorkflow ends the workflow Error with msg through the normal write
// path: every node that has not ended ends Error with the same message,
// the workflow's locks are released, the status is persisted, and only
// then are the steps still running stopped. The caller runs the completion
// hook (the driver loop does, on seeing the workflow completed).
func (d *driver) failWorkflow(ctx context.Context, msg string) error {
	now := metav1.NewTime(d.c.now())
	ended := map[string]v1alpha1.NodeStatus{}
	var kill []string
	for id, n := range d.wf.Status.Nodes {
		daemon := n.Daemoned != nil && *n.Daemoned
		switch {
		case !n.Phase.Fulfilled():
			n.Phase, n.Message, n.FinishedAt = v1alpha1.NodeError, msg, now
		case !daemon:
			continue
		}
		if isRun(n) {
			kill = append(kill, id)
		}
		n.Daemoned = nil
		ended[id] = n
	}
	d.c.adm.release(workflowKey(d.wf))
	st := d.withStatus(func(st *v1alpha1.WorkflowStatus) {
		st.Phase, st.Message, st.FinishedAt = v1alpha1.WorkflowError, msg, now
		if st.StartedAt.IsZero() {
			st.StartedAt = now
		}
		st.Synchronization = nil
		completed := v1alpha1.Condition{Type: v1alpha1.ConditionTypeCompleted, Status: metav1.ConditionTrue}
		conds := slices.Clone(st.Conditions)
		if i := conditionIndex(conds, completed.Type); i >= 0 {
			conds[i] = completed
		} else {
			conds = append(conds, completed)
		}
		st.Conditions = conds
	})
	if err := d.commit(ctx, update{status: st, nodes: ended}); err != nil {
		return err
	}
	for _, id := range kill {
		if err := d.c.rt.Kill(ctx, RunID(d.wf, id)); err != nil {
			d.log.Warn("kill step", "node", id, "err", err)
		}
	}
	return nil
}

func conditionIndex(cs v1alpha1.Conditions, t v1alpha1.ConditionType) int {
	for i := range cs {
		if cs[i].Type == t {
			return i
		}
	}
	return -1
}

// guardDrive is the last boundary of a Manager's driver goroutine: a panic
// outside engine.Reconcile (in a store, runtime or hook call) is logged,
// counted, and ends that workflow Error from its stored state; the
// Manager and the other workflows go on.
func (m *Manager) guardDrive(ctx context.Context, stub *v1alpha1.Workflow, h *handle) {
	v := recover()
	if v == nil {
		return
	}
	pe := m.c.recovered("driver", h.key, v)
	if ctx.Err() != nil || h.deleted.Load() {
		return
	}
	if err := m.failStored(ctx, stub, h, "internal error: "+pe.Error(), true); err != nil {
		m.c.log.Error("end the workflow Error after a panic", "workflow", h.key, "err", err)
	}
}

// failStored loads the stored workflow and ends it Error with msg (see
// failWorkflow), then runs its completion hook and, with archive, queues it
// for the archive. A workflow already completed, or replaced under the
// same name, is left alone.
func (m *Manager) failStored(ctx context.Context, stub *v1alpha1.Workflow, h *handle, msg string, archive bool) error {
	obj, err := m.st.Get(ctx, store.KindWorkflow, stub.Namespace, stub.Name)
	if err != nil {
		return fmt.Errorf("load %s: %w", h.key, err)
	}
	wf, ok := obj.(*v1alpha1.Workflow)
	if !ok || wf.UID != stub.UID || wf.Status.Phase.Completed() {
		return nil
	}
	h.wrote(wf.ResourceVersion)
	d := m.c.newDriver(RunRequest{Workflow: wf, Templates: m.templates(wf.Namespace), events: h.events.Out(), changes: h.changes, h: h})
	if err := d.failWorkflow(ctx, msg); err != nil {
		return err
	}
	d.workflowCompleted(ctx)
	d.collectArtifacts(ctx)
	if archive {
		m.archive(ctx, d.wf)
	} else {
		m.gc.completed(d.wf, false)
	}
	return nil
}

// errPanicked reports whether err is a recovered panic.
func errPanicked(err error) (*PanicError, bool) {
	var pe *PanicError
	ok := errors.As(err, &pe)
	return pe, ok
}
