package wirecodec_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/braidwf/braid/pkg/apis/v1alpha1"
	"github.com/braidwf/braid/pkg/wirecodec"
)

// The codec is generic and imports nothing of braid; this external test
// checks it on braid's real API types.
const workflowYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: wc
  namespace: argo
  labels: {a: b}
  creationTimestamp: "2024-01-02T03:04:05Z"
spec:
  entrypoint: main
  parallelism: 3
  arguments:
    parameters:
    - name: p
      value: "1"
  templates:
  - name: main
    parallelism: 2
    steps:
    - - name: a
        template: work
        withItems: [1, "two", {"k": "v"}, [1, 2], true, null]
      - name: b
        template: work
        arguments: {parameters: [{name: x, value: "{{item}}"}]}
    - - name: c
        template: work
        when: "{{steps.a.status}} == Succeeded"
    - []
  - name: work
    inputs: {parameters: [{name: x, default: d}]}
    container:
      image: alpine:3.20
      command: [sh, -c]
      args: ["echo {{inputs.parameters.x}}"]
      resources: {limits: {cpu: 100m}}
    retryStrategy: {limit: 2}
  - name: wait
    suspend: {}
status:
  phase: Running
  startedAt: "2024-01-02T03:04:06Z"
  nodes:
    wc:
      id: wc
      name: wc
      displayName: wc
      type: Steps
      phase: Running
      startedAt: "2024-01-02T03:04:06Z"
      children: [wc-1]
    wc-1:
      id: wc-1
      name: wc[0].a(0:1)
      displayName: a(0:1)
      type: Pod
      phase: Succeeded
      templateName: work
      boundaryID: wc
      startedAt: "2024-01-02T03:04:07Z"
      finishedAt: "2024-01-02T03:04:09Z"
      outputs: {parameters: [{name: out, value: "5"}], exitCode: "0", result: hi}
      resourcesDuration: {cpu: 1, memory: 2}
`

func TestV1alpha1WorkflowRoundTrip(t *testing.T) {
	var wf v1alpha1.Workflow
	if err := yaml.UnmarshalStrict([]byte(workflowYAML), &wf); err != nil {
		t.Fatal(err)
	}
	if len(wf.Spec.Templates[0].Steps) != 3 || len(wf.Status.Nodes) != 2 || wf.Spec.Parallelism == nil {
		t.Fatalf("fixture did not load: %+v", wf.Spec)
	}
	b, err := wirecodec.Marshal(&wf)
	if err != nil {
		t.Fatal(err)
	}
	var back v1alpha1.Workflow
	if err := wirecodec.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want := wf
	want.TypeMeta = metav1.TypeMeta{} // not on the wire, as in Argo
	if !reflect.DeepEqual(want, back) {
		t.Errorf("round trip differs (-want +got):\n%s", cmp.Diff(want, back,
			cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })))
	}
	again, err := wirecodec.Marshal(&back)
	if err != nil || string(again) != string(b) {
		t.Errorf("re-encoding differs (err %v)", err)
	}
}

// FuzzDecodeWorkflow decodes any bytes as the Workflow of a gRPC request
// (what a CreateWorkflow or LintWorkflow hands the server): no input may
// panic, and what decodes encodes again, to the same Workflow, and to
// JSON (the server's next step).
func FuzzDecodeWorkflow(f *testing.F) {
	var wf v1alpha1.Workflow
	if err := yaml.UnmarshalStrict([]byte(workflowYAML), &wf); err != nil {
		f.Fatal(err)
	}
	seed, err := wirecodec.Marshal(&wf)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte{0x0a, 0x00, 0x12, 0x02, 0x5a, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		var got v1alpha1.Workflow
		if err := wirecodec.Unmarshal(data, &got); err != nil {
			return
		}
		b, err := wirecodec.Marshal(&got)
		if err != nil {
			t.Fatalf("decoded, then cannot encode: %v", err)
		}
		var again v1alpha1.Workflow
		if err := wirecodec.Unmarshal(b, &again); err != nil {
			t.Fatalf("cannot decode its own encoding: %v", err)
		}
		b2, err := wirecodec.Marshal(&again)
		if err != nil || string(b2) != string(b) {
			t.Fatalf("encoding is not stable (err %v)", err)
		}
		if _, err := json.Marshal(&got); err != nil {
			t.Logf("JSON: %v", err) // a value JSON refuses (a NaN) is refused later, not a panic
		}
	})
}
