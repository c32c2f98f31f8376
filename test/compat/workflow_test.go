package compat

import (
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflow"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCreateGetList creates a workflow with Argo's client, then reads it
// back by get and by list, over gRPC and over HTTP/1.
func TestCreateGetList(t *testing.T) {
	s := startServer(t)
	for _, http1 := range []bool{false, true} {
		name := "grpc"
		if http1 {
			name = "http1"
		}
		t.Run(name, func(t *testing.T) {
			ctx, c := s.client(t, http1)
			wfs := c.NewWorkflowServiceClient(ctx)
			created, err := wfs.CreateWorkflow(ctx, &workflow.WorkflowCreateRequest{Namespace: "default", Workflow: &wfv1.Workflow{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "compat-" + name + "-"},
				Spec: wfv1.WorkflowSpec{Entrypoint: "main", Templates: []wfv1.Template{{
					Name: "main", Container: &corev1.Container{Image: "busybox", Command: []string{"echo", "hello"}},
				}}},
			}})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			got, err := wfs.GetWorkflow(ctx, &workflow.WorkflowGetRequest{Namespace: "default", Name: created.Name})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if got.Name != created.Name || got.Spec.Entrypoint != "main" || len(got.Spec.Templates) != 1 {
				t.Errorf("get: %s entrypoint %q with %d templates", got.Name, got.Spec.Entrypoint, len(got.Spec.Templates))
			}
			list, err := wfs.ListWorkflows(ctx, &workflow.WorkflowListRequest{Namespace: "default"})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			found := false
			for _, wf := range list.Items {
				found = found || wf.Name == created.Name
			}
			if !found {
				t.Errorf("list: %d items, without %s", len(list.Items), created.Name)
			}
		})
	}
}
