package wfops

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// ResubmitOptions are the options of argo resubmit.
type ResubmitOptions struct {
	// Memoized keeps the nodes that Succeeded (--memoized).
	Memoized bool
	// Parameters override spec.arguments.parameters ("NAME=VALUE", -p).
	Parameters []string
}

// Resubmit returns a new Workflow to create from an existing one (argo
// resubmit). It has generateName "<name>-" and no name, the same namespace,
// owner references, labels and annotations except those the controller or
// braid set (workflows.argoproj.io/phase, /completed, /workflow,
// /workflow-archiving-status, braid.dev/*), and the label
// workflows.argoproj.io/resubmitted-from-workflow=<name>. Its spec is a copy
// with spec.shutdown and spec.suspend cleared and the parameters overridden.
//
// Without Memoized the status is empty. With Memoized, allowed only for a
// Failed or Error workflow (else ErrState), the status keeps what Retry
// would keep (the Succeeded nodes; failed ones, their subtrees and the exit
// handlers removed; their containers Running again) with the phase empty so
// that the controller starts it. Node names and IDs still carry the old
// name: once the store has assigned the new name, call RenameNodes.
func Resubmit(wf *v1alpha1.Workflow, opts ResubmitOptions) (*v1alpha1.Workflow, error) {
	if wf == nil {
		return nil, badRequest("no workflow to resubmit")
	}
	if opts.Memoized && wf.Status.Phase != v1alpha1.WorkflowFailed && wf.Status.Phase != v1alpha1.WorkflowError {
		return nil, badState("workflow must be Failed/Error to resubmit in memoized mode")
	}
	src := wf.DeepCopy()
	if err := overrideParameters(src, opts.Parameters); err != nil {
		return nil, err
	}
	out := &v1alpha1.Workflow{TypeMeta: src.TypeMeta, Spec: src.Spec}
	out.ObjectMeta = resubmitMeta(src.ObjectMeta)
	clearShutdown(&out.Spec)
	out.Spec.Suspend = nil
	if opts.Memoized {
		status, err := memoizedStatus(src)
		if err != nil {
			return nil, err
		}
		out.Status = status
	}
	return out, nil
}

// resubmitMeta builds the metadata of the resubmitted workflow.
func resubmitMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		GenerateName:    m.Name + "-",
		Namespace:       m.Namespace,
		OwnerReferences: m.OwnerReferences,
		Labels:          map[string]string{},
	}
	for k, v := range m.Labels {
		if !controlledKey(k) {
			out.Labels[k] = v
		}
	}
	for k, v := range m.Annotations {
		if !controlledKey(k) {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	out.Labels[labelResubmittedFrom] = m.Name
	return out
}

// controlledKey reports whether a label or annotation belongs to the old
// run rather than to the workflow.
func controlledKey(k string) bool {
	switch k {
	case labelPhase, labelCompleted, labelWorkflow, labelArchiving:
		return true
	}
	return strings.HasPrefix(k, braidPrefix)
}

// memoizedStatus is the status a memoized resubmit starts from.
func memoizedStatus(wf *v1alpha1.Workflow) (v1alpha1.WorkflowStatus, error) {
	if err := checkNoActiveNode(wf, "resubmitted in memoized mode"); err != nil {
		return v1alpha1.WorkflowStatus{}, err
	}
	del, reopen, err := retrySeeds(wf, RetryOptions{})
	if err != nil {
		return v1alpha1.WorkflowStatus{}, err
	}
	prune(wf, del, reopen, time.Time{})
	st := wf.Status
	if st.StoredWorkflowSpec != nil {
		clearShutdown(st.StoredWorkflowSpec)
		st.StoredWorkflowSpec.Suspend = nil
	}
	return v1alpha1.WorkflowStatus{
		Nodes:                       st.Nodes,
		StoredTemplates:             st.StoredTemplates,
		StoredWorkflowSpec:          st.StoredWorkflowSpec,
		Outputs:                     st.Outputs,
		ArtifactRepositoryRef:       st.ArtifactRepositoryRef,
		TaskResultsCompletionStatus: st.TaskResultsCompletionStatus,
	}, nil
}

// RenameNodes rewrites the nodes of a memoized resubmit, copied from the
// workflow oldName, for the workflow's own (now assigned) name: each node
// name's oldName prefix becomes wf.Name, each ID is recomputed with
// v1alpha1.NodeID, and children, boundaryID, outboundNodes and the keys of
// taskResultsCompletionStatus follow. A displayName is kept, except one that
// was the whole old node name (a node without boundary, such as the root),
// which becomes the new name. An empty wf.Name, or a node whose name does
// not start with oldName, is an ErrBadRequest; wf is left unchanged then.
func RenameNodes(wf *v1alpha1.Workflow, oldName string) error {
	if wf == nil || wf.Name == "" {
		return badRequest("cannot rename nodes: the workflow has no name yet")
	}
	if oldName == wf.Name {
		return nil
	}
	newID, err := renamedIDs(wf, oldName)
	if err != nil {
		return err
	}
	mapIDs := func(ids []string) []string {
		var out []string
		for _, id := range ids {
			if n, ok := newID[id]; ok {
				out = append(out, n)
			}
		}
		return out
	}
	nodes := make(v1alpha1.Nodes, len(wf.Status.Nodes))
	for id, n := range wf.Status.Nodes {
		oldNodeName := n.Name
		n.Name = wf.Name + strings.TrimPrefix(n.Name, oldName)
		n.ID = newID[id]
		if n.DisplayName == oldNodeName {
			n.DisplayName = n.Name
		}
		if b, ok := newID[n.BoundaryID]; ok {
			n.BoundaryID = b
		}
		n.Children, n.OutboundNodes = mapIDs(n.Children), mapIDs(n.OutboundNodes)
		nodes[n.ID] = n
	}
	wf.Status.Nodes = nodes
	if trc := wf.Status.TaskResultsCompletionStatus; trc != nil {
		renamed := make(map[string]bool, len(trc))
		for id, v := range trc {
			if n, ok := newID[id]; ok {
				renamed[n] = v
			}
		}
		wf.Status.TaskResultsCompletionStatus = renamed
	}
	return nil
}

// renamedIDs maps each old node ID to the ID of its renamed node.
func renamedIDs(wf *v1alpha1.Workflow, oldName string) (map[string]string, error) {
	m := make(map[string]string, len(wf.Status.Nodes))
	for id, n := range wf.Status.Nodes {
		if !strings.HasPrefix(n.Name, oldName) {
			return nil, badRequest("cannot rename node %s: its name does not start with %q", n.Name, oldName)
		}
		m[id] = v1alpha1.NodeID(wf.Name, wf.Name+strings.TrimPrefix(n.Name, oldName))
	}
	return m, nil
}
