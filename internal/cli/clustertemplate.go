package cli

import (
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// `braid cluster-template`: the shared verbs (kindcmd.go) over
// ClusterWorkflowTemplateService. The kind has no namespace.

func newClusterTemplateCommand(s streams, g *globalFlags) *cobra.Command {
	return newKindCommand(s, g, clusterTemplateKind())
}

func clusterTemplateKind() *objKind {
	api := func(sess *session) clusterworkflowtemplate.ClusterWorkflowTemplateServiceClient {
		return sess.ClusterWorkflowTemplate
	}
	return &objKind{
		use: "cluster-template", short: "manipulate cluster workflow templates", aliases: []string{"cwftmpl", "cwft"},
		kind: "ClusterWorkflowTemplate", lintKind: "clusterworkflowtemplates", cluster: true,
		help: templateHelp("ClusterWorkflowTemplate"), print: templatePrinter(true), table: writeTmplTable,
		load: loadAs[*v1alpha1.ClusterWorkflowTemplate]("ClusterWorkflowTemplate"),
		create: func(ctx context.Context, sess *session, obj spec.Object) (spec.Object, error) {
			t, err := typed[*v1alpha1.ClusterWorkflowTemplate](obj)
			if err != nil {
				return nil, err
			}
			return answer(api(sess).CreateClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateCreateRequest{
				Template: t, CreateOptions: &metav1.CreateOptions{}}))
		},
		get: func(ctx context.Context, sess *session, _, name string) (spec.Object, error) {
			return answer(api(sess).GetClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateGetRequest{Name: name}))
		},
		update: func(ctx context.Context, sess *session, name string, obj spec.Object) (spec.Object, error) {
			t, err := typed[*v1alpha1.ClusterWorkflowTemplate](obj)
			if err != nil {
				return nil, err
			}
			return answer(api(sess).UpdateClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateUpdateRequest{Name: name, Template: t}))
		},
		remove: func(ctx context.Context, sess *session, name string) error {
			_, err := api(sess).DeleteClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateDeleteRequest{Name: name})
			return err
		},
		list: func(ctx context.Context, sess *session, _, selector string) ([]spec.Object, error) {
			res, err := api(sess).ListClusterWorkflowTemplates(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateListRequest{
				ListOptions: &metav1.ListOptions{LabelSelector: selector}})
			if err != nil {
				return nil, err
			}
			out := make([]spec.Object, len(res.Items))
			for i := range res.Items {
				out[i] = &res.Items[i]
			}
			return out, nil
		},
	}
}
