package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The retry tree of rule 1.9 [run]: limit 2 gives three attempts.
const rtYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: rt
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: r
        template: flaky
  - name: flaky
    retryStrategy:
      limit: 2
    container: {image: busybox, command: [sh, -c, "exit 1"]}
`

func TestRetryTreeRule19(t *testing.T) {
	d := load(t, rtYAML).run()
	rid := v1alpha1.NodeID("rt", "rt[0].r")
	d.expectExactly(v1alpha1.WorkflowFailed, "child '"+rid+"' failed", map[string]string{
		"rt":         "Steps Failed",
		"rt[0]":      "StepGroup Failed",
		"rt[0].r":    "Retry Failed No more retries left",
		"rt[0].r(0)": "Pod Failed main: Error (exit code 1)",
		"rt[0].r(1)": "Pod Failed",
		"rt[0].r(2)": "Pod Failed",
	})
	eq(t, "retry children", d.children("rt[0].r"), []string{"rt[0].r(0)", "rt[0].r(1)", "rt[0].r(2)"})
	eq(t, "retry flag", d.node("rt[0].r").NodeFlag, (*v1alpha1.NodeFlag)(nil))
	eq(t, "attempt flag", d.node("rt[0].r(1)").NodeFlag, &v1alpha1.NodeFlag{Retried: true})
	eq(t, "attempt boundary", d.node("rt[0].r(1)").BoundaryID, "rt")
	eq(t, "retry boundary", d.node("rt[0].r").BoundaryID, "rt")
	eq(t, "attempt display", d.node("rt[0].r(1)").DisplayName, "r(1)")
	eq(t, "pods", len(d.launches), 3)
	eq(t, "retry outputs", d.node("rt[0].r").Outputs.ExitCode, str("1"))
}

// Trap 10 / rule 7.8: spec.retryStrategy wraps every template, the root
// included [run].
const wrYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: wr
spec:
  entrypoint: main
  retryStrategy:
    limit: 1
  templates:
  - name: main
    steps:
    - - name: a
        template: fail
  - name: fail
    container: {image: busybox, command: [sh, -c, "exit 1"]}
`

func TestRetryWorkflowLevel(t *testing.T) {
	d := load(t, wrYAML).run()
	d.expect(v1alpha1.WorkflowFailed, "No more retries left", map[string]string{
		"wr":            "Retry Failed No more retries left",
		"wr(0)":         "Steps Failed",
		"wr(1)":         "Steps Failed",
		"wr(0)[0].a":    "Retry Failed No more retries left",
		"wr(0)[0].a(0)": "Pod Failed",
		"wr(0)[0].a(1)": "Pod Failed",
		"wr(1)[0].a(0)": "Pod Failed",
		"wr(1)[0].a(1)": "Pod Failed",
	})
	eq(t, "root id", d.node("wr").ID, "wr")
	eq(t, "root children", d.children("wr"), []string{"wr(0)", "wr(1)"})
	eq(t, "pods", len(d.launches), 4)
	eq(t, "attempt display", d.node("wr(1)").DisplayName, "wr(1)")
	eq(t, "attempt boundary", d.node("wr(1)").BoundaryID, "")
}

const retryContainerYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: retry-container-
spec:
  entrypoint: retry-container
  templates:
  - name: retry-container
    retryStrategy:
      limit: "10"
    container:
      image: python:alpine3.23
      command: ["python", -c]
      args: ["import random; import sys; exit_code = random.choice([0, 1, 1]); sys.exit(exit_code)"]
