package server

import (
	"context"
	"log/slog"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// templateServer is WorkflowTemplateService on the store.
type templateServer struct {
	workflowtemplate.UnimplementedWorkflowTemplateServiceServer
	crud crud
}

func newTemplateServer(st Store, log *slog.Logger) *templateServer {
	return &templateServer{crud: crud{
		store: st, log: log, kind: store.KindWorkflowTemplate,
		resource: "workflowtemplates.argoproj.io", namespaced: true,
		list: func(objs []store.Object, next string) (any, error) {
			items, err := typedItems[v1alpha1.WorkflowTemplate](objs)
			l := v1alpha1.WorkflowTemplateList{Items: items}
			l.Continue = next
			return &l, err
		},
	}}
}

func (s *templateServer) CreateWorkflowTemplate(ctx context.Context, req *workflowtemplate.WorkflowTemplateCreateRequest) (*structpb.Struct, error) {
	return s.crud.create(ctx, req.GetNamespace(), req.GetTemplate(), req.GetCreateOptions())
}

func (s *templateServer) GetWorkflowTemplate(ctx context.Context, req *workflowtemplate.WorkflowTemplateGetRequest) (*structpb.Struct, error) {
	return s.crud.getStruct(ctx, req.GetNamespace(), req.GetName())
}

func (s *templateServer) ListWorkflowTemplates(ctx context.Context, req *workflowtemplate.WorkflowTemplateListRequest) (*structpb.Struct, error) {
	return s.crud.listPage(ctx, req.GetNamespace(), req.GetListOptions(), req.GetNamePattern())
}

func (s *templateServer) UpdateWorkflowTemplate(ctx context.Context, req *workflowtemplate.WorkflowTemplateUpdateRequest) (*structpb.Struct, error) {
	return s.crud.update(ctx, req.GetNamespace(), req.GetName(), req.GetTemplate())
}

func (s *templateServer) DeleteWorkflowTemplate(ctx context.Context, req *workflowtemplate.WorkflowTemplateDeleteRequest) (*workflowtemplate.WorkflowTemplateDeleteResponse, error) {
	if err := s.crud.delete(ctx, req.GetNamespace(), req.GetName(), req.GetDeleteOptions()); err != nil {
		return nil, err
	}
	return &workflowtemplate.WorkflowTemplateDeleteResponse{}, nil
}

func (s *templateServer) LintWorkflowTemplate(ctx context.Context, req *workflowtemplate.WorkflowTemplateLintRequest) (*structpb.Struct, error) {
	return s.crud.lint(ctx, req.GetNamespace(), req.GetTemplate())
}
