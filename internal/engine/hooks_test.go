package engine

import (
	"strconv"
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const exitHandlersYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: exit-handlers-
spec:
  entrypoint: intentional-fail
  onExit: exit-handler
  templates:
  - name: intentional-fail
    container:
      image: alpine:3.23
      command: [sh, -c]
      args: ["echo intentional failure; exit 1"]
  - name: exit-handler
    steps:
    - - name: notify
        template: send-email
      - name: celebrate
        template: celebrate
        when: "{{workflow.status}} == Succeeded"
      - name: cry
        template: cry
        when: "{{workflow.status}} != Succeeded"
  - name: send-email
    container:
      image: alpine:3.23
      command: [sh, -c]
      args: ["echo send e-mail: {{workflow.name}} {{workflow.status}} {{workflow.duration}}. Failed steps {{workflow.failures}}"]
  - name: celebrate
    container:
      image: alpine:3.23
      command: [sh, -c]
      args: ["echo hooray!"]
  - name: cry
    container:
      image: alpine:3.23
      command: [sh, -c]
      args: ["echo boohoo!"]
`

// exit-handlers.yaml, and trap 9: workflow.failures is a Go-quoted JSON
// string.
func TestExitHandlersConformance(t *testing.T) {
	d := load(t, exitHandlersYAML).run()
	d.expectExactly(v1alpha1.WorkflowFailed, "main: Error (exit code 1)", map[string]string{
		"exit-handlers":                     "Pod Failed main: Error (exit code 1)",
		"exit-handlers.onExit":              "Steps Succeeded",
		"exit-handlers.onExit[0]":           "StepGroup Succeeded",
		"exit-handlers.onExit[0].notify":    "Pod Succeeded",
		"exit-handlers.onExit[0].celebrate": "Skipped Skipped when 'Failed == Succeeded' evaluated false",
		"exit-handlers.onExit[0].cry":       "Pod Succeeded",
	})
	failures := `[{"displayName":"exit-handlers","message":"main: Error (exit code 1)","templateName":"intentional-fail",` +
		`"phase":"Failed","podName":"exit-handlers","finishedAt":"2025-01-02T03:04:06Z"}]`
	eq(t, "notify", argsOf(d.launchOf("exit-handlers.onExit[0].notify")),
		"sh -c echo send e-mail: exit-handlers Failed 1.000000. Failed steps "+strconv.Quote(failures))
	onExit := d.node("exit-handlers.onExit")
	eq(t, "flag", onExit.NodeFlag, &v1alpha1.NodeFlag{Hooked: true})
	eq(t, "boundary", onExit.BoundaryID, "")
	eq(t, "group boundary", d.node("exit-handlers.onExit[0]").BoundaryID, onExit.ID)
	eq(t, "display", d.node("exit-handlers.onExit[0].cry").DisplayName, "cry")
	eq(t, "launch marked", d.launchOf("exit-handlers.onExit[0].cry").OnExit, true)
}

const exitHandlerStepLevelYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: exit-handler-step-level-
spec:
  entrypoint: main
  arguments:
    parameters: [{name: g, value: gv}]
  templates:
    - name: main
      steps:
        - - name: hello1
            template: print-message
            arguments:
              parameters: [{ name: message, value: "hello1" }]
            hooks:
              exit:
                template: exit
        - - name: hello2a
            template: print-message
            arguments:
              parameters: [{ name: message, value: "hello2a" }]
            hooks:
              exit:
                template: exit
          - name: hello2b
            template: print-message
            arguments:
              parameters: [{ name: message, value: "hello2b" }]
            hooks:
              exit:
                template: exit
    - name: exit
      inputs:
        parameters: [{name: g, default: none}]
      container:
        image: busybox
        command: [echo]
        args: ["step cleanup {{inputs.parameters.g}}"]
    - name: print-message
      inputs:
        parameters:
          - name: message
      container:
        image: busybox
        command: [echo]
        args: ["{{inputs.parameters.message}}"]
`

// exit-handler-step-level.yaml; the handlers receive spec.arguments (trap
// 14) and the next group waits for them.
func TestExitHandlerStepLevelConformance(t *testing.T) {
	d := load(t, exitHandlerStepLevelYAML).run()
	p := "exit-handler-step-level"
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		p:                        "Steps Succeeded",
		p + "[0]":                "StepGroup Succeeded",
		p + "[0].hello1":         "Pod Succeeded",
		p + "[0].hello1.onExit":  "Pod Succeeded",
		p + "[1]":                "StepGroup Succeeded",
		p + "[1].hello2a":        "Pod Succeeded",
		p + "[1].hello2a.onExit": "Pod Succeeded",
		p + "[1].hello2b":        "Pod Succeeded",
		p + "[1].hello2b.onExit": "Pod Succeeded",
	})
	eq(t, "hello1 children", d.children(p+"[0].hello1"), []string{p + "[0].hello1.onExit", p + "[1]"})
	eq(t, "exit arg", argsOf(d.launchOf(p+"[1].hello2b.onExit")), "echo step cleanup gv")
	ex := d.node(p + "[0].hello1.onExit")
	eq(t, "exit boundary", ex.BoundaryID, d.node(p).ID)
	eq(t, "exit display", ex.DisplayName, "hello1.onExit")
	// group 1 starts only after hello1's handler finished
	if !d.node(p + "[1]").StartedAt.After(ex.StartedAt.Time) {
		t.Errorf("group 1 must wait for the exit handler")
	}
}

