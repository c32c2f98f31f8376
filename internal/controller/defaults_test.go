package controller

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const defaultsYAML = `
metadata:
  labels: {team: platform, owner: defaults}
  annotations: {note: from-defaults}
spec:
  serviceAccountName: default-sa
  activeDeadlineSeconds: 600
  ttlStrategy: {secondsAfterFailure: 60}
  arguments:
    parameters: [{name: region, value: eu}]
`

// workflowDefaults lie under every workflow that starts: its own fields and
// labels win, the defaults fill the rest. A workflow that names a template
// gets them under its stored spec, below the template's.
func TestWorkflowDefaults(t *testing.T) {
	st, rt := openStoreAndRuntime(t, t.TempDir())
	defaults := &v1alpha1.Workflow{}
	if err := yaml.UnmarshalStrict([]byte(defaultsYAML), defaults); err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Store: st, Runtime: rt, WorkflowDefaults: defaults})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	wf := workflow(t, `
metadata: {name: own, labels: {owner: me}}
spec:
  entrypoint: main
  serviceAccountName: mine
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, 'test "{{workflow.parameters.region}}" = eu']}
`)
	final, err := c.Run(ctx, RunRequest{Workflow: wf})
	if err != nil {
		t.Fatal(err)
	}
	if final.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("phase %s: %s", final.Status.Phase, final.Status.Message)
	}
	obj, err := st.Get(ctx, store.KindWorkflow, "default", "own")
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*v1alpha1.Workflow)
	if s := got.Spec; s.ServiceAccountName != "mine" || s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds != 600 ||
		s.TTLStrategy == nil || *s.TTLStrategy.SecondsAfterFailure != 60 {
		t.Fatalf("stored spec %+v", s)
	}
	if got.Labels["owner"] != "me" || got.Labels["team"] != "platform" || got.Annotations["note"] != "from-defaults" {
		t.Fatalf("labels %v annotations %v", got.Labels, got.Annotations)
	}

	tmpl := &v1alpha1.WorkflowTemplate{}
	tmpl.Name = "t"
	tmpl.Spec.Entrypoint, tmpl.Spec.ServiceAccountName = "main", "template-sa"
	tmpl.Spec.Templates = []v1alpha1.Template{{Name: "main", Suspend: &v1alpha1.SuspendTemplate{Duration: "0"}}}
	ref := workflow(t, `
metadata: {name: ref}
spec:
  workflowTemplateRef: {name: t}
`)
	if err := spec.ResolveWorkflowTemplateRef(ref, spec.NewCatalog([]*spec.Document{{Object: tmpl}})); err != nil {
		t.Fatal(err)
	}
	final, err = c.Run(ctx, RunRequest{Workflow: ref})
	if err != nil {
		t.Fatal(err)
	}
	stored := final.Status.StoredWorkflowSpec
	if final.Status.Phase != v1alpha1.WorkflowSucceeded || stored == nil || stored.ServiceAccountName != "template-sa" ||
		stored.ActiveDeadlineSeconds == nil || final.Spec.ActiveDeadlineSeconds != nil {
		t.Fatalf("phase %s (%s), spec %+v, stored %+v", final.Status.Phase, final.Status.Message, final.Spec, stored)
	}
}
