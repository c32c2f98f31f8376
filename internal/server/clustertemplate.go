package server

import (
	"context"
	"log/slog"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// clusterTemplateServer is ClusterWorkflowTemplateService on the store.
type clusterTemplateServer struct {
	clusterworkflowtemplate.UnimplementedClusterWorkflowTemplateServiceServer
	crud crud
}

func newClusterTemplateServer(st Store, log *slog.Logger) *clusterTemplateServer {
	return &clusterTemplateServer{crud: crud{
		store: st, log: log, kind: store.KindClusterWorkflowTemplate,
		resource: "clusterworkflowtemplates.argoproj.io", namespaced: false,
		list: func(objs []store.Object, next string) (any, error) {
			items, err := typedItems[v1alpha1.ClusterWorkflowTemplate](objs)
			l := v1alpha1.ClusterWorkflowTemplateList{Items: items}
			l.Continue = next
			return &l, err
		},
	}}
}

func (s *clusterTemplateServer) CreateClusterWorkflowTemplate(ctx context.Context, req *clusterworkflowtemplate.ClusterWorkflowTemplateCreateRequest) (*v1alpha1.ClusterWorkflowTemplate, error) {
	return as[v1alpha1.ClusterWorkflowTemplate](s.crud.create(ctx, "", req.GetTemplate(), req.GetCreateOptions()))
}

func (s *clusterTemplateServer) GetClusterWorkflowTemplate(ctx context.Context, req *clusterworkflowtemplate.ClusterWorkflowTemplateGetRequest) (*v1alpha1.ClusterWorkflowTemplate, error) {
	return as[v1alpha1.ClusterWorkflowTemplate](s.crud.get(ctx, "", req.GetName()))
}

func (s *clusterTemplateServer) ListClusterWorkflowTemplates(ctx context.Context, req *clusterworkflowtemplate.ClusterWorkflowTemplateListRequest) (*v1alpha1.ClusterWorkflowTemplateList, error) {
	return as[v1alpha1.ClusterWorkflowTemplateList](s.crud.listPage(ctx, "", req.GetListOptions(), ""))
}

func (s *clusterTemplateServer) UpdateClusterWorkflowTemplate(ctx context.Context, req *clusterworkflowtemplate.ClusterWorkflowTemplateUpdateRequest) (*v1alpha1.ClusterWorkflowTemplate, error) {
	return as[v1alpha1.ClusterWorkflowTemplate](s.crud.update(ctx, "", req.GetName(), req.GetTemplate()))
}

func (s *clusterTemplateServer) DeleteClusterWorkflowTemplate(ctx context.Context, req *clusterworkflowtemplate.ClusterWorkflowTemplateDeleteRequest) (*clusterworkflowtemplate.ClusterWorkflowTemplateDeleteResponse, error) {
	if err := s.crud.delete(ctx, "", req.GetName(), req.GetDeleteOptions()); err != nil {
		return nil, err
	}
	return &clusterworkflowtemplate.ClusterWorkflowTemplateDeleteResponse{}, nil
}

func (s *clusterTemplateServer) LintClusterWorkflowTemplate(ctx context.Context, req *clusterworkflowtemplate.ClusterWorkflowTemplateLintRequest) (*v1alpha1.ClusterWorkflowTemplate, error) {
	return as[v1alpha1.ClusterWorkflowTemplate](s.crud.lint(ctx, "", req.GetTemplate()))
}
