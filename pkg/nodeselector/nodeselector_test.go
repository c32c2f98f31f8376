package nodeselector

import (
	"strings"
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// plain is a node that runs a template of its own workflow.
func plain() *v1alpha1.NodeStatus {
	return &v1alpha1.NodeStatus{
		ID: "w-1", Name: "w[0].a", DisplayName: "a", Type: v1alpha1.NodeTypePod,
		TemplateName: "echo", Phase: v1alpha1.NodeSucceeded,
		Inputs: &v1alpha1.Inputs{Parameters: []v1alpha1.Parameter{
			{Name: "msg", Value: v1alpha1.AnyStringPtr("a,b=c")},
			{Name: "empty", Value: v1alpha1.AnyStringPtr("")},
			{Name: "unset"},
		}},
	}
}

// referring is a node that runs a template of a WorkflowTemplate.
func referring() *v1alpha1.NodeStatus {
	return &v1alpha1.NodeStatus{
		ID: "w-2", Name: "w[1].b", DisplayName: "b", Type: v1alpha1.NodeTypePod,
		TemplateName: "echo", Phase: v1alpha1.NodeRunning,
		TemplateRef: &v1alpha1.TemplateRef{Name: "lib", Template: "say"},
	}
}

func TestMatches(t *testing.T) {
	tests := []struct {
		sel          string
		plain, refer bool
	}{
		{"", true, true},
		// displayName
		{"displayName=a", true, false},
		{"displayName!=a", false, true},
		// templateName: templateRef.template when the node has a templateRef
		{"templateName=echo", true, false},
		{"templateName=say", false, true},
		{"templateName!=echo", false, true},
		// phase, with each operator
		{"phase=Succeeded", true, false},
		{"phase==Succeeded", true, false},
		{"phase!=Succeeded", false, true},
		// name and id
		{"name=w[0].a", true, false},
		{"id=w-2", false, true},
		{"name=w[0].a,id=w-1", true, false},
		// templateRef.name and templateRef.template; absent reads as ""
		{"templateRef.name=lib", false, true},
		{"templateRef.template=say", false, true},
		{"templateRef.name=", true, false},
		{"templateRef.name!=lib", true, false},
		// inputs.parameters.<name>.value, with escapes; absent or unset reads as ""
		{`inputs.parameters.msg.value=a\,b\=c`, true, false},
		{"inputs.parameters.msg.value=a", false, false},
		{"inputs.parameters.empty.value=", true, true},
		{"inputs.parameters.unset.value=", true, true},
		{"inputs.parameters.other.value!=x", true, true},
		// AND
		{"phase=Succeeded,displayName=a", true, false},
		{"phase=Succeeded,displayName=b", false, false},
		// a field Argo does not define (type is not one) reads as ""
		{"type=Pod", false, false},
		{"type!=Pod", true, true},
	}
	for _, tt := range tests {
		sel, err := Parse(tt.sel)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.sel, err)
			continue
		}
		if got := sel.Matches(plain()); got != tt.plain {
			t.Errorf("%q matches the plain node = %v, want %v", tt.sel, got, tt.plain)
		}
		if got := sel.Matches(referring()); got != tt.refer {
			t.Errorf("%q matches the referring node = %v, want %v", tt.sel, got, tt.refer)
		}
	}
}

func TestZeroAndEmpty(t *testing.T) {
	if (Selector{}).Matches(plain()) {
		t.Error("the zero Selector matched")
	}
	if !(Selector{}).Empty() {
		t.Error("the zero Selector is not Empty")
	}
	sel, err := Parse("")
	if err != nil || !sel.Empty() || !sel.Matches(plain()) {
		t.Errorf(`Parse("") = %v, %v: want an empty selector that matches every node`, sel, err)
	}
	if sel.Matches(nil) {
		t.Error("a selector matched a nil node")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ sel, text string }{
		{"phase", "can't understand 'phase'"},
		{`phase=a\b`, "invalid escape sequence"},
		{"phase=a=b", "unescaped"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.sel)
		if err == nil || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tt.sel, err, tt.text)
		}
	}
}

func TestCheckFields(t *testing.T) {
	for _, ok := range []string{"", "displayName=a", "templateName=a", "phase=a", "name=a", "id=a",
		"templateRef.name=a", "templateRef.template=a", "inputs.parameters.x.value=a", "phase=a,id!=b"} {
		sel, err := Parse(ok)
		if err != nil {
			t.Fatalf("Parse(%q): %v", ok, err)
		}
		if err := sel.CheckFields(); err != nil {
			t.Errorf("CheckFields(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"type=Pod", "status=Running", "inputs.parameters.x=1",
		"inputs.parameters..value=1", "phase=Running,outputs.result=x"} {
		sel, err := Parse(bad)
		if err != nil {
			t.Fatalf("Parse(%q): %v", bad, err)
		}
		err = sel.CheckFields()
		if err == nil || !strings.Contains(err.Error(), "unsupported field") {
			t.Errorf("CheckFields(%q) = %v, want an unsupported field", bad, err)
		}
	}
}

func TestString(t *testing.T) {
	sel, err := Parse(`phase!=Failed,inputs.parameters.m.value==a\,b`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sel.String(), `inputs.parameters.m.value=a\,b,phase!=Failed`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (Selector{}).String(); got != "" {
		t.Errorf("zero String() = %q", got)
	}
}
