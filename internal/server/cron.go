package server

import (
	"context"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// cronServer is CronWorkflowService on the store. It stores CronWorkflows;
// the controller schedules them.
type cronServer struct {
	cronworkflow.UnimplementedCronWorkflowServiceServer
	crud crud
}

func newCronServer(st Store, log *slog.Logger) *cronServer {
	return &cronServer{crud: crud{
		store: st, log: log, kind: store.KindCronWorkflow,
		resource: "cronworkflows.argoproj.io", namespaced: true,
		list: func(objs []store.Object, next string) (any, error) {
			items, err := typedItems[v1alpha1.CronWorkflow](objs)
			l := v1alpha1.CronWorkflowList{Items: items}
			l.Continue = next
			return &l, err
		},
	}}
}

func (s *cronServer) LintCronWorkflow(ctx context.Context, req *cronworkflow.LintCronWorkflowRequest) (*v1alpha1.CronWorkflow, error) {
	return as[v1alpha1.CronWorkflow](s.crud.lint(ctx, req.GetNamespace(), req.GetCronWorkflow()))
}

func (s *cronServer) CreateCronWorkflow(ctx context.Context, req *cronworkflow.CreateCronWorkflowRequest) (*v1alpha1.CronWorkflow, error) {
	return as[v1alpha1.CronWorkflow](s.crud.create(ctx, req.GetNamespace(), req.GetCronWorkflow(), req.GetCreateOptions()))
}

func (s *cronServer) ListCronWorkflows(ctx context.Context, req *cronworkflow.ListCronWorkflowsRequest) (*v1alpha1.CronWorkflowList, error) {
	return as[v1alpha1.CronWorkflowList](s.crud.listPage(ctx, req.GetNamespace(), req.GetListOptions(), ""))
}

func (s *cronServer) GetCronWorkflow(ctx context.Context, req *cronworkflow.GetCronWorkflowRequest) (*v1alpha1.CronWorkflow, error) {
	return as[v1alpha1.CronWorkflow](s.crud.get(ctx, req.GetNamespace(), req.GetName()))
}

func (s *cronServer) UpdateCronWorkflow(ctx context.Context, req *cronworkflow.UpdateCronWorkflowRequest) (*v1alpha1.CronWorkflow, error) {
	return as[v1alpha1.CronWorkflow](s.crud.update(ctx, req.GetNamespace(), req.GetName(), req.GetCronWorkflow()))
}

func (s *cronServer) DeleteCronWorkflow(ctx context.Context, req *cronworkflow.DeleteCronWorkflowRequest) (*cronworkflow.CronWorkflowDeletedResponse, error) {
	if err := s.crud.delete(ctx, req.GetNamespace(), req.GetName(), req.GetDeleteOptions()); err != nil {
		return nil, err
	}
	return &cronworkflow.CronWorkflowDeletedResponse{}, nil
}

func (s *cronServer) SuspendCronWorkflow(ctx context.Context, req *cronworkflow.CronWorkflowSuspendRequest) (*v1alpha1.CronWorkflow, error) {
	return s.setSuspend(ctx, req.GetNamespace(), req.GetName(), true)
}

func (s *cronServer) ResumeCronWorkflow(ctx context.Context, req *cronworkflow.CronWorkflowResumeRequest) (*v1alpha1.CronWorkflow, error) {
	return s.setSuspend(ctx, req.GetNamespace(), req.GetName(), false)
}

// setSuspend sets spec.suspend, as argo-server does (resume leaves
// suspend: false rather than removing it).
func (s *cronServer) setSuspend(ctx context.Context, namespace, name string, suspend bool) (*v1alpha1.CronWorkflow, error) {
	return as[v1alpha1.CronWorkflow](s.crud.modify(ctx, namespace, name, func(o store.Object) error {
		cw, ok := o.(*v1alpha1.CronWorkflow)
		if !ok {
			return status.Errorf(codes.Internal, "store returned %T for a CronWorkflow", o)
		}
		cw.Spec.Suspend = &suspend
		return nil
	}))
}