`

// retry-container.yaml with a deterministic dice: two failures, then success.
func TestRetryContainerConformance(t *testing.T) {
	d := load(t, retryContainerYAML)
	n := 0
	d.respond = func(_ *driver, l Launch) *stepEnd {
		n++
		if n < 3 {
			return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1}
		}
		return &stepEnd{}
	}
	d.run()
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"retry-container":    "Retry Succeeded",
		"retry-container(0)": "Pod Failed",
		"retry-container(1)": "Pod Failed",
		"retry-container(2)": "Pod Succeeded",
	})
	eq(t, "root attempts display", d.node("retry-container(2)").DisplayName, "retry-container(2)")
	eq(t, "outputs copied", d.node("retry-container").Outputs.ExitCode, str("0"))
	eq(t, "pod name", d.launchOf("retry-container(1)").PodName, podName("retry-container", "retry-container(1)", "retry-container"))
}

var rpFailed = "child '" + v1alpha1.NodeID("rp", "rp[0].r") + "' failed"

func retryYAML(strategy, cmd string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: rp
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: r
        template: t
  - name: t
    retryStrategy:
` + strategy + `
    container:
      image: busybox
      command: [sh, -c]
      args: ["` + cmd + `"]
`
}

// Rule 7.3 / trap 11: a policy mismatch ends with the attempt's own phase
// and message, not "No more retries left".
func TestRetryPolicies(t *testing.T) {
	tests := []struct {
		name     string
		strategy string
		stepEnd  stepEnd
		attempts int
		phase    v1alpha1.NodePhase
		message  string
	}{
		{"OnFailure retries Failed", "      limit: 2", stepEnd{phase: v1alpha1.NodeFailed, exitCode: 2}, 3, v1alpha1.NodeFailed, "No more retries left"},
		{"OnFailure stops at Error", "      limit: 2", stepEnd{phase: v1alpha1.NodeError, message: "wait: Completed (exit code 1)"}, 1, v1alpha1.NodeError, "wait: Completed (exit code 1)"},
		{"OnError stops at Failed", "      limit: 2\n      retryPolicy: OnError", stepEnd{phase: v1alpha1.NodeFailed, exitCode: 3}, 1, v1alpha1.NodeFailed, "main: Error (exit code 3)"},
		{"OnError retries Error", "      limit: 1\n      retryPolicy: OnError", stepEnd{phase: v1alpha1.NodeError, message: "boom"}, 2, v1alpha1.NodeError, "No more retries left"},
		{"Always", "      limit: 1\n      retryPolicy: Always", stepEnd{phase: v1alpha1.NodeError, message: "boom"}, 2, v1alpha1.NodeError, "No more retries left"},
		{"transient retried", "      limit: 2\n      retryPolicy: OnTransientError", stepEnd{phase: v1alpha1.NodeError, message: "read tcp: connection reset by peer"}, 3, v1alpha1.NodeError, "No more retries left"},
		{"not transient", "      limit: 2\n      retryPolicy: OnTransientError", stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1}, 1, v1alpha1.NodeFailed, "main: Error (exit code 1)"},
		{"string limit", "      limit: \"1\"", stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1}, 2, v1alpha1.NodeFailed, "No more retries left"},
		{"expression false", "      limit: 5\n      expression: asInt(lastRetry.exitCode) > 1", stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1}, 1, v1alpha1.NodeFailed, "retryStrategy.expression evaluated to false"},
		{"expression true", "      limit: 2\n      expression: asInt(lastRetry.exitCode) > 1", stepEnd{phase: v1alpha1.NodeFailed, exitCode: 2}, 3, v1alpha1.NodeFailed, "No more retries left"},
		{"expression sees status", "      limit: 2\n      expression: lastRetry.status == 'Error' && retries == '0'", stepEnd{phase: v1alpha1.NodeError, message: "x"}, 2, v1alpha1.NodeError, "retryStrategy.expression evaluated to false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := load(t, retryYAML(tt.strategy, "run"))
			d.respond = func(*driver, Launch) *stepEnd { o := tt.stepEnd; return &o }
			d.run()
			r := d.node("rp[0].r")
			if r.Phase != tt.phase || r.Message != tt.message {
				t.Errorf("retry node: %s %q, want %s %q", r.Phase, r.Message, tt.phase, tt.message)
			}
			eq(t, "attempts", len(d.launches), tt.attempts)
		})
	}
}

