package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apiclient"
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// `braid cluster-template`: the template verbs (template.go) over
// ClusterWorkflowTemplateService. The kind has no namespace.

func newClusterTemplateCommand(s streams, g *globalFlags) *cobra.Command {
	return newTmplCommand(s, g, clusterTemplateKind())
}

func clusterTemplateKind() *tmplKind {
	api := func(sess *session) clusterworkflowtemplate.ClusterWorkflowTemplateServiceClient {
		return sess.ClusterWorkflowTemplate
	}
	return &tmplKind{
		use: "cluster-template", short: "manipulate cluster workflow templates", aliases: []string{"cwftmpl", "cwft"},
		kind: "ClusterWorkflowTemplate", lintKind: "clusterworkflowtemplates", cluster: true,
		decode: decodeAs[v1alpha1.ClusterWorkflowTemplate],
		load:   loadAs[*v1alpha1.ClusterWorkflowTemplate]("ClusterWorkflowTemplate"),
		create: func(ctx context.Context, sess *session, obj *structpb.Struct) (*structpb.Struct, error) {
			return api(sess).CreateClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateCreateRequest{
				Template: obj, CreateOptions: &workflow.CreateOptions{}})
		},
		get: func(ctx context.Context, sess *session, name string) (*structpb.Struct, error) {
			return api(sess).GetClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateGetRequest{Name: name})
		},
		update: func(ctx context.Context, sess *session, name string, obj *structpb.Struct) (*structpb.Struct, error) {
			return api(sess).UpdateClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateUpdateRequest{Name: name, Template: obj})
		},
		remove: func(ctx context.Context, sess *session, name string) error {
			_, err := api(sess).DeleteClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateDeleteRequest{Name: name})
			return err
		},
		list: func(ctx context.Context, sess *session, _, selector string) ([]spec.Object, error) {
			res, err := api(sess).ListClusterWorkflowTemplates(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateListRequest{
				ListOptions: &workflow.ListOptions{LabelSelector: selector}})
			if err != nil {
				return nil, err
			}
			var l v1alpha1.ClusterWorkflowTemplateList
			if err := apiclient.FromStruct(res, &l); err != nil {
				return nil, fmt.Errorf("decode the cluster template list: %w", err)
			}
			out := make([]spec.Object, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out, nil
		},
	}
}
