package engine

import (
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const stepsYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: steps
spec:
  entrypoint: hello-hello-hello
  templates:
  - name: hello-hello-hello
    steps:
    - - name: hello1
        template: print-message
        arguments:
          parameters: [{name: message, value: "hello1"}]
    - - name: hello2a
        template: print-message
        arguments:
          parameters: [{name: message, value: "hello2a"}]
      - name: hello2b
        template: print-message
        arguments:
          parameters: [{name: message, value: "hello2b"}]
  - name: print-message
    inputs:
      parameters:
      - name: message
    container:
      image: busybox
      command: [echo]
      args: ["{{inputs.parameters.message}}"]
`

func TestStepsConformance(t *testing.T) {
	d := load(t, stepsYAML).run()
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"steps":            "Steps Succeeded",
		"steps[0]":         "StepGroup Succeeded",
		"steps[0].hello1":  "Pod Succeeded",
		"steps[1]":         "StepGroup Succeeded",
		"steps[1].hello2a": "Pod Succeeded",
		"steps[1].hello2b": "Pod Succeeded",
	})
	eq(t, "root children", d.children("steps"), []string{"steps[0]"})
	eq(t, "group 0 children", d.children("steps[0]"), []string{"steps[0].hello1"})
	eq(t, "hello1 children", d.children("steps[0].hello1"), []string{"steps[1]"})
	eq(t, "outbound", d.outbound("steps"), []string{"steps[1].hello2a", "steps[1].hello2b"})
	eq(t, "args", argsOf(d.launchOf("steps[1].hello2b")), "echo hello2b")
	if got := d.node("steps[0].hello1").DisplayName; got != "hello1" {
		t.Errorf("displayName %q", got)
	}
}

// The steps tree of rule 1.9 [run]: a skipped step, a loop over a string, a
// number and a map, a failing group with continueOn, and an exit handler.
const stTreeYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: st
spec:
  entrypoint: main
  onExit: exit
  templates:
  - name: main
    steps:
    - - name: a
        template: echo
      - name: skip
        template: echo
        when: "hello == nope"
      - name: loop
        template: echo
        withItems: ["x y", 2, {"k": "v", "a": 1}]
    - - name: b
        template: fail
        continueOn: {failed: true}
      - name: c
        template: fail
  - name: echo
    container: {image: busybox, command: [echo, hi]}
  - name: fail
    container: {image: busybox, command: [sh, -c, "exit 1"]}
  - name: exit
    container: {image: busybox, command: [echo, bye]}
`

func TestStepsTreeRule19(t *testing.T) {
	d := load(t, stTreeYAML).run()
	d.expectExactly(v1alpha1.WorkflowFailed, "child 'st-2794836066' failed", map[string]string{
		"st":                    "Steps Failed child 'st-2794836066' failed",
		"st[0]":                 "StepGroup Succeeded",
		"st[0].a":               "Pod Succeeded",
		"st[0].skip":            "Skipped Skipped when 'hello == nope' evaluated false",
		"st[0].loop(0:x y)":     "Pod Succeeded",
		"st[0].loop(1:2)":       "Pod Succeeded",
		"st[0].loop(2:a:1,k:v)": "Pod Succeeded",
		"st[1]":                 "StepGroup Failed child 'st-2794836066' failed",
		"st[1].b":               "Pod Failed main: Error (exit code 1)",
		"st[1].c":               "Pod Failed main: Error (exit code 1)",
		"st.onExit":             "Pod Succeeded",
	})
	eq(t, "st[0] children", d.children("st[0]"), []string{"st[0].a", "st[0].skip", "st[0].loop(0:x y)", "st[0].loop(1:2)", "st[0].loop(2:a:1,k:v)"})
	for _, c := range d.children("st[0]") {
		eq(t, c+" children", d.children(c), []string{"st[1]"})
	}
	eq(t, "st[1] children", d.children("st[1]"), []string{"st[1].b", "st[1].c"})
	eq(t, "outbound", d.outbound("st"), []string{"st[1].b", "st[1].c"})
	a := d.node("st[0].a")
	eq(t, "a id", a.ID, "st-3477569709")
	eq(t, "a pod", d.launchOf("st[0].a").PodName, "st-echo-3477569709")
	eq(t, "c id", d.node("st[1].c").ID, "st-2794836066")
	skip := d.node("st[0].skip")
	eq(t, "skip id", skip.ID, "st-974193525")
	eq(t, "skip children", skip.Children, []string{"st-243406137"})
	eq(t, "skip flag", skip.NodeFlag, &v1alpha1.NodeFlag{})
	eq(t, "skip times", skip.FinishedAt, skip.StartedAt)
	eq(t, "skip scope", skip.TemplateScope, "local/st")
	eq(t, "skip template", skip.TemplateName, "echo")
	exit := d.node("st.onExit")
	eq(t, "exit boundary", exit.BoundaryID, "")
	eq(t, "exit flag", exit.NodeFlag, &v1alpha1.NodeFlag{Hooked: true})
	eq(t, "exit displayName", exit.DisplayName, "st.onExit")
	for _, n := range d.wf.Status.Nodes {
		for _, c := range n.Children {
			if c == exit.ID {
				t.Errorf("st.onExit is a child of %s", n.Name)
			}
		}
	}
	eq(t, "display names", []string{d.node("st[0]").DisplayName, d.node("st[0].loop(0:x y)").DisplayName, d.node("st").DisplayName},
		[]string{"[0]", "loop(0:x y)", "st"})
	eq(t, "boundaries", []string{d.node("st[0]").BoundaryID, d.node("st[1].c").BoundaryID, d.node("st").BoundaryID},
		[]string{"st", "st", ""})
	if d.node("st[0].a").NodeFlag != nil {
		t.Errorf("pod nodeFlag should be nil")
	}
}