// No limit means unlimited retries (rule 7.2).
func TestRetryUnlimited(t *testing.T) {
	d := load(t, retryYAML("      retryPolicy: Always", "run"))
	n := 0
	d.respond = func(*driver, Launch) *stepEnd {
		n++
		if n < 20 {
			return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1}
		}
		return &stepEnd{}
	}
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"rp[0].r": "Retry Succeeded", "rp[0].r(19)": "Pod Succeeded"})
}

// Rule 7.7 [run]: {{retries}} and lastRetry.* inside attempts; lastRetry
// exitCode is "0" on attempt 0 (but "-1" in the expression, trap 11).
func TestRetryVariables(t *testing.T) {
	d := load(t, retryYAML("      limit: 1", "{{retries}} {{lastRetry.exitCode}} {{lastRetry.status}} {{node.name}} {{pod.name}}"))
	d.respond = func(*driver, Launch) *stepEnd { return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 3} }
	d.run()
	eq(t, "attempt 0", argsOf(d.launchOf("rp[0].r(0)")), "sh -c 0 0  rp[0].r "+podName("rp", "rp[0].r(0)", "t"))
	eq(t, "attempt 1", argsOf(d.launchOf("rp[0].r(1)")), "sh -c 1 3 Failed rp[0].r "+podName("rp", "rp[0].r(1)", "t"))
	eq(t, "pod name", d.launchOf("rp[0].r(1)").PodName, podName("rp", "rp[0].r(1)", "t"))
}

// Rule 7.5: backoff waits duration × factor^(n−1), clamped to cap, from
// the last attempt's end; the Retry node says "Backoff for ...".
func TestRetryBackoff(t *testing.T) {
	d := load(t, retryYAML("      limit: 3\n      backoff:\n        duration: \"10\"\n        factor: 2\n        cap: 15s", "run"))
	d.respond = func(*driver, Launch) *stepEnd { return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1} }
	var messages []string
	var waits []time.Duration
	seen := map[int]bool{}
	d.idle = func(d *driver) bool {
		n := d.node("rp[0].r")
		if strings.HasPrefix(n.Message, "Backoff") && !seen[len(n.Children)] {
			seen[len(n.Children)] = true
			messages = append(messages, n.Message)
			waits = append(waits, d.last.RequeueAfter)
		}
		return false
	}
	d.run()
	eq(t, "messages", messages, []string{"Backoff for 10 seconds", "Backoff for 15 seconds", "Backoff for 15 seconds"})
	eq(t, "attempts", len(d.launches), 4)
	eq(t, "requeue", waits, []time.Duration{10 * time.Second, 15 * time.Second, 15 * time.Second})
	d.expect(v1alpha1.WorkflowFailed, rpFailed, map[string]string{"rp[0].r": "Retry Failed No more retries left"})
	// attempt 1 started 10s after attempt 0 ended (each runs 1s).
	a0, a1 := d.node("rp[0].r(0)"), d.node("rp[0].r(1)")
	eq(t, "gap", a1.StartedAt.Sub(a0.FinishedAt.Time), 10*time.Second)
}

