package controller

import (
	"context"
	"fmt"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// update is one decided change of a workflow, as a value: what an engine
// pass decided, or what the controller's own deciders decided (admission
// holding a workflow back, a workflow that cannot start, a runtime's
// workflow hook, artifact GC, a workflow the controller fails). None of
// them changes the workflow itself; commit applies the update and writes
// it, and is the one place that writes a workflow.
type update struct {
	// status, when set, is the workflow's new status. Its Nodes map is
	// the workflow's own (an engine pass returns the map it was given);
	// a decider that changes nodes lists them in nodes instead.
	status *v1alpha1.WorkflowStatus
	// nodes replace single nodes of the status.
	nodes map[string]v1alpha1.NodeStatus
	// changed lists the IDs of the nodes to write besides those in nodes.
	changed []string
	// meta, when set, is the workflow's new labels and annotations.
	meta *engine.Metadata
	// before is the status before an engine pass changed it in place
	// (statusWithoutNodes); nil: the workflow's status when commit starts.
	before *v1alpha1.WorkflowStatus
}

// withStatus returns a shallow copy of the workflow's status, for a
// decider to change and return in an update.
func (d *driver) withStatus(change func(st *v1alpha1.WorkflowStatus)) *v1alpha1.WorkflowStatus {
	st := d.wf.Status
	change(&st)
	return &st
}

// commit applies u to the workflow and writes what changed: the status
// and the changed nodes, or the whole object when the spec, labels or
// annotations changed. Nothing is written when nothing changed.
func (d *driver) commit(ctx context.Context, u update) error {
	before := u.before
	if before == nil {
		before = statusWithoutNodes(&d.wf.Status)
	}
	if u.status != nil {
		d.wf.Status = *u.status
	}
	changed := u.changed
	if len(u.nodes) > 0 {
		if d.wf.Status.Nodes == nil {
			d.wf.Status.Nodes = v1alpha1.Nodes{}
		}
		for id, n := range u.nodes {
			d.wf.Status.Nodes[id] = n
			changed = append(changed, id)
		}
	}
	if m := u.meta; m != nil { // workflowMetadata: a status write does not carry it
		d.wf.Labels, d.wf.Annotations = m.Labels, m.Annotations
		d.specChanged = true
	}
	labels := setPhaseLabels(d.wf)
	labels = setPodNameFormat(d.wf) || labels
	if !d.specChanged && !labels && len(changed) == 0 && sameStatus(before, &d.wf.Status) {
		return nil
	}
	var err error
	if d.specChanged {
		d.specChanged = false
		err = d.c.store.Update(ctx, d.wf)
	} else {
		err = d.c.store.UpdateWorkflowStatus(ctx, d.wf, changed)
	}
	if err != nil {
		return fmt.Errorf("persist %s: %w", d.wf.Name, err)
	}
	if d.req.h != nil {
		d.req.h.wrote(d.wf.ResourceVersion)
	}
	if d.req.Observe != nil && len(changed) > 0 {
		d.req.Observe(d.wf, changed)
	}
	return nil
}
