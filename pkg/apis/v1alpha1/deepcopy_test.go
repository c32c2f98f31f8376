package v1alpha1

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"
)

const deepCopyFixture = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: dc
  labels: {a: b}
spec:
  entrypoint: main
  parallelism: 2
  arguments:
    parameters:
    - name: p
      value: 1.5
  templates:
  - name: main
    steps:
    - - name: s
        template: leaf
        withItems: [a, 1, {k: v}]
        inline:
          container: {image: alpine}
  - name: leaf
    plugin: {hello: {x: 1}}
    outputs:
      artifacts:
      - name: art
        path: /tmp/a
        archive: {none: {}}
        s3: {bucket: b, key: k}
status:
  phase: Running
  nodes:
    dc:
      id: dc
      name: dc
      type: Steps
      children: [dc-1]
      outputs:
        result: ok
  taskResultsCompletionStatus: {dc-1: false}
`

func TestDeepCopy(t *testing.T) {
	var wf Workflow
	if err := sigsyaml.UnmarshalStrict([]byte(deepCopyFixture), &wf); err != nil {
		t.Fatal(err)
	}
	cp := wf.DeepCopy()
	if diff := cmp.Diff(&wf, cp); diff != "" {
		t.Fatalf("copy differs (-orig +copy):\n%s", diff)
	}
	before, err := json.Marshal(&wf)
	if err != nil {
		t.Fatal(err)
	}

	// Change every kind of nested storage in the copy.
	cp.Labels["a"] = "changed"
	*cp.Spec.Arguments.Parameters[0].Value = "changed"
	cp.Spec.Parallelism.IntVal = 99
	step := &cp.Spec.Templates[0].Steps[0][0]
	step.WithItems[0].Value[1] = 'Z'
	step.Inline.Container.Image = "changed"
	cp.Spec.Templates[1].Plugin.Value[2] = 'Z'
	art := &cp.Spec.Templates[1].Outputs.Artifacts[0]
	art.S3.Bucket = "changed"
	art.Archive.None = nil
	node := cp.Status.Nodes["dc"]
	node.Children[0] = "changed"
	*node.Outputs.Result = "changed"
	cp.Status.Nodes["dc"] = node
	cp.Status.TaskResultsCompletionStatus["dc-1"] = true

	after, err := json.Marshal(&wf)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Fatalf("changing the copy changed the original:\nbefore %s\nafter  %s", before, after)
	}

	obj := wf.DeepCopyObject()
	if got, ok := obj.(*Workflow); !ok || got.Name != "dc" {
		t.Fatalf("DeepCopyObject returned %T", obj)
	}
	list := &WorkflowList{Items: []Workflow{wf}}
	listCopy := list.DeepCopyObject().(*WorkflowList)
	listCopy.Items[0].Name = "other"
	if list.Items[0].Name != "dc" {
		t.Fatal("list copy shares items")
	}
}
