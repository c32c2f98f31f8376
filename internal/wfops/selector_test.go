package wfops

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const selectorNodes = `
metadata: {name: sw}
status:
  nodes:
    sw: {type: Steps, phase: Running, templateName: main, children: ["sw[0]"]}
    sw[0]: {type: StepGroup, phase: Running, boundaryID: sw, children: ["sw[0].approve", "sw[0].build"]}
    sw[0].approve:
      type: Suspend
      phase: Running
      boundaryID: sw
      templateName: approve
      inputs: {parameters: [{name: env, value: prod}, {name: empty, value: ""}]}
    sw[0].build:
      phase: Succeeded
      boundaryID: sw
      templateRef: {name: lib, template: build}
`

func TestNodeSelector(t *testing.T) {
	tests := []struct {
		sel  string
		want []string
	}{
		{sel: "displayName=approve", want: []string{"sw[0].approve"}},
		{sel: "templateName==approve", want: []string{"sw[0].approve"}},
		{sel: "phase=Running,templateName!=approve", want: []string{"sw", "sw[0]"}},
		{sel: "name=sw[0].build", want: []string{"sw[0].build"}},
		{sel: "id=sw", want: []string{"sw"}},
		{sel: "templateRef.name=lib,templateRef.template=build", want: []string{"sw[0].build"}},
		{sel: "templateName=build", want: []string{"sw[0].build"}}, // templateRef.template, as in Argo
		{sel: "templateRef.name!=lib", want: []string{"sw", "sw[0]", "sw[0].approve"}},
		{sel: "inputs.parameters.env.value=prod", want: []string{"sw[0].approve"}},
		{sel: "inputs.parameters.env.value=dev", want: []string{}},
		{sel: "inputs.parameters.empty.value=", want: []string{"sw", "sw[0]", "sw[0].approve", "sw[0].build"}},
		{sel: "displayName=approve,phase=Succeeded", want: []string{}},
	}
	wf := mustWorkflow(t, selectorNodes)
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			s, err := ParseNodeFieldSelector(tt.sel)
			checkErr(t, err, nil, "")
			if d := cmp.Diff(tt.want, names(wf, matchNodes(wf.Status.Nodes, s, nil))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestNodeSelectorErrors(t *testing.T) {
	tests := []struct{ sel, text string }{
		{sel: "", text: "node field selector is empty"},
		{sel: "phase", text: `invalid node field selector "phase"`},
		{sel: "status=Running", text: `unsupported field "status"; supported fields are displayName, templateName, phase, name, id, templateRef.name, templateRef.template and inputs.parameters.<name>.value`},
		{sel: "inputs.parameters.x=1", text: `unsupported field "inputs.parameters.x"`},
		{sel: "inputs.parameters..value=1", text: `unsupported field "inputs.parameters..value"`},
		{sel: "phase=Running,outputs.result=x", text: `unsupported field "outputs.result"`},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			_, err := ParseNodeFieldSelector(tt.sel)
			checkErr(t, err, ErrBadRequest, tt.text)
		})
	}
}
