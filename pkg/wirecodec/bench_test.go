package wirecodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A workflow-shaped type: ObjectMeta, a spec with k8s containers, and a
// status with a 10,000-entry map of node messages holding metav1.Times.

type benchWF struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata" protobuf:"bytes,1,opt,name=metadata"`
	Spec              benchSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status            benchStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

type benchSpec struct {
	Entrypoint  string              `json:"entrypoint,omitempty" protobuf:"bytes,1,opt,name=entrypoint"`
	Templates   []benchTemplate     `json:"templates,omitempty" protobuf:"bytes,2,rep,name=templates"`
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty" protobuf:"varint,3,opt,name=parallelism"`
}

type benchTemplate struct {
	Name      string            `json:"name" protobuf:"bytes,1,opt,name=name"`
	Container *corev1.Container `json:"container,omitempty" protobuf:"bytes,2,opt,name=container"`
	Steps     []benchSteps      `json:"steps,omitempty" protobuf:"bytes,3,rep,name=steps"`
}

type benchSteps []benchStep

type benchStep struct {
	Name     string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Template string `json:"template" protobuf:"bytes,2,opt,name=template"`
}

type benchStatus struct {
	Phase      NamedStr             `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase"`
	StartedAt  metav1.Time          `json:"startedAt,omitempty" protobuf:"bytes,2,opt,name=startedAt"`
	FinishedAt metav1.Time          `json:"finishedAt,omitempty" protobuf:"bytes,3,opt,name=finishedAt"`
	Nodes      map[string]benchNode `json:"nodes,omitempty" protobuf:"bytes,4,rep,name=nodes" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
}

type benchNode struct {
	ID                string                `json:"id" protobuf:"bytes,1,opt,name=id"`
	Name              string                `json:"name" protobuf:"bytes,2,opt,name=name"`
	DisplayName       string                `json:"displayName,omitempty" protobuf:"bytes,3,opt,name=displayName"`
	Type              NamedStr              `json:"type" protobuf:"bytes,4,opt,name=type"`
	TemplateName      string                `json:"templateName,omitempty" protobuf:"bytes,5,opt,name=templateName"`
	Phase             NamedStr              `json:"phase,omitempty" protobuf:"bytes,6,opt,name=phase"`
	BoundaryID        string                `json:"boundaryID,omitempty" protobuf:"bytes,7,opt,name=boundaryID"`
	Message           string                `json:"message,omitempty" protobuf:"bytes,8,opt,name=message"`
	StartedAt         metav1.Time           `json:"startedAt,omitempty" protobuf:"bytes,9,opt,name=startedAt"`
	FinishedAt        metav1.Time           `json:"finishedAt,omitempty" protobuf:"bytes,10,opt,name=finishedAt"`
	EstimatedDuration NamedInt              `json:"estimatedDuration,omitempty" protobuf:"varint,11,opt,name=estimatedDuration"`
	Progress          NamedStr              `json:"progress,omitempty" protobuf:"bytes,12,opt,name=progress"`
	Resources         map[NamedStr]NamedInt `json:"resourcesDuration,omitempty" protobuf:"bytes,13,rep,name=resourcesDuration" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
	Daemoned          *bool                 `json:"daemoned,omitempty" protobuf:"varint,14,opt,name=daemoned"`
	Outputs           *benchOutputs         `json:"outputs,omitempty" protobuf:"bytes,15,opt,name=outputs"`
	Children          []string              `json:"children,omitempty" protobuf:"bytes,16,rep,name=children"`
	HostNodeName      string                `json:"hostNodeName,omitempty" protobuf:"bytes,17,opt,name=hostNodeName"`
}

type benchOutputs struct {
	Parameters []benchParam `json:"parameters,omitempty" protobuf:"bytes,1,rep,name=parameters"`
	Result     *string      `json:"result,omitempty" protobuf:"bytes,2,opt,name=result"`
	ExitCode   *string      `json:"exitCode,omitempty" protobuf:"bytes,3,opt,name=exitCode"`
}

