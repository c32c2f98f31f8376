package controller

import (
	"context"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// A workflow written to the store with a workflowTemplateRef and no stored
// spec (as kubectl or a resubmit writes it) gets its
// storedWorkflowTemplateSpec from the store's template when it starts, and
// runs it; one whose template is not there ends Error, saying so.
func TestManagerStoresWorkflowTemplateSpec(t *testing.T) {
	c, st := newControllerAt(t, t.TempDir())
	runManager(t, c, st, StoreTemplates(st))
	ctx := context.Background()

	tmpl := &v1alpha1.WorkflowTemplate{}
	if err := yaml.UnmarshalStrict([]byte(`
metadata: {name: greet, namespace: default}
spec:
  entrypoint: main
  arguments: {parameters: [{name: who, value: world}]}
  workflowMetadata: {labels: {app: greeter}}
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, 'test "{{workflow.parameters.who}}" = braid']}
`), tmpl); err != nil {
		t.Fatal(err)
	}
	tmpl.APIVersion, tmpl.Kind = v1alpha1.APIVersion, "WorkflowTemplate"
	if err := st.Create(ctx, tmpl); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"by-ref", "to-nothing"} {
		ref := "greet"
		if name == "to-nothing" {
			ref = "nope"
		}
		wf := workflow(t, `
metadata: {name: `+name+`}
spec:
  workflowTemplateRef: {name: `+ref+`}
  arguments: {parameters: [{name: who, value: braid}]}
`)
		if err := st.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	wf := waitPhase(t, st, "by-ref", v1alpha1.WorkflowSucceeded)
	if s := wf.Status.StoredWorkflowSpec; s == nil || s.Entrypoint != "main" || len(s.Templates) != 1 {
		t.Fatalf("storedWorkflowTemplateSpec %+v", s)
	}
	if wf.Spec.Entrypoint != "" || wf.Labels["workflows.argoproj.io/workflow-template"] != "greet" || wf.Labels["app"] != "greeter" {
		t.Fatalf("spec %+v labels %v", wf.Spec, wf.Labels)
	}
	bad := waitPhase(t, st, "to-nothing", v1alpha1.WorkflowError)
	if bad.Status.Message != `WorkflowTemplate "nope" not found` || len(bad.Status.Nodes) != 0 {
		t.Fatalf("message %q, nodes %d", bad.Status.Message, len(bad.Status.Nodes))
	}
}
