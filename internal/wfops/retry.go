package wfops

import (
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// RetryOptions are the options of argo retry.
type RetryOptions struct {
	// RestartSuccessful also restarts the Succeeded nodes NodeFieldSelector
	// matches (--restart-successful).
	RestartSuccessful bool
	// NodeFieldSelector selects the nodes to restart; it has an effect only
	// with RestartSuccessful (--node-field-selector).
	NodeFieldSelector string
	// Parameters override spec.arguments.parameters ("NAME=VALUE", -p).
	Parameters []string
}

// Retry returns a copy of a Failed or Error workflow set to run again, and
// the IDs of the nodes it deleted (sorted). What completed stays completed:
//
//   - Deleted, with everything below them (children, transitively; in a DAG
//     or steps node that includes the tasks and later step groups hung below
//     them): every Failed or Error node that is not a Steps, DAG, StepGroup
//     or TaskGroup node (a failed Retry node goes as a whole, so its
//     retryStrategy starts over), except a failure already absorbed by a
//     Succeeded Retry, Steps, DAG, StepGroup or TaskGroup node above it (a
//     failed attempt of a Retry that then succeeded, a step whose group
//     succeeded through continueOn); with RestartSuccessful, every node the
//     selector matches and its Downstream; the workflow's exit handler; and
//     the exit handler and hooks of every reopened node.
//   - Reopened (Running, no message, no finishedAt): every Failed or Error
//     Steps, DAG, StepGroup or TaskGroup node, and every such node or Retry
//     node that contains a deleted or reopened node, up to the root.
//   - The workflow becomes Running: no message, no finishedAt, startedAt =
//     now, the completed label and condition cleared, spec.shutdown cleared
//     (a stopped workflow can be retried), an activeDeadlineSeconds of 0
//     removed, and the annotation AnnotationRetryGeneration incremented.
//     Global outputs that only deleted nodes exported are removed.
//
// A workflow that is not Failed or Error is an ErrState, unless it
// Succeeded and RestartSuccessful comes with a selector. A node still
// Pending or Running is an ErrState. A bad selector or parameter, or a
// selector (with RestartSuccessful) that matches no node, is an
// ErrBadRequest.
func Retry(wf *v1alpha1.Workflow, opts RetryOptions, now time.Time) (*v1alpha1.Workflow, []string, error) {
	if wf == nil {
		return nil, nil, badRequest("no workflow to retry")
	}
	if err := checkRetryable(wf, opts); err != nil {
		return nil, nil, err
	}
	out := wf.DeepCopy()
	if err := overrideParameters(out, opts.Parameters); err != nil {
		return nil, nil, err
	}
	del, reopen, err := retrySeeds(out, opts)
	if err != nil {
		return nil, nil, err
	}
	deleted := prune(out, del, reopen, now)
	reopenWorkflow(out, now)
	return out, deleted, nil
}

// checkRetryable applies argo's rules on which workflows can be retried.
func checkRetryable(wf *v1alpha1.Workflow, opts RetryOptions) error {
	switch wf.Status.Phase {
	case v1alpha1.WorkflowFailed, v1alpha1.WorkflowError:
	case v1alpha1.WorkflowSucceeded:
		if !opts.RestartSuccessful || opts.NodeFieldSelector == "" {
			return badState("workflow must be Failed/Error to retry; to retry a Succeeded workflow, set restartSuccessful and a nodeFieldSelector")
		}
	default:
		phase := string(wf.Status.Phase)
		if phase == "" {
			phase = "Pending"
		}
		return badState("workflow must be Failed/Error to retry; it is %s", phase)
	}
	if err := checkNoActiveNode(wf, "retried"); err != nil {
		return err
	}
	if opts.NodeFieldSelector != "" {
		if _, err := ParseNodeFieldSelector(opts.NodeFieldSelector); err != nil {
			return err
		}
	}
	return nil
}

// checkNoActiveNode refuses a workflow that still has a Pending or Running
// node: its step may still be running.
func checkNoActiveNode(wf *v1alpha1.Workflow, verb string) error {
	for _, id := range sortedIDs(wf.Status.Nodes) {
		n := wf.Status.Nodes[id]
		if n.Phase == v1alpha1.NodePending || n.Phase == v1alpha1.NodeRunning {
			return badState("workflow cannot be %s with node %s in %s phase", verb, n.Name, n.Phase)
		}
	}
	return nil
}

// retrySeeds returns the nodes to delete (with their subtrees) and the
// group nodes to reopen.
func retrySeeds(wf *v1alpha1.Workflow, opts RetryOptions) (del, reopen []string, err error) {
	nodes := wf.Status.Nodes
	t := newTree(nodes)
	for _, id := range sortedIDs(nodes) {
		n := nodes[id]
		if !n.Phase.FailedOrError() || absorbed(t, id) {
			continue
		}
		if isGroupType(n.Type) {
			reopen = append(reopen, id)
		} else {
			del = append(del, id)
		}
	}
	if !opts.RestartSuccessful || opts.NodeFieldSelector == "" {
		return del, reopen, nil
	}
	sel, err := ParseNodeFieldSelector(opts.NodeFieldSelector)
	if err != nil {
		return nil, nil, err
	}
	matched := matchNodes(nodes, sel, nil)
	if len(matched) == 0 {
		return nil, nil, badRequest("no node matches node field selector %q", opts.NodeFieldSelector)
	}
	del = append(del, matched...)
	del = append(del, Downstream(wf, matched)...)
	return del, reopen, nil
}

// absorbed reports whether a failure was already dealt with: a Retry, Steps,
// DAG, StepGroup or TaskGroup node containing it Succeeded (a Retry that
// succeeded on a later attempt, a step whose continueOn was honoured).
func absorbed(t *tree, id string) bool {
	for _, a := range t.ancestors(id) {
		if n := t.nodes[a]; reopenable(n.Type) && n.Phase == v1alpha1.NodeSucceeded {
			return true
		}
	}
	return false
}

// reopenWorkflow sets a completed workflow back to Running.
func reopenWorkflow(wf *v1alpha1.Workflow, now time.Time) {
	st := &wf.Status
	st.Phase = v1alpha1.WorkflowRunning
	st.Message = ""
	st.FinishedAt = metav1.Time{}
	st.StartedAt = metav1.NewTime(now)
	// The engine counts progress and resource use by delta; cleared, they
	// are counted again from the nodes that remain.
	st.Progress = ""
	st.ResourcesDuration = nil
	setCompletedCondition(st)
	if wf.Labels == nil {
		wf.Labels = map[string]string{}
	}
	delete(wf.Labels, labelCompleted)
	delete(wf.Labels, labelArchiving)
	wf.Labels[labelPhase] = string(v1alpha1.WorkflowRunning)
	clearShutdown(&wf.Spec)
	if st.StoredWorkflowSpec != nil {
		clearShutdown(st.StoredWorkflowSpec)
	}
	if wf.Annotations == nil {
		wf.Annotations = map[string]string{}
	}
	gen, _ := strconv.Atoi(wf.Annotations[AnnotationRetryGeneration])
	wf.Annotations[AnnotationRetryGeneration] = strconv.Itoa(max(gen, 0) + 1)
}

// clearShutdown removes a Stop or Terminate, and the activeDeadlineSeconds
// of 0 that older clients set to terminate.
func clearShutdown(s *v1alpha1.WorkflowSpec) {
	s.Shutdown = ""
	if s.ActiveDeadlineSeconds != nil && *s.ActiveDeadlineSeconds == 0 {
		s.ActiveDeadlineSeconds = nil
	}
}

// setCompletedCondition sets the Completed condition to False, if present.
func setCompletedCondition(st *v1alpha1.WorkflowStatus) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1alpha1.ConditionTypeCompleted {
			st.Conditions[i].Status = metav1.ConditionFalse
			st.Conditions[i].Message = ""
		}
	}
}
