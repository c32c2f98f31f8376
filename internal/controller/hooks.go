package controller

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// WorkflowHooks is implemented by a runtime that keeps resources per
// workflow rather than per step (the Kubernetes runtime: the PVCs of
// volumeClaimTemplates, pod GC at workflow completion). The local runtime
// has no such resources and has no hooks (Options.Hooks is nil).
type WorkflowHooks interface {
	// WorkflowStarted runs before a driver's first reconcile of a workflow
	// that is not completed: before its first step starts, and again when
	// a restarted controller picks it up, so it must be idempotent. It
	// returns what it made for the status (persistentVolumeClaims), which
	// the controller writes. An error with a method Permanent() bool that
	// returns true ends the workflow Error with the error's message; any
	// other error is a system fault, retried with backoff.
	WorkflowStarted(ctx context.Context, wf *v1alpha1.Workflow) (runtime.WorkflowResources, error)
	// WorkflowCompleted runs once the workflow's completion is written. It
	// returns what the status still records of its resources, which the
	// controller writes when it changed; its error is logged.
	WorkflowCompleted(ctx context.Context, wf *v1alpha1.Workflow) (runtime.WorkflowResources, error)
}

// permanent is how a runtime marks an error that retrying does not cure.
type permanent interface{ Permanent() bool }

// workflowStarted calls the runtime's WorkflowStarted, if it has one, and
// writes what it made. A permanent error ends the workflow Error (written,
// and the completion hook runs); the caller then sees a completed
// workflow.
func (d *driver) workflowStarted(ctx context.Context) error {
	h := d.c.hooks
	if h == nil || d.wf.Status.Phase.Completed() {
		return nil
	}
	res, err := h.WorkflowStarted(ctx, d.wf)
	var p permanent
	switch {
	case err == nil:
		return d.commit(ctx, update{status: d.withStatus(func(st *v1alpha1.WorkflowStatus) {
			st.PersistentVolumeClaims = res.PersistentVolumeClaims
		})})
	case !errors.As(err, &p) || !p.Permanent():
		return fmt.Errorf("start workflow %s: %w", d.wf.Name, err)
	}
	return d.failStart(ctx, err.Error())
}

// failStart ends a workflow that cannot start Error with msg, written; the
// driver's loop then runs the completion hook.
func (d *driver) failStart(ctx context.Context, msg string) error {
	now := metav1.NewTime(d.c.now())
	return d.commit(ctx, update{status: d.withStatus(func(st *v1alpha1.WorkflowStatus) {
		st.Phase, st.Message, st.FinishedAt = v1alpha1.WorkflowError, msg, now
		if st.StartedAt.IsZero() {
			st.StartedAt = now
		}
	})})
}

// workflowCompleted calls the runtime's WorkflowCompleted, if it has one,
// and writes what it returns when that changed the status.
func (d *driver) workflowCompleted(ctx context.Context) {
	h := d.c.hooks
	if h == nil {
		return
	}
	res, err := h.WorkflowCompleted(ctx, d.wf)
	if err != nil {
		d.log.Warn("workflow completed: runtime clean-up", "err", err)
	}
	err = d.commit(ctx, update{status: d.withStatus(func(st *v1alpha1.WorkflowStatus) {
		st.PersistentVolumeClaims = res.PersistentVolumeClaims
	})})
	if err != nil {
		d.log.Warn("workflow completed: write the status", "err", err)
	}
}
