package server

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/wfops"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// updateAttempts bounds how often an action is applied again after a
// concurrent write (the controller's) made its read stale.
const updateAttempts = 20

// change reads the workflow, applies op to it and writes it back under
// optimistic concurrency, starting over when the controller wrote first.
// The controller notices the write and acts on it.
func (s *workflowServer) change(ctx context.Context, namespace, name string, op func(*v1alpha1.Workflow) (*v1alpha1.Workflow, error)) (*v1alpha1.Workflow, error) {
	var orig *v1alpha1.Workflow // what the attempt read
	wf, err := store.Modify(ctx, updateAttempts,
		func(ctx context.Context) (*v1alpha1.Workflow, error) { return s.get(ctx, namespace, name) },
		func(wf *v1alpha1.Workflow) (*v1alpha1.Workflow, bool, error) {
			orig = wf
			out, err := op(wf)
			if err != nil {
				return nil, false, opError(err)
			}
			return out, true, nil
		},
		func(ctx context.Context, wf *v1alpha1.Workflow) error {
			// wfops returns a changed copy, so orig is still what was read. A
			// status update leaves the spec as stored: only when the action
			// did not change it (suspend, stop and terminate do).
			var err error
			if su := s.caps.StatusUpdater; su != nil && wf != orig && reflect.DeepEqual(orig.Spec, wf.Spec) {
				// Only the nodes the action changed are written (and then
				// streamed): on a 10,000-node workflow a resume is one node.
				err = su.UpdateWorkflowStatus(ctx, wf, changedNodes(orig.Status.Nodes, wf.Status.Nodes))
			} else {
				err = s.store.Update(ctx, wf)
			}
			if err != nil && !errors.Is(err, store.ErrConflict) {
				return storeError(err, wf.Name)
			}
			return err
		})
	if errors.Is(err, store.ErrConflict) {
		return nil, status.Errorf(codes.Aborted, "workflows.argoproj.io %q changed too often to apply the request; try again", name)
	}
	return wf, err
}

// StatusUpdater is a store that can write a workflow with only some of its
// node rows (Capabilities.StatusUpdater; sqlite.Store, the controller's hot
// path).
type StatusUpdater interface {
	UpdateWorkflowStatus(ctx context.Context, wf *v1alpha1.Workflow, changedNodes []string) error
}

// changedNodes lists the IDs of the nodes added, changed or removed
// between two node maps.
func changedNodes(before, after v1alpha1.Nodes) []string {
	var ids []string
	for id, n := range after {
		if old, ok := before[id]; !ok || !reflect.DeepEqual(old, n) {
			ids = append(ids, id)
		}
	}
	for id := range before {
		if _, ok := after[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// opError maps a wfops error to a status: bad arguments are
// InvalidArgument, a request the workflow's state forbids is
// FailedPrecondition.
func opError(err error) error {
	switch {
	case errors.Is(err, wfops.ErrBadRequest):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, wfops.ErrState):
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

func (s *workflowServer) SuspendWorkflow(ctx context.Context, req *workflow.WorkflowSuspendRequest) (*v1alpha1.Workflow, error) {
	return s.change(ctx, req.GetNamespace(), req.GetName(), wfops.Suspend)
}

func (s *workflowServer) ResumeWorkflow(ctx context.Context, req *workflow.WorkflowResumeRequest) (*v1alpha1.Workflow, error) {
	return s.change(ctx, req.GetNamespace(), req.GetName(), func(wf *v1alpha1.Workflow) (*v1alpha1.Workflow, error) {
		return wfops.Resume(wf, req.GetNodeFieldSelector(), s.now())
	})
}

func (s *workflowServer) StopWorkflow(ctx context.Context, req *workflow.WorkflowStopRequest) (*v1alpha1.Workflow, error) {
	return s.change(ctx, req.GetNamespace(), req.GetName(), func(wf *v1alpha1.Workflow) (*v1alpha1.Workflow, error) {
		return wfops.Stop(wf, req.GetNodeFieldSelector(), req.GetMessage(), s.now())
	})
}

func (s *workflowServer) TerminateWorkflow(ctx context.Context, req *workflow.WorkflowTerminateRequest) (*v1alpha1.Workflow, error) {
	return s.change(ctx, req.GetNamespace(), req.GetName(), wfops.Terminate)
}

func (s *workflowServer) SetWorkflow(ctx context.Context, req *workflow.WorkflowSetRequest) (*v1alpha1.Workflow, error) {
	opts := wfops.SetOptions{NodeFieldSelector: req.GetNodeFieldSelector(), Phase: req.GetPhase(), Message: req.GetMessage()}
	if p := req.GetOutputParameters(); p != "" {
		if err := json.Unmarshal([]byte(p), &opts.OutputParameters); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "outputParameters must be a JSON object of strings: %v", err)
		}
	}
	return s.change(ctx, req.GetNamespace(), req.GetName(), func(wf *v1alpha1.Workflow) (*v1alpha1.Workflow, error) {
		return wfops.Set(wf, opts, s.now())
	})
}

func (s *workflowServer) RetryWorkflow(ctx context.Context, req *workflow.WorkflowRetryRequest) (*v1alpha1.Workflow, error) {
	opts := wfops.RetryOptions{
		RestartSuccessful: req.GetRestartSuccessful(),
		NodeFieldSelector: req.GetNodeFieldSelector(),
		Parameters:        req.GetParameters(),
	}
	return s.change(ctx, req.GetNamespace(), req.GetName(), func(wf *v1alpha1.Workflow) (*v1alpha1.Workflow, error) {
		out, _, err := wfops.Retry(wf, opts, s.now())
		return out, err
	})
}

func (s *workflowServer) ResubmitWorkflow(ctx context.Context, req *workflow.WorkflowResubmitRequest) (*v1alpha1.Workflow, error) {
	old, err := s.get(ctx, req.GetNamespace(), req.GetName())
	if err != nil {
		return nil, err
	}
	wf, err := wfops.Resubmit(old, wfops.ResubmitOptions{Memoized: req.GetMemoized(), Parameters: req.GetParameters()})
	if err != nil {
		return nil, opError(err)
	}
	var renameErr error
	if err := s.createNamed(ctx, wf, func(wf *v1alpha1.Workflow) {
		if req.GetMemoized() {
			renameErr = wfops.RenameNodes(wf, old.Name)
		}
	}); err != nil {
		return nil, err
	}
	if renameErr != nil {
		return nil, opError(renameErr)
	}
	s.log.Info("workflow resubmitted", "namespace", wf.Namespace, "name", wf.Name, "from", old.Name)
	return wf, nil
}