func exitYAML(entry, exit string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ef}
spec:
  entrypoint: main
  onExit: exit
  templates:
  - name: main
` + entry + `
  - name: exit
` + exit + `
  - name: ok
    container: {image: busybox, command: [echo, ok]}
  - name: bad
    container: {image: busybox, command: [sh, -c, "exit 1"]}
`
}

// Rule 2.2 and trap 14: a failing workflow exit handler fails a Succeeded
// workflow with its own message, but never changes a failed one.
func TestWorkflowExitHandlerPhase(t *testing.T) {
	okEntry := "    container: {image: busybox, command: [echo, ok]}"
	badEntry := "    container: {image: busybox, command: [sh, -c, \"exit 2\"]}"
	badExitSteps := "    steps:\n    - - {name: x, template: bad}"
	t.Run("exit fails a succeeded workflow [run]", func(t *testing.T) {
		d := load(t, exitYAML(okEntry, badExitSteps)).run()
		x := v1alpha1.NodeID("ef", "ef.onExit[0].x")
		d.expect(v1alpha1.WorkflowFailed, "child '"+x+"' failed", map[string]string{"ef": "Pod Succeeded", "ef.onExit": "Steps Failed"})
	})
	t.Run("exit errors a succeeded workflow", func(t *testing.T) {
		d := load(t, exitYAML(okEntry, "    container: {image: busybox, command: [run]}"))
		d.respond = func(_ *driver, l Launch) *stepEnd {
			if l.Template.Name == "exit" {
				return &stepEnd{phase: v1alpha1.NodeError, message: "wait: Completed (exit code 1)"}
			}
			return nil
		}
		d.run()
		d.expect(v1alpha1.WorkflowError, "wait: Completed (exit code 1)", nil)
	})
	t.Run("failed workflow keeps its message", func(t *testing.T) {
		d := load(t, exitYAML(badEntry, badExitSteps)).run()
		d.expect(v1alpha1.WorkflowFailed, "main: Error (exit code 2)", map[string]string{"ef.onExit": "Steps Failed"})
	})
	t.Run("exit handler sees the mapped status", func(t *testing.T) {
		d := load(t, exitYAML(badEntry, "    container: {image: busybox, command: [echo, \"{{workflow.status}}\"]}")).run()
		eq(t, "status", argsOf(d.launchOf("ef.onExit")), "echo Failed")
	})
}

// Trap 14: a failed step-level exit handler is ignored entirely [run].
func TestStepExitHandlerFailureIgnored(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sx}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: ok, onExit: bad}
  - name: dagmain
    dag:
      tasks:
      - {name: t, template: ok, onExit: bad}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
  - name: bad
    container: {image: busybox, command: [sh, -c, "exit 1"]}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"sx": "Steps Succeeded", "sx[0]": "StepGroup Succeeded", "sx[0].a": "Pod Succeeded", "sx[0].a.onExit": "Pod Failed"})

	d = load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: dx}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: t, template: ok, onExit: bad}
      - {name: u, template: ok, depends: t}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
  - name: bad
    container: {image: busybox, command: [sh, -c, "exit 1"]}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"dx": "DAG Succeeded", "dx.t.onExit": "Pod Failed", "dx.u": "Pod Succeeded"})
	// u waited for t's exit handler and hangs under t's outbound node
	eq(t, "t children", d.children("dx.t"), []string{"dx.t.onExit", "dx.u"})
}

// Rule 5.4a: a fanned-out task's exit handler runs per iteration and once
// more for the TaskGroup; a looped step's only per iteration.
func TestLoopExitHandlers(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: lx}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: t, template: ok, onExit: ok, withItems: [a, b]}
      - {name: s, template: steps}
  - name: steps
    steps:
    - - {name: l, template: ok, onExit: ok, withItems: [a, b]}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"lx.t(0:a).onExit":      "Pod Succeeded",
		"lx.t(1:b).onExit":      "Pod Succeeded",
		"lx.t.onExit":           "Pod Succeeded",
		"lx.s[0].l(0:a).onExit": "Pod Succeeded",
		"lx.s[0].l(1:b).onExit": "Pod Succeeded",
	})
	if d.has("lx.s[0].l.onExit") {
		t.Error("a looped step has no group exit handler")
	}
	eq(t, "taskgroup children", d.children("lx.t"), []string{"lx.t(0:a)", "lx.t(1:b)", "lx.t.onExit"})
}

// Rule 9.3: expression hooks fire once, as children of their node.
func TestLifecycleHooks(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: lh}
spec:
  entrypoint: main
  hooks:
    exit:
      template: report
      arguments:
        parameters: [{name: m, value: "{{workflow.status}}"}]
    running:
      expression: workflow.status == "Running"
      template: report
      arguments:
        parameters: [{name: m, value: wf-running}]
  templates:
  - name: main
    steps:
    - - name: step-1
        template: slow
        hooks:
          running:
            expression: steps["step-1"].status == "Running"
            template: report
            arguments:
              parameters: [{name: m, value: step-running}]
          failed:
            expression: steps["step-1"].status == "Failed"
            template: report
            arguments:
              parameters: [{name: m, value: never}]
  - name: slow
    container: {image: busybox, command: [sleep, "5"]}
  - name: report
    inputs: {parameters: [{name: m}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.m}}"]}
`).run()
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"lh":                         "Steps Succeeded",
		"lh[0]":                      "StepGroup Succeeded",
		"lh[0].step-1":               "Pod Succeeded",
		"lh[0].step-1.hooks.running": "Pod Succeeded",
		"lh.hooks.running":           "Pod Succeeded",
		"lh.onExit":                  "Pod Succeeded",
	})
	eq(t, "root children", d.children("lh"), []string{"lh[0]", "lh.hooks.running"})
	eq(t, "step children", d.children("lh[0].step-1"), []string{"lh[0].step-1.hooks.running"})
	eq(t, "wf hook boundary", d.node("lh.hooks.running").BoundaryID, "")
	eq(t, "step hook boundary", d.node("lh[0].step-1.hooks.running").BoundaryID, "lh")
	eq(t, "hook flag", d.node("lh.hooks.running").NodeFlag, &v1alpha1.NodeFlag{Hooked: true})
	eq(t, "exit args", arg(d.launchOf("lh.onExit"), "m"), "Succeeded")
	eq(t, "display", d.node("lh[0].step-1.hooks.running").DisplayName, "step-1.hooks.running")
}

