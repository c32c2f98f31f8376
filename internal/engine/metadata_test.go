package engine

import (
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const metadataYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: md, labels: {own: kept}}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: foo, value: bar}]
  workflowMetadata:
    labels: {team: a}
    annotations: {note: hi}
    labelsFrom:
      foo: {expression: LABEL}
  templates:
  - name: main
    container: {image: busybox, command: [echo, "{{workflow.labels.foo}}"]}
`

// workflowMetadata puts its labels and annotations on the Workflow when it
// starts; labelsFrom is evaluated over the globals and must give a string.
func TestWorkflowMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, expression string
		phase            v1alpha1.WorkflowPhase
		message          string
		labels           map[string]string
	}{
		{"labelsFrom a parameter", "workflow.parameters.foo", v1alpha1.WorkflowSucceeded, "",
			map[string]string{"own": "kept", "team": "a", "foo": "bar"}},
		{"labelsFrom with sprig", "sprig.upper(workflow.parameters.foo) + '-' + workflow.name", v1alpha1.WorkflowSucceeded, "",
			map[string]string{"own": "kept", "team": "a", "foo": "BAR-md"}},
		{"a number is no label", "1 + 1", v1alpha1.WorkflowError,
			`failed to evaluate label "foo" expression "1 + 1": it gave int, but a label must be a string`, nil},
		{"an expression that fails", "workflow.parameters.foo(", v1alpha1.WorkflowError,
			`failed to evaluate label "foo" expression "workflow.parameters.foo("`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := load(t, strings.Replace(metadataYAML, "LABEL", `"`+tc.expression+`"`, 1)).run()
			if d.wf.Status.Phase != tc.phase || !strings.HasPrefix(d.wf.Status.Message, tc.message) {
				t.Fatalf("phase %s %q, want %s %q", d.wf.Status.Phase, d.wf.Status.Message, tc.phase, tc.message)
			}
			if tc.phase != v1alpha1.WorkflowSucceeded {
				if len(d.launches) != 0 {
					t.Fatalf("a step ran: %v", d.launches)
				}
				return
			}
			for k, v := range tc.labels {
				eq(t, "label "+k, d.wf.Labels[k], v)
			}
			eq(t, "annotation", d.wf.Annotations["note"], "hi")
			eq(t, "the step sees the label", argsOf(d.launchOf("md")), "echo "+tc.labels["foo"])
		})
	}
}

// A workflow that names a WorkflowTemplate runs the spec stored in its
// status (the template's templates and arguments under its own), and a
// shutdown set on its own spec reaches that stored spec.
func TestStoredWorkflowTemplateSpec(t *testing.T) {
	const doc = `
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: tmpl}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: msg, value: default}, {name: other, value: o}]
  workflowMetadata: {labels: {from: template}}
  templates:
  - name: main
    steps:
    - - {name: a, template: say}
    - - {name: b, template: say}
  - name: say
    container: {image: busybox, command: [echo, "{{workflow.parameters.msg}} {{workflow.parameters.other}}"]}
---
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ref}
spec:
  workflowTemplateRef: {name: tmpl}
  arguments:
    parameters: [{name: msg, value: mine}]
`
	setUp := func(t *testing.T) *driver {
		d := load(t, doc)
		docs, err := spec.Load("test.yaml", []byte(doc), spec.Lenient)
		if err != nil {
			t.Fatal(err)
		}
		if err := spec.ResolveWorkflowTemplateRef(d.wf, spec.NewCatalog(docs)); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := setUp(t).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"ref[0].a": "Pod Succeeded", "ref[1].b": "Pod Succeeded"})
	eq(t, "args", argsOf(d.launchOf("ref[0].a")), "echo mine o")
	eq(t, "label from the template's workflowMetadata", d.wf.Labels["from"], "template")
	if d.wf.Spec.Entrypoint != "" || len(d.wf.Spec.Templates) != 0 {
		t.Fatalf("the workflow's own spec changed: %+v", d.wf.Spec)
	}

	d = setUp(t)
	d.reconcile()
	d.wf.Spec.Shutdown = v1alpha1.ShutdownTerminate
	d.run()
	if d.wf.Status.Phase != v1alpha1.WorkflowFailed || d.has("ref[1].b") {
		t.Fatalf("terminate through the workflow's spec: %s\n%s", d.wf.Status.Phase, d.dump())
	}
	eq(t, "stored shutdown", d.wf.Status.StoredWorkflowSpec.Shutdown, v1alpha1.ShutdownTerminate)
}
