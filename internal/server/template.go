package server

import (
	"context"
	"log/slog"

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

func (s *templateServer) CreateWorkflowTemplate(ctx context.Context, req *workflowtemplate.WorkflowTemplateCreateRequest) (*v1alpha1.WorkflowTemplate, error) {
	return as[v1alpha1.WorkflowTemplate](s.crud.create(ctx, req.GetNamespace(), req.GetTemplate(), req.GetCreateOptions()))
}

func (s *templateServer) GetWorkflowTemplate(ctx context.Context, req *workflowtemplate.WorkflowTemplateGetRequest) (*v1alpha1.WorkflowTemplate, error) {
	return as[v1alpha1.WorkflowTemplate](s.crud.get(ctx, req.GetNamespace(), req.GetName()))
}

func (s *templateServer) ListWorkflowTemplates(ctx context.Context, req *workflowtemplate.WorkflowTemplateListRequest) (*v1alpha1.WorkflowTemplateList, error) {
	return as[v1alpha1.WorkflowTemplateList](s.crud.listPage(ctx, req.GetNamespace(), req.GetListOptions(), req.GetNamePattern()))
}

func (s *templateServer) UpdateWorkflowTemplate(ctx context.Context, req *workflowtemplate.WorkflowTemplateUpdateRequest) (*v1alpha1.WorkflowTemplate, error) {
	return as[v1alpha1.WorkflowTemplate](s.crud.update(ctx, req.GetNamespace(), req.GetName(), req.GetTemplate()))
}

func (s *templateServer) DeleteWorkflowTemplate(ctx context.Context, req *workflowtemplate.WorkflowTemplateDeleteRequest) (*workflowtemplate.WorkflowTemplateDeleteResponse, error) {
	if err := s.crud.delete(ctx, req.GetNamespace(), req.GetName(), req.GetDeleteOptions()); err != nil {
		return nil, err
	}
	return &workflowtemplate.WorkflowTemplateDeleteResponse{}, nil
}

func (s *templateServer) LintWorkflowTemplate(ctx context.Context, req *workflowtemplate.WorkflowTemplateLintRequest) (*v1alpha1.WorkflowTemplate, error) {
	return as[v1alpha1.WorkflowTemplate](s.crud.lint(ctx, req.GetNamespace(), req.GetTemplate()))
}
