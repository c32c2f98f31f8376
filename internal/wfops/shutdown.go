package wfops

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// DefaultStopMessage is the message of a suspend node stopped through a
// selector when no message is given; it is the one a Stop shutdown gives
// suspend nodes.
const DefaultStopMessage = "Stopped with strategy 'Stop'"

// Stop returns a copy of the workflow being stopped (argo stop). Without a
// selector it sets spec.shutdown to Stop: the controller starts no new step,
// fails the running ones, and still runs exit handlers. With a selector it
// only fails the Running Suspend nodes the selector matches, with the
// message (DefaultStopMessage when empty) and finishedAt now, as argo does.
// A completed workflow is an ErrState; a bad selector, or one that matches
// no Running Suspend node, is an ErrBadRequest.
func Stop(wf *v1alpha1.Workflow, nodeFieldSelector, message string, now time.Time) (*v1alpha1.Workflow, error) {
	if err := checkShutdown(wf); err != nil {
		return nil, err
	}
	out := wf.DeepCopy()
	if nodeFieldSelector == "" {
		out.Spec.Shutdown = v1alpha1.ShutdownStop
		return out, nil
	}
	targets, err := suspendTargets(out, nodeFieldSelector)
	if err != nil {
		return nil, err
	}
	if message == "" {
		message = DefaultStopMessage
	}
	for _, id := range targets {
		n := out.Status.Nodes[id]
		n.Phase = v1alpha1.NodeFailed
		n.Message = message
		n.FinishedAt = metav1.NewTime(now)
		out.Status.Nodes[id] = n
	}
	return out, nil
}

// Terminate returns a copy of the workflow with spec.shutdown set to
// Terminate (argo terminate): the controller kills every step and runs no
// exit handler. A completed workflow is an ErrState.
func Terminate(wf *v1alpha1.Workflow) (*v1alpha1.Workflow, error) {
	if err := checkShutdown(wf); err != nil {
		return nil, err
	}
	out := wf.DeepCopy()
	out.Spec.Shutdown = v1alpha1.ShutdownTerminate
	return out, nil
}

func checkShutdown(wf *v1alpha1.Workflow) error {
	if wf == nil {
		return badRequest("no workflow to shut down")
	}
	if completed(wf) {
		return badState("cannot shutdown a completed workflow")
	}
	return nil
}
