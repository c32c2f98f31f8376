package kube_test

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const refTemplateYAML = `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: greet}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: who, value: world}]
  workflowMetadata:
    labels: {app: greeter}
    labelsFrom:
      who: {expression: workflow.parameters.who}
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, 'echo "hello {{workflow.parameters.who}}"']}
`

const refWorkflowYAML = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: by-ref}
spec:
  workflowTemplateRef: {name: greet}
  arguments:
    parameters: [{name: who, value: kube}]
`

// A Workflow created straight in the cluster (as kubectl creates it) with
// a workflowTemplateRef keeps its spec; the controller stores the merged
// spec in status.storedWorkflowTemplateSpec and runs it, and puts the
// template's workflowMetadata labels (labelsFrom too) on the Workflow.
func testTemplateRef(t *testing.T, ctx context.Context, b *backend) {
	base := "/apis/argoproj.io/v1alpha1/namespaces/" + b.ns
	for _, doc := range []struct{ path, text string }{{"/workflowtemplates", refTemplateYAML}, {"/workflows", refWorkflowYAML}} {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc.text), &obj); err != nil {
			t.Fatal(err)
		}
		if err := b.c.create(ctx, base+doc.path, obj); err != nil {
			t.Fatalf("create %s: %v", doc.path, err)
		}
	}
	wf := b.waitCompleted(ctx, "by-ref")
	if wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("by-ref: phase %s (%s), want Succeeded", wf.Status.Phase, wf.Status.Message)
	}
	if s := wf.Status.StoredWorkflowSpec; s == nil || s.Entrypoint != "main" || len(wf.Spec.Templates) != 0 {
		t.Fatalf("storedWorkflowTemplateSpec %+v, spec %+v", s, wf.Spec)
	}
	for k, v := range map[string]string{"app": "greeter", "who": "kube", "workflows.argoproj.io/workflow-template": "greet"} {
		if wf.Labels[k] != v {
			t.Errorf("label %s = %q, want %q (labels %v)", k, wf.Labels[k], v, wf.Labels)
		}
	}
	out, err := b.cli(ctx, "logs", "by-ref")
	if err != nil || !strings.Contains(out, "hello kube") {
		t.Errorf("braid logs by-ref: want hello kube in\n%s (err %v)", out, err)
	}
}
