package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// loopYAML is a steps (or DAG) workflow whose one step loops over src (a
// "withItems: ..." / "withParam: ..." / "withSequence: ..." line) with the
// given template-level parallelism (0: none).
func loopYAML(kind, src string, parallelism int) string {
	par := ""
	if parallelism > 0 {
		par = fmt.Sprintf("\n    parallelism: %d", parallelism)
	}
	body := `
    steps:
    - - name: l
        template: echo
        arguments: {parameters: [{name: x, value: "{{item}}"}]}
        ` + src
	if kind == "dag" {
		body = `
    dag:
      tasks:
      - name: l
        template: echo
        arguments: {parameters: [{name: x, value: "{{item}}"}]}
        ` + src
	}
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: lp}
spec:
  entrypoint: main
  templates:
  - name: main` + par + body + `
  - name: echo
    inputs: {parameters: [{name: x}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.x}}"]}
`
}

// Limits.MaxLoopItems and MaxParameterBytes on loops: the step group (or the
// task) errors before a single item is built, and the message names the
// bound, its value and the node.
func TestLoopLimits(t *testing.T) {
	big := `"[` + strings.Repeat(`1,`, 600) + `1]"`
	tests := []struct {
		name, src string
		limits    Limits
		what      string // the limit message after `node "...": `
	}{
		{"withItems", "withItems: [1, 2, 3, 4]", Limits{MaxLoopItems: 3},
			"withItems has 4 items, more than the limit (limits.maxLoopItems = 3)"},
		{"withParam items", "withParam: " + big, Limits{MaxLoopItems: 100},
			"withParam has more than 100 items, more than the limit (limits.maxLoopItems = 100)"},
		{"withParam bytes", "withParam: " + big, Limits{MaxParameterBytes: 1000},
			"withParam value has 1203 bytes, more than the limit (limits.maxParameterBytes = 1000)"},
		{"withSequence count", "withSequence: {count: '1048576'}", Limits{},
			"withSequence has 1048576 items, more than the limit (limits.maxLoopItems = 100000)"},
		{"withSequence count 1e12", "withSequence: {count: '1000000000000'}", Limits{},
			"withSequence has 1000000000000 items, more than the limit (limits.maxLoopItems = 100000)"},
		{"withSequence end", "withSequence: {start: '-9223372036854775807', end: '9223372036854775807'}", Limits{},
			"withSequence has 18446744073709551614+1 items, more than the limit (limits.maxLoopItems = 100000)"},
	}
	for _, tt := range tests {
		for _, kind := range []string{"steps", "dag"} {
			t.Run(kind+" "+tt.name, func(t *testing.T) {
				d := load(t, loopYAML(kind, tt.src, 0))
				d.limits = tt.limits
				d.run()
				if kind == "dag" {
					msg := `node "lp.l": ` + tt.what
					d.expectExactly(v1alpha1.WorkflowError, d.childFailed("lp.l", msg), map[string]string{
						"lp": "DAG Error ", "lp.l": "Skipped Error " + msg})
					return
				}
				msg := `node "lp[0].l": ` + tt.what
				d.expectExactly(v1alpha1.WorkflowFailed, msg, map[string]string{
					"lp": "Steps Failed " + msg, "lp[0]": "StepGroup Error " + msg})
			})
		}
	}
}

// A withSequence whose format makes huge items is refused item by item.
func TestSequenceItemSize(t *testing.T) {
	d := load(t, loopYAML("steps", "withSequence: {count: '2', format: '%0300d'}", 0)).run()
	msg := `withSequence item 0 has 300 characters, more than 256 (format "%0300d")`
	d.expectExactly(v1alpha1.WorkflowFailed, msg, map[string]string{"lp": "Steps Failed " + msg, "lp[0]": "StepGroup Error " + msg})
}

// Limits.MaxParameterBytes on parameters: globals, bound inputs and the
// outputs a step reports. Limits.MaxResultBytes keeps the end of a result.
func TestParameterLimits(t *testing.T) {
	const wf = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: pl}
spec:
  entrypoint: main
  arguments: {parameters: [{name: g, value: "%s"}]}
  templates:
  - name: main
    steps:
    - - name: a
        template: show
        arguments: {parameters: [{name: x, value: "%s"}]}
  - name: show
    inputs: {parameters: [{name: x}]}
    outputs: {parameters: [{name: o, valueFrom: {path: /o}}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.x}}"]}
`
	long := strings.Repeat("x", 40)
	t.Run("global", func(t *testing.T) {
		d := load(t, fmt.Sprintf(wf, long, "ok"))
		d.limits.MaxParameterBytes = 32
		d.run()
		d.expect(v1alpha1.WorkflowFailed, `failed to set global parameters: node "pl": global parameter "g" has 40 bytes, more than the limit (limits.maxParameterBytes = 32)`, nil)
		eq(t, "nodes", len(d.wf.Status.Nodes), 0)
	})
	t.Run("input", func(t *testing.T) {
		d := load(t, fmt.Sprintf(wf, "g", "{{workflow.parameters.g}}"+long))
		d.limits.MaxParameterBytes = 32
		d.run()
		msg := `node "pl[0].a": input parameter "x" has 41 bytes, more than the limit (limits.maxParameterBytes = 32)`
		group := "step group deemed errored due to child pl[0].a error: " + msg
		d.expectExactly(v1alpha1.WorkflowFailed, group, map[string]string{
			"pl": "Steps Failed " + group, "pl[0]": "StepGroup Error " + group, "pl[0].a": "Skipped Error " + msg})
	})
	t.Run("output", func(t *testing.T) {
		d := load(t, fmt.Sprintf(wf, "g", "ok"))
		d.limits.MaxParameterBytes = 32
		d.respond = func(*driver, Launch) *stepEnd { return &stepEnd{params: map[string]string{"o": long}} }
		d.run()
		msg := `node "pl[0].a": output parameter "o" has 40 bytes, more than the limit (limits.maxParameterBytes = 32)`
		d.expect(v1alpha1.WorkflowFailed, "child '"+v1alpha1.NodeID("pl", "pl[0].a")+"' failed", map[string]string{"pl[0].a": "Pod Error " + msg})
		if n := d.node("pl[0].a"); n.Outputs != nil && len(n.Outputs.Parameters) > 0 {
			t.Errorf("the oversized output was kept: %+v", n.Outputs.Parameters)
		}
	})
	t.Run("result keeps its end", func(t *testing.T) {
		d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: rs}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: say}
    - - {name: b, template: show, arguments: {parameters: [{name: x, value: "{{steps.a.outputs.result}}"}]}}
  - name: say
    container: {image: busybox, command: [echo, "0123456789é"]}
  - name: show
    inputs: {parameters: [{name: x}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.x}}"]}
