package controller

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// WorkflowHooks is implemented by a runtime that keeps resources per
// workflow rather than per step (the Kubernetes runtime: the PVCs of
// volumeClaimTemplates, pod GC at workflow completion). The controller
// finds it with a type assertion on its Runtime; the local runtime has no
// such resources and does not implement it.
type WorkflowHooks interface {
	// WorkflowStarted runs before a driver's first reconcile of a workflow
	// that is not completed: before its first step starts, and again when
	// a restarted controller picks it up, so it must be idempotent. It may
	// set fields of wf.Status that describe what it made
	// (persistentVolumeClaims); the next status write persists them. An
	// error with a method Permanent() bool that returns true ends the
	// workflow Error with the error's message; any other error is a system
	// fault and stops the driver.
	WorkflowStarted(ctx context.Context, wf *v1alpha1.Workflow) error
	// WorkflowCompleted runs once the workflow's completion is persisted.
	// It may update wf.Status the same way (the controller writes it again
	// when it changed); its error is logged.
	WorkflowCompleted(ctx context.Context, wf *v1alpha1.Workflow) error
}

// permanent is how a runtime marks an error that retrying does not cure.
type permanent interface{ Permanent() bool }

// workflowStarted calls the runtime's WorkflowStarted, if it has one. A
// permanent error ends the workflow Error (persisted, and the completion
// hook runs); the caller then sees a completed workflow.
func (d *driver) workflowStarted(ctx context.Context) error {
	h, ok := d.c.rt.(WorkflowHooks)
	if !ok || d.wf.Status.Phase.Completed() {
		return nil
	}
	err := h.WorkflowStarted(ctx, d.wf)
	var p permanent
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &p) || !p.Permanent():
		return fmt.Errorf("start workflow %s: %w", d.wf.Name, err)
	}
	return d.failStart(ctx, err.Error())
}

// failStart ends a workflow that cannot start Error with msg, persisted,
// and runs the completion hook.
func (d *driver) failStart(ctx context.Context, msg string) error {
	now := metav1.NewTime(d.c.now())
	st := &d.wf.Status
	st.Phase, st.Message, st.FinishedAt = v1alpha1.WorkflowError, msg, now
	if st.StartedAt.IsZero() {
		st.StartedAt = now
	}
	setPhaseLabels(d.wf)
	if err := d.persist(ctx, nil); err != nil {
		return fmt.Errorf("persist %s: %w", d.wf.Name, err)
	}
	d.workflowCompleted(ctx)
	return nil
}

// workflowCompleted calls the runtime's WorkflowCompleted, if it has one,
// and writes the status again when the hook changed it.
func (d *driver) workflowCompleted(ctx context.Context) {
	h, ok := d.c.rt.(WorkflowHooks)
	if !ok {
		return
	}
	before := statusWithoutNodes(&d.wf.Status)
	if err := h.WorkflowCompleted(ctx, d.wf); err != nil {
		d.c.log.Warn("workflow completed: runtime clean-up", "workflow", d.wf.Name, "err", err)
	}
	if sameStatus(before, &d.wf.Status) {
		return
	}
	if err := d.persist(ctx, nil); err != nil {
		d.c.log.Warn("workflow completed: persist the status", "workflow", d.wf.Name, "err", err)
	}
}
