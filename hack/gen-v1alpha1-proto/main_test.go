package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The real types: the shapes the service protos and Argo's clients rely on.
func TestRealTypes(t *testing.T) {
	s, err := build(roots())
	if err != nil {
		t.Fatal(err)
	}
	out := string(render(s))
	for _, want := range []string{
		"message ParallelSteps {\n  repeated WorkflowStep steps = 1;\n}\n",
		"message Item {\n  optional bytes value = 1;\n}\n",
		"  repeated ParallelSteps steps = 11;\n",
		"  optional int64 parallelism = 7;\n", // a varint IntOrString
		"  optional k8s.io.apimachinery.pkg.util.intstr.IntOrString limit = 1;\n",
		"  map<string, NodeStatus> nodes = 6;\n",
		"  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;\n",
		"import \"k8s.io/api/core/v1/generated.proto\";\n",
		"option go_package = \"github.com/braidwf/braid/pkg/apis/v1alpha1\";\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("generated.proto lacks %q", want)
		}
	}
}

// The committed file is what the types generate now.
func TestCommittedFileIsFresh(t *testing.T) {
	s, err := build(roots())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../api/proto/braid/v1alpha1/generated.proto")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(render(s)) {
		t.Fatal("api/proto/braid/v1alpha1/generated.proto is stale: run hack/protogen.sh")
	}
}

type Wrapped []Leaf

type Leaf struct {
	Name string `protobuf:"bytes,1,opt,name=name"`
}

type ParallelSteps []Leaf

type Good struct {
	Leaves   []ParallelSteps     `protobuf:"bytes,1,rep,name=leaves"`
	Count    *intstr.IntOrString `protobuf:"varint,2,opt,name=count"`
	Labels   map[string]string   `protobuf:"bytes,3,rep,name=labels" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Env      []corev1.EnvVar     `protobuf:"bytes,4,rep,name=env"`
	Ratio    float64             `protobuf:"fixed64,5,opt,name=ratio"`
	Untagged string              `json:"untagged"`
}

func TestShapes(t *testing.T) {
	s, err := build([]reflect.Type{reflect.TypeFor[Good]()})
	if err != nil {
		t.Fatal(err)
	}
	out := string(render(s))
	for _, want := range []string{
		"message Good {\n" +
			"  repeated ParallelSteps leaves = 1;\n" +
			"  optional int64 count = 2;\n" +
			"  map<string, string> labels = 3;\n" +
			"  repeated k8s.io.api.core.v1.EnvVar env = 4;\n" +
			"  optional double ratio = 5;\n}\n",
		"message ParallelSteps {\n  repeated Leaf steps = 1;\n}\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("got\n%s\nwant it to contain\n%s", out, want)
		}
	}
	if len(s.warnings) != 1 || !strings.Contains(s.warnings[0], "Good.Untagged") {
		t.Errorf("warnings %q, want one for Good.Untagged", s.warnings)
	}
}

type dupNumber struct {
	A string `protobuf:"bytes,1,opt,name=a"`
	B string `protobuf:"bytes,1,opt,name=b"`
}

type badWire struct {
	A string `protobuf:"varint,1,opt,name=a"`
}

type badLabel struct {
	A []string `protobuf:"bytes,1,opt,name=a"`
}

type unknownWrapper struct {
	A []Wrapped `protobuf:"bytes,1,rep,name=a"`
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		root reflect.Type
		want string
	}{
		{reflect.TypeFor[dupNumber](), "share number 1"},
		{reflect.TypeFor[badWire](), "needs wire type bytes"},
		{reflect.TypeFor[badLabel](), "needs label rep"},
		{reflect.TypeFor[unknownWrapper](), "wrapperFields"},
	} {
		_, err := build([]reflect.Type{tc.root})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.root.Name(), err, tc.want)
		}
	}
}

func TestCheckReferences(t *testing.T) {
	dir := t.TempDir()
	proto := "message X { " + protoPackage + ".Leaf a = 1; " + protoPackage + ".Nope b = 2; }"
	if err := os.WriteFile(filepath.Join(dir, "x.proto"), []byte(proto), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := build([]reflect.Type{reflect.TypeFor[Leaf]()})
	if err != nil {
		t.Fatal(err)
	}
	err = checkReferences(s, dir, filepath.Join(dir, "out.proto"))
	if err == nil || !strings.Contains(err.Error(), "Nope") || strings.Contains(err.Error(), "Leaf") {
		t.Fatalf("error %v, want one naming Nope only", err)
	}
}