// Rule 9.3: a hook without an expression is an error.
func TestHookWithoutExpression(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: hx}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: a
        template: ok
        hooks:
          h: {template: ok}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
`).run()
	d.expect(v1alpha1.WorkflowFailed, "Expression required for hook hx[0].a.hooks.h", map[string]string{
		"hx[0].a.hooks.h": "Skipped Error Expression required for hook hx[0].a.hooks.h",
		"hx[0]":           "StepGroup Error Expression required for hook hx[0].a.hooks.h",
	})
}

// Rule 9.4: the workflow hooks finish before the exit handler starts, and
// the exit handler before the phase is set.
func TestWorkflowEndOrder(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wo}
spec:
  entrypoint: main
  onExit: ok
  hooks:
    done:
      expression: workflow.status == "Succeeded"
      template: slow
  templates:
  - name: main
    container: {image: busybox, command: [echo, main]}
  - name: slow
    container: {image: busybox, command: [sleep, "7"]}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"wo.hooks.done": "Pod Succeeded", "wo.onExit": "Pod Succeeded"})
	hook, exit := d.node("wo.hooks.done"), d.node("wo.onExit")
	if exit.StartedAt.Before(&hook.FinishedAt) {
		t.Errorf("exit started %v before the hook finished %v", exit.StartedAt, hook.FinishedAt)
	}
	if !d.wf.Status.FinishedAt.Equal(&exit.FinishedAt) {
		t.Errorf("workflow finished %v, exit %v", d.wf.Status.FinishedAt, exit.FinishedAt)
	}
}

// Rule 9.2: a step's exit handler starts when the step ends, whatever its
// siblings do.
func TestExitHandlerDoesNotWaitForSiblings(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sib}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: slow, template: slow}
      - {name: quick, template: ok, onExit: ok}
  - name: slow
    container: {image: busybox, command: [sleep, "30"]}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"sib[0].quick.onExit": "Pod Succeeded"})
	eq(t, "exit started", d.node("sib[0].quick.onExit").StartedAt.Time, t0.Add(time.Second))
}
