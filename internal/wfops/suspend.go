package wfops

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Suspend returns a copy of the workflow with spec.suspend set: the
// controller starts no new step until it is resumed (argo suspend). A
// completed workflow is an ErrState.
func Suspend(wf *v1alpha1.Workflow) (*v1alpha1.Workflow, error) {
	if wf == nil {
		return nil, badRequest("no workflow to suspend")
	}
	if completed(wf) {
		return nil, badState("cannot suspend completed workflows")
	}
	out := wf.DeepCopy()
	out.Spec.Suspend = new(true)
	return out, nil
}

// Resume returns a copy of the workflow resumed (argo resume). Without a
// selector it clears spec.suspend and completes every Running Suspend node;
// with one it completes only the Running Suspend nodes the selector matches
// and leaves spec.suspend alone. A completed node is Succeeded, finishedAt
// now, and each output parameter still waiting to be supplied takes its
// valueFrom.default.
//
// A completed workflow, or a supplied output with neither a value nor a
// default, is an ErrState; a bad selector, or one that matches no Running
// Suspend node, is an ErrBadRequest.
func Resume(wf *v1alpha1.Workflow, nodeFieldSelector string, now time.Time) (*v1alpha1.Workflow, error) {
	if wf == nil {
		return nil, badRequest("no workflow to resume")
	}
	if completed(wf) {
		return nil, badState("cannot resume completed workflows")
	}
	out := wf.DeepCopy()
	if nodeFieldSelector == "" {
		out.Spec.Suspend = nil
	}
	targets, err := suspendTargets(out, nodeFieldSelector)
	if err != nil {
		return nil, err
	}
	for _, id := range targets {
		n, err := resumeNode(out.Status.Nodes[id], now)
		if err != nil {
			return nil, err
		}
		out.Status.Nodes[id] = n
	}
	return out, nil
}

// suspendTargets returns the Running Suspend nodes the selector matches, or
// all of them when the selector is empty. A selector that matches none is an
// ErrBadRequest.
func suspendTargets(wf *v1alpha1.Workflow, nodeFieldSelector string) ([]string, error) {
	if nodeFieldSelector == "" {
		var ids []string
		for _, id := range sortedIDs(wf.Status.Nodes) {
			if isActiveSuspend(wf.Status.Nodes[id]) {
				ids = append(ids, id)
			}
		}
		return ids, nil
	}
	sel, err := ParseNodeFieldSelector(nodeFieldSelector)
	if err != nil {
		return nil, err
	}
	ids := matchNodes(wf.Status.Nodes, sel, isActiveSuspend)
	if len(ids) == 0 {
		return nil, badRequest("no running suspend node matches node field selector %q", nodeFieldSelector)
	}
	return ids, nil
}

// resumeNode completes a suspend node as Succeeded, giving supplied outputs
// that were not set their default.
func resumeNode(n v1alpha1.NodeStatus, now time.Time) (v1alpha1.NodeStatus, error) {
	if n.Outputs != nil {
		for i, p := range n.Outputs.Parameters {
			if p.ValueFrom == nil || p.ValueFrom.Supplied == nil {
				continue
			}
			if p.ValueFrom.Default == nil {
				return n, badState("node %s: raw output parameter '%s' has not been set and does not have a default value; set it with argo node set first",
					n.Name, p.Name)
			}
			n.Outputs.Parameters[i].Value = p.ValueFrom.Default
			n.Outputs.Parameters[i].ValueFrom = nil
		}
	}
	n.Phase = v1alpha1.NodeSucceeded
	n.FinishedAt = metav1.NewTime(now)
	return n, nil
}
