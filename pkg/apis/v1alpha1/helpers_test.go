package v1alpha1

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestNodeID(t *testing.T) {
	tests := []struct{ wf, node, want string }{
		{"hello", "hello[0]", "hello-3705025351"},
		{"hello", "hello", "hello"},
		{"st", "st[0].a", "st-3477569709"},
	}
	for _, tt := range tests {
		if got := NodeID(tt.wf, tt.node); got != tt.want {
			t.Errorf("NodeID(%q, %q) = %q, want %q", tt.wf, tt.node, got, tt.want)
		}
	}
	wf := &Workflow{}
	wf.Name = "hello"
	if got := wf.NodeID("hello[0]"); got != "hello-3705025351" {
		t.Errorf("(*Workflow).NodeID = %q", got)
	}
}

func TestNodePhasePredicates(t *testing.T) {
	tests := []struct {
		phase                          NodePhase
		completed, fulfilled, failedOr bool
	}{
		{"", false, false, false},
		{NodePending, false, false, false},
		{NodeRunning, false, false, false},
		{NodeSucceeded, true, true, false},
		{NodeFailed, true, true, true},
		{NodeError, true, true, true},
		{NodeSkipped, false, true, false},
		{NodeOmitted, false, true, false},
	}
	for _, tt := range tests {
		if got := tt.phase.Completed(); got != tt.completed {
			t.Errorf("%q.Completed() = %v", tt.phase, got)
		}
		if got := tt.phase.Fulfilled(); got != tt.fulfilled {
			t.Errorf("%q.Fulfilled() = %v", tt.phase, got)
		}
		if got := tt.phase.FailedOrError(); got != tt.failedOr {
			t.Errorf("%q.FailedOrError() = %v", tt.phase, got)
		}
	}
	for phase, want := range map[WorkflowPhase]bool{
		WorkflowUnknown: false, WorkflowPending: false, WorkflowRunning: false,
		WorkflowSucceeded: true, WorkflowFailed: true, WorkflowError: true,
	} {
		if got := phase.Completed(); got != want {
			t.Errorf("WorkflowPhase %q.Completed() = %v", phase, got)
		}
	}
}

func TestTemplateType(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want TemplateType
		all  []TemplateType
	}{
		{"container", `{"container":{"image":"a"}}`, TemplateTypeContainer, []TemplateType{TemplateTypeContainer}},
		{"script", `{"script":{"image":"a","source":"x"}}`, TemplateTypeScript, []TemplateType{TemplateTypeScript}},
		{"empty suspend", `{"suspend":{}}`, TemplateTypeSuspend, []TemplateType{TemplateTypeSuspend}},
		{"plugin", `{"plugin":{"hello":{}}}`, TemplateTypePlugin, []TemplateType{TemplateTypePlugin}},
		{"steps", `{"steps":[[{"name":"a","template":"b"}]]}`, TemplateTypeSteps, []TemplateType{TemplateTypeSteps}},
		{"empty steps", `{"steps":[]}`, TemplateTypeSteps, []TemplateType{TemplateTypeSteps}},
		{"dag", `{"dag":{"tasks":[]}}`, TemplateTypeDAG, []TemplateType{TemplateTypeDAG}},
		{"data", `{"data":{"source":{},"transformation":[]}}`, TemplateTypeData, []TemplateType{TemplateTypeData}},
		{"http", `{"http":{"url":"u"}}`, TemplateTypeHTTP, []TemplateType{TemplateTypeHTTP}},
		{"resource", `{"resource":{"action":"get"}}`, TemplateTypeResource, []TemplateType{TemplateTypeResource}},
		{"containerSet", `{"containerSet":{"containers":[]}}`, TemplateTypeContainerSet, []TemplateType{TemplateTypeContainerSet}},
		{"none", `{"name":"x"}`, TemplateTypeUnknown, nil},
		{"two", `{"container":{"image":"a"},"dag":{"tasks":[]}}`, TemplateTypeUnknown, []TemplateType{TemplateTypeContainer, TemplateTypeDAG}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tmpl Template
			if err := json.Unmarshal([]byte(tt.yaml), &tmpl); err != nil {
				t.Fatal(err)
			}
			if got := tmpl.Type(); got != tt.want {
				t.Errorf("Type() = %s, want %s", got, tt.want)
			}
			if got := tmpl.Types(); !reflect.DeepEqual(got, tt.all) {
				t.Errorf("Types() = %v, want %v", got, tt.all)
			}
		})
	}
	var nilTmpl *Template
	if nilTmpl.Type() != TemplateTypeUnknown {
		t.Error("nil template should be Unknown")
	}
}

func TestPluginKeepsRawJSON(t *testing.T) {
	in := `{"name":"p","plugin":{"hello":{"b":[1,{"z":null}],"a":"x"}}}`
	var tmpl Template
	if err := json.Unmarshal([]byte(in), &tmpl); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(tmpl.Plugin)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"hello":{"b":[1,{"z":null}],"a":"x"}}`; string(out) != want {
		t.Fatalf("got %s, want %s", out, want)
	}
	if err := json.Unmarshal([]byte(`{"plugin":"nope"}`), &tmpl); err == nil {
		t.Fatal("a plugin that is not an object must be rejected")
	}
}

func TestAmount(t *testing.T) {
	var h Histogram
	if err := json.Unmarshal([]byte(`{"value":"v","buckets":[0.01,1,10.50]}`), &h); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(h)
	if want := `{"value":"v","buckets":[0.01,1,10.50]}`; string(out) != want {
		t.Fatalf("got %s, want %s", out, want)
	}
	if f, err := h.Buckets[2].Float64(); err != nil || f != 10.5 {
		t.Fatalf("Float64 = %v, %v", f, err)
	}
	if err := json.Unmarshal([]byte(`{"buckets":["x"]}`), &h); err == nil {
		t.Fatal("a string bucket must be rejected")
	}
}

func TestScheme(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{
		WorkflowKind, WorkflowTemplateKind, ClusterWorkflowTemplateKind, CronWorkflowKind, WorkflowEventBindingKind,
	} {
		for _, k := range []string{kind, kind + "List"} {
			obj, err := scheme.New(SchemeGroupVersion.WithKind(k))
			if err != nil {
				t.Errorf("%s: %v", k, err)
				continue
			}
			if got := reflect.TypeOf(obj).Elem().Name(); got != k {
				t.Errorf("scheme maps %s to %s", k, got)
			}
		}
	}
	if APIVersion != "argoproj.io/v1alpha1" || SchemeGroupVersion.String() != APIVersion {
		t.Errorf("APIVersion %q, SchemeGroupVersion %q", APIVersion, SchemeGroupVersion)
	}
}

// TestCompareSubsetReportsLosses checks the round-trip comparison itself:
// false and {} must count, while null, "" and [] may be dropped.
func TestCompareSubsetReportsLosses(t *testing.T) {
	original, err := decodeGeneric([]byte(`{"a":false,"b":{},"c":"","d":[],"e":null,"f":1.50,"g":[{"x":"1"}],"h":"1024Mi"}`))
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := decodeGeneric([]byte(`{"f":"1.5","g":[{"x":1}],"h":"1Gi"}`))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := normalize(original)
	got, _ := normalize(encoded)
	var losses []string
	compareSubset("", want, got, &losses)
	joined := strings.Join(losses, "\n")
	if len(losses) != 2 || !strings.Contains(joined, ".a: lost") || !strings.Contains(joined, ".b: lost") {
		t.Fatalf("losses:\n%s", joined)
	}
}