type benchParam struct {
	Name  string  `json:"name" protobuf:"bytes,1,opt,name=name"`
	Value *string `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
}

func bigWorkflow(nodes int) *benchWF {
	wf := &benchWF{
		TypeMeta: metav1.TypeMeta{Kind: "Workflow", APIVersion: "argoproj.io/v1alpha1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "big", Namespace: "argo", UID: "3f1c2d4e-0000-4000-8000-000000000001",
			Labels:            map[string]string{"workflows.argoproj.io/phase": "Running"},
			CreationTimestamp: metav1.Unix(1700000000, 0),
		},
		Spec: benchSpec{
			Entrypoint:  "main",
			Parallelism: ptr(intstr.FromInt32(10)),
			Templates: []benchTemplate{
				{Name: "main", Steps: []benchSteps{{{Name: "a", Template: "work"}}, {{Name: "b", Template: "work"}}}},
				{Name: "work", Container: &corev1.Container{Image: "alpine:3.20", Command: []string{"sh", "-c", "echo hi"}}},
			},
		},
		Status: benchStatus{Phase: "Running", StartedAt: metav1.Unix(1700000000, 0), Nodes: map[string]benchNode{}},
	}
	for i := range nodes {
		id := fmt.Sprintf("big-%010d", i)
		wf.Status.Nodes[id] = benchNode{
			ID: id, Name: fmt.Sprintf("big[0].step(%d)", i), DisplayName: fmt.Sprintf("step(%d)", i),
			Type: "Pod", TemplateName: "work", Phase: "Succeeded", BoundaryID: "big",
			StartedAt: metav1.Unix(1700000000+int64(i), 0), FinishedAt: metav1.Unix(1700000005+int64(i), 0),
			EstimatedDuration: 5, Progress: "1/1",
			Resources: map[NamedStr]NamedInt{"cpu": 5, "memory": 5},
			Outputs: &benchOutputs{
				Parameters: []benchParam{{Name: "out", Value: ptr("value")}},
				Result:     ptr("hi"), ExitCode: ptr("0"),
			},
			Children:     []string{fmt.Sprintf("big-%010d", i+1)},
			HostNodeName: "node-1",
		}
	}
	return wf
}

func TestBigWorkflowRoundTrip(t *testing.T) {
	wf := bigWorkflow(100)
	b, err := Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	var back benchWF
	if err := Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want := *wf
	want.TypeMeta = metav1.TypeMeta{} // not on the wire
	if diff := cmp.Diff(want, back); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// The embedded ObjectMeta (its Marshal is ambiguous with TypeMeta's, so
	// benchWF has none) is field 1, in ObjectMeta's own bytes.
	num, typ, n := protowire.ConsumeTag(b)
	meta, _ := protowire.ConsumeBytes(b[n:])
	if num != 1 || typ != protowire.BytesType || !bytes.Equal(meta, k8sBytes(t, &wf.ObjectMeta)) {
		t.Errorf("ObjectMeta not written as field 1 with its own bytes: %x", b[:16])
	}
}

func BenchmarkMarshal(b *testing.B) {
	wf := bigWorkflow(10000)
	b.Run("wirecodec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := Marshal(wf)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
		}
	})
	b.Run("codecv2", func(b *testing.B) { // what gRPC calls, output in gRPC's buffer pool
		b.ReportAllocs()
		for b.Loop() {
			out, err := CodecV2{}.Marshal(wf)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(out.Len()))
			out.Free()
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := json.Marshal(wf)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
		}
	})
}

func BenchmarkUnmarshal(b *testing.B) {
	wf := bigWorkflow(10000)
	pb, err := Marshal(wf)
	if err != nil {
		b.Fatal(err)
	}
	js, err := json.Marshal(wf)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("wirecodec", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(pb)))
		for b.Loop() {
			var out benchWF
			if err := Unmarshal(pb, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(js)))
		for b.Loop() {
			var out benchWF
			if err := json.Unmarshal(js, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