func TestRetryMaxDuration(t *testing.T) {
	t.Run("backoff would exceed", func(t *testing.T) {
		d := load(t, retryYAML("      limit: 5\n      backoff:\n        duration: 1m\n        maxDuration: 30s", "run"))
		d.respond = func(*driver, Launch) *stepEnd { return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1} }
		d.run()
		d.expect(v1alpha1.WorkflowFailed, rpFailed, map[string]string{
			"rp[0].r": "Retry Failed Backoff would exceed max duration limit"})
		eq(t, "attempts", len(d.launches), 1)
		eq(t, "pod deadline", d.launches[0].Deadline, time.Time{})
	})
	t.Run("max duration exceeded", func(t *testing.T) {
		d := load(t, retryYAML("      limit: 5\n      backoff:\n        duration: \"1\"\n        maxDuration: 20s", "run"))
		d.respond = func(*driver, Launch) *stepEnd {
			return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1, duration: 25 * time.Second}
		}
		d.run()
		d.expect(v1alpha1.WorkflowFailed, rpFailed, map[string]string{
			"rp[0].r": "Retry Failed Max duration limit exceeded"})
		eq(t, "attempts", len(d.launches), 1)
	})
	t.Run("attempts get the max duration deadline", func(t *testing.T) {
		d := load(t, retryYAML("      limit: 5\n      backoff:\n        duration: \"1\"\n        maxDuration: 20s", "run"))
		d.respond = func(*driver, Launch) *stepEnd {
			return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1, duration: 15 * time.Second}
		}
		d.run()
		d.expect(v1alpha1.WorkflowFailed, rpFailed, map[string]string{
			"rp[0].r":    "Retry Failed Backoff would exceed max duration limit",
			"rp[0].r(1)": "Pod Failed Step exceeded its deadline",
		})
		eq(t, "attempts", len(d.launches), 2)
		eq(t, "second attempt deadline", d.launches[1].Deadline, t0.Add(20*time.Second))
	})
}

// Rule 7.8a: an exit handler on a retried step hangs from the Retry node,
// runs once, and sees the last attempt's outputs.
const retryExitYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: lx
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: t
        template: flaky
        hooks:
          exit:
            template: report
            arguments:
              parameters: [{name: p, value: "{{steps.t.outputs.parameters.o}} {{steps.t.status}}"}]
    - - name: u
        template: report
        arguments:
          parameters: [{name: p, value: after}]
  - name: flaky
    retryStrategy: {limit: 1}
    container: {image: busybox, command: [run]}
    outputs:
      parameters: [{name: o, valueFrom: {path: /o}}]
  - name: report
    inputs:
      parameters: [{name: p}]
    container: {image: busybox, command: [echo, "{{inputs.parameters.p}}"]}
`

func TestRetryWithExitHandler(t *testing.T) {
	d := load(t, retryExitYAML)
	n := 0
	d.respond = func(_ *driver, l Launch) *stepEnd {
		if l.Template.Name != "flaky" {
			return nil
		}
		n++
		if n == 1 {
			return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1, params: map[string]string{"o": "first"}}
		}
		return &stepEnd{params: map[string]string{"o": "second"}}
	}
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"lx[0].t":        "Retry Succeeded",
		"lx[0].t.onExit": "Pod Succeeded",
		"lx[1].u":        "Pod Succeeded",
	})
	eq(t, "retry children", d.children("lx[0].t"), []string{"lx[0].t(0)", "lx[0].t(1)", "lx[0].t.onExit"})
	eq(t, "exit arg", arg(d.launchOf("lx[0].t.onExit"), "p"), "second Succeeded")
	eq(t, "exit flag", d.node("lx[0].t.onExit").NodeFlag, &v1alpha1.NodeFlag{Hooked: true})
	// The next group hangs under the exit node, the Retry's last child.
	eq(t, "exit children", d.children("lx[0].t.onExit"), []string{"lx[1]"})
}

// Rule 10.1: spec.parallelism also holds back new attempts.
func TestRetryParallelism(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: rpar}
spec:
  entrypoint: main
  parallelism: 1
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: flaky}
      - {name: b, template: flaky}
  - name: flaky
    retryStrategy: {limit: 2}
    container: {image: busybox, command: [sh, -c, "exit 1"]}
`)
	most := maxConcurrent(d)
	d.run()
	d.expect(v1alpha1.WorkflowFailed, d.childFailed("rpar.b", "No more retries left"), map[string]string{"rpar.a": "Retry Failed No more retries left", "rpar.b": "Retry Failed No more retries left"})
	eq(t, "one at a time", *most, 1)
	eq(t, "pods", len(d.launches), 6)
}