`)
		d.limits.MaxResultBytes = 8
		d.run()
		d.expect(v1alpha1.WorkflowSucceeded, "", nil)
		eq(t, "result", *d.node("rs[0].a").Outputs.Result, "456789é")
		eq(t, "argument", arg(d.launchOf("rs[1].b"), "x"), "456789é")
	})
}

// Every Failed or Error workflow has a message; a DAG, which Argo leaves
// without one, gets its failing child's.
func TestFailureMessages(t *testing.T) {
	tests := []struct {
		name, yaml string
		phase      v1alpha1.WorkflowPhase
		child, msg string // message: childFailed(child, msg); child "" for msg alone
	}{
		{"dag fails", dagPhaseYAML("true", "      - {name: a, template: fail}"), v1alpha1.WorkflowFailed,
			"dp.a", "main: Error (exit code 1)"},
		{"dag errors", dagPhaseYAML("true", "      - {name: a, template: need}"), v1alpha1.WorkflowError,
			"dp.a", "task 'dp.a' errored: inputs.parameters.x was not supplied"},
		{"nested dag fails", dagPhaseYAML("true", "      - {name: a, template: inner}") + `
  - name: inner
    dag:
      tasks:
      - {name: x, template: fail}
`, v1alpha1.WorkflowFailed, "dp.a.x", "main: Error (exit code 1)"},
		{"dag exit handler fails", strings.Replace(dagPhaseYAML("true", "      - {name: a, template: ok}"),
			"  entrypoint: main\n", "  entrypoint: main\n  onExit: bye\n", 1) + `
  - name: bye
    dag:
      tasks:
      - {name: x, template: fail}
`, v1alpha1.WorkflowFailed, "dp.onExit.x", "main: Error (exit code 1)"},
		{"retried dag fails", dagPhaseYAML("true", "      - {name: a, template: inner}") + `
  - name: inner
    retryStrategy: {limit: 1}
    dag:
      tasks:
      - {name: x, template: fail}
`, v1alpha1.WorkflowFailed, "dp.a", "No more retries left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := load(t, tt.yaml).run()
			want := tt.msg
			if tt.child != "" {
				want = d.childFailed(tt.child, tt.msg)
			}
			d.expect(tt.phase, want, nil)
		})
	}
}

// Limits.Expression bounds every expression the engine evaluates: one over
// the budget ends its node Error with a message that names the bound, and
// the same expression within the budget runs.
func TestExpressionBudget(t *testing.T) {
	const wf = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: eb}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: a
        template: show
        arguments: {parameters: [{name: x, value: "{{=len(sprig.repeat(2000, 'x'))}}"}]}
        when: "{{=len(sprig.repeat(1500, 'y')) > 0}}"
  - name: show
    inputs: {parameters: [{name: x}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.x}}"]}
`
	tests := []struct {
		name   string
		budget expr.Budget
		phase  v1alpha1.WorkflowPhase
		want   string // in the step group's message; "" for success
	}{
		{"within", expr.Budget{Bytes: 4096}, v1alpha1.WorkflowSucceeded, ""},
		{"argument over", expr.Budget{Bytes: 1800}, v1alpha1.WorkflowFailed,
			"expression exceeded its budget: sprig.repeat builds 2000 bytes, more than 1800 (limits.maxExpressionBytes)"},
		{"when over", expr.Budget{Bytes: 1000}, v1alpha1.WorkflowFailed,
			"expression exceeded its budget: sprig.repeat builds 1500 bytes, more than 1000 (limits.maxExpressionBytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := load(t, wf)
			d.limits.Expression = tt.budget
			d.run()
			eq(t, "phase", d.wf.Status.Phase, tt.phase)
			if tt.want == "" {
				eq(t, "argument", arg(d.launchOf("eb[0].a"), "x"), "2000")
				return
			}
			// As for any argument that does not resolve, the step group errors.
			if n := d.node("eb[0]"); n.Phase != v1alpha1.NodeError || !strings.Contains(n.Message, tt.want) {
				t.Errorf("step group: %s %q; want Error with %q", n.Phase, n.Message, tt.want)
			}
			if d.wf.Status.Message == "" {
				t.Error("the Failed workflow has no message")
			}
		})
	}
}
