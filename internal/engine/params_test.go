package engine

import (
	"regexp"
	"strings"
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Rule 6.1: the global variables every template sees.
func TestGlobalVariables(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: gv
  labels: {team: a}
  annotations: {note: hi}
spec:
  entrypoint: main
  serviceAccountName: sa
  priority: 3
  arguments:
    parameters:
    - {name: x, value: "1.50"}
    - {name: y, value: 2}
  templates:
  - name: main
    container:
      image: busybox
      command: [echo]
      args:
      - "{{workflow.name}}|{{workflow.namespace}}|{{workflow.uid}}|{{workflow.mainEntrypoint}}|{{workflow.serviceAccountName}}"
      - "{{workflow.creationTimestamp}}|{{workflow.creationTimestamp.Y}}|{{workflow.creationTimestamp.m}}|{{workflow.creationTimestamp.s}}|{{workflow.creationTimestamp.RFC3339}}"
      - "{{workflow.parameters.x}}|{{workflow.parameters.y}}|{{workflow.parameters.json}}"
      - "{{workflow.labels.team}}|{{workflow.annotations.note}}|{{workflow.labels.json}}|{{workflow.priority}}"
      - "{{workflow.status}}|{{workflow.duration}}|{{workflow.scheduledTime}}|{{foo}}"
`).run()
	args := d.launchOf("gv").Template.Container.Args
	eq(t, "identity", args[0], "gv|default|uid-1|main|sa")
	eq(t, "time", args[1], "2025-01-02T03:04:05Z|2025|01|1735787045|2025-01-02T03:04:05Z")
	eq(t, "parameters", args[2], `1.50|2|[{"name":"x","value":"1.50"},{"name":"y","value":"2"}]`)
	eq(t, "metadata", args[3], `a|hi|{"team":"a"}|3`)
	// rule 6.3: on the first pass workflow.status is "" and the duration 0;
	// an unknown or absent tag stays literal in a pod (rule 6.9).
	eq(t, "runtime", args[4], "|0.000000|{{workflow.scheduledTime}}|{{foo}}")
}

// Rule 6.5: value or default, overridden by an argument; numbers are kept
// as strings in their shortest form.
func TestInputParameters(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ip}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: g, value: gv}]
  templates:
  - name: main
    steps:
    - - name: a
        template: show
        arguments:
          parameters: [{name: b, value: 1.50}]
  - name: show
    inputs:
      parameters:
      - {name: a, default: "{{workflow.parameters.g}}"}
      - {name: b, default: "no"}
      - {name: c, value: fixed}
    container:
      image: busybox
      command: [echo, "{{inputs.parameters.a}} {{inputs.parameters.b}} {{inputs.parameters.c}}", "{{inputs.parameters}}"]
`).run()
	l := d.launchOf("ip[0].a")
	eq(t, "values", l.Template.Container.Command[1], "gv 1.5 fixed")
	eq(t, "json", l.Template.Container.Command[2], `[{"name":"a","default":"{{workflow.parameters.g}}","value":"gv"},{"name":"b","default":"no","value":"1.5"},{"name":"c","value":"fixed"}]`)
	in := d.node("ip[0].a").Inputs
	eq(t, "node inputs keep the default", in.Parameters[1], v1alpha1.Parameter{Name: "b", Default: v1alpha1.AnyStringPtr("no"), Value: v1alpha1.AnyStringPtr("1.5")})
}

// Rule 6.5: a missing input is an Error: of the group for a step, of the
// task for a DAG, of the workflow for the entrypoint.
func TestInputNotSupplied(t *testing.T) {
	show := `
  - name: show
    inputs: {parameters: [{name: x}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.x}}"]}
`
	t.Run("step", func(t *testing.T) {
		d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ns}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: show}`+show).run()
		msg := "step group deemed errored due to child ns[0].a error: inputs.parameters.x was not supplied"
		d.expect(v1alpha1.WorkflowFailed, msg, map[string]string{
			"ns[0].a": "Skipped Error inputs.parameters.x was not supplied",
			"ns[0]":   "StepGroup Error " + msg,
			"ns":      "Steps Failed " + msg,
		})
	})
	t.Run("task", func(t *testing.T) {
		d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: nt}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: show}`+show).run()
		d.expect(v1alpha1.WorkflowError, d.childFailed("nt.a", "task 'nt.a' errored: inputs.parameters.x was not supplied"), map[string]string{
			"nt.a": "Skipped Error task 'nt.a' errored: inputs.parameters.x was not supplied",
			"nt":   "DAG Error ",
		})
	})
	t.Run("entrypoint", func(t *testing.T) {
		d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ne}
spec:
  entrypoint: show
  templates:`+show).run()
		d.expect(v1alpha1.WorkflowError, "error in entry template execution: inputs.parameters.x was not supplied", map[string]string{
			"ne": "Skipped Error inputs.parameters.x was not supplied"})
	})
}

// Rule 0.2: expression tags; a failing one stays literal in a pod.
func TestExpressionTags(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ex}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: my-param, value: "7"}]
  templates:
  - name: main
    inputs:
      parameters: [{name: n, value: "4"}]
    container:
      image: busybox
      command: [echo]
      args: ["{{=1+1}}", "{{=[1,2]}}", "{{=asInt(inputs.parameters.n) * 10}}", "{{=asInt('x')}}",
             "{{=workflow.parameters['my-param']}}", "{{= sprig.upper('a') }}", "{{=toJson({'k': 1})}}", "{{=jsonpath('{\"a\":3}', '$.a')}}"]
`).run()
	eq(t, "args", d.launchOf("ex").Template.Container.Args, []string{"2", "[1,2]", "40", "{{=asInt('x')}}", "7", "A", `{"k":1}`, "3"})
}

const expressionTagYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: expression-tag-template-
spec:
  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - name: task-0
            template: pod-0
            arguments:
              parameters:
                - name: foo
                  value: "{{=item}}"
            withParam: "{{=toJson(filter([1, 3], {# > 1}))}}"
    - name: pod-0
      inputs:
        parameters:
          - name: foo
      container:
        image: argoproj/argosay:v2
        args:
          - echo
          - |
            hello {{=asInt(inputs.parameters.foo) * 10}} @ {{=sprig.date('2006', workflow.creationTimestamp)}}
          - /output
      outputs:
        parameters:
          - name: output
            valueFrom:
              path: /output
`

// expression-tag-template-workflow.yaml (trap 15).
func TestExpressionTagTemplateConformance(t *testing.T) {
	d := load(t, expressionTagYAML).run()
	p := "expression-tag-template"
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		p:                  "DAG Succeeded",
		p + ".task-0":      "TaskGroup Succeeded",
		p + ".task-0(0:3)": "Pod Succeeded",
	})
	// sprig.date of a string formats the current time (as in Argo)
	args := d.launchOf(p + ".task-0(0:3)").Template.Container.Args
	if len(args) != 3 || !regexp.MustCompile(`^hello 30 @ \d{4}\n$`).MatchString(args[1]) {
		t.Errorf("args %q", args)
	}
}

// Rule 4.2: when is govaluate over substituted text (trap 8).
func TestWhen(t *testing.T) {
	tests := []struct{ when, phase, msg string }{
		{"heads == heads", "Pod Succeeded", ""},
		{"1 == 1.0", "Pod Succeeded", ""},
		{"'3' < '10'", "Skipped Skipped when ''3' < '10'' evaluated false", ""},
		{"3 < 10", "Pod Succeeded", ""},
		{"tails =~ hea", "Skipped Skipped when 'tails =~ hea' evaluated false", ""},
		{"{{=inputs.parameters.v == 'a b'}}", "Pod Succeeded", ""},
		{"'{{inputs.parameters.v}}' == 'a b'", "Pod Succeeded", ""},
		{"{{inputs.parameters.v}} == x", "", "failed to resolve references: Invalid 'when' expression 'a b == x': Cannot transition token types from VARIABLE [a] to VARIABLE [b] (hint: try wrapping the affected expression in quotes (\"))"},
		{"{{workflow.scheduledTime}} == x", "", "failed to resolve references: Invalid 'when' expression '{{workflow.scheduledTime}} == x': Invalid token: '{{' (hint: the tag {{workflow.scheduledTime}} was not resolved)"},
		{"true && 2", "", "failed to resolve references: Failed to evaluate 'when' expression 'true && 2': Value '2' cannot be used with the logical operator '&&', it is not a bool"},
	}
	for _, tt := range tests {
		t.Run(tt.when, func(t *testing.T) {
			d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wh}
spec:
  entrypoint: main
  templates:
  - name: main
    inputs: {parameters: [{name: v, value: a b}]}
    steps:
    - - name: a
        template: ok
        when: "`+strings.ReplaceAll(tt.when, `"`, `\"`)+`"
  - name: ok
    container: {image: busybox, command: [echo, ok]}
`).run()
			if tt.msg != "" {
				d.expect(v1alpha1.WorkflowFailed, tt.msg, map[string]string{"wh[0]": "StepGroup Error " + tt.msg})
				return
			}
			d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"wh[0].a": tt.phase})
		})
	}
}

const coinflipYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: coinflip-
spec:
  entrypoint: coinflip
  templates:
  - name: coinflip
    steps:
    - - name: flip-coin
        template: flip-coin
    - - name: heads
        template: heads
        when: "{{steps.flip-coin.outputs.result}} == heads"
      - name: tails
        template: tails
        when: "{{steps.flip-coin.outputs.result}} == tails"
  - name: flip-coin
    script:
      image: python:alpine3.23
      command: [python]
      source: |
        import random
        result = "heads" if random.randint(0,1) == 0 else "tails"
        print(result)
  - name: heads
    container:
      image: busybox
      command: [sh, -c]
      args: ["echo \"it was heads\""]
  - name: tails
    container:
      image: busybox
      command: [sh, -c]
      args: ["echo \"it was tails\""]
`

// coinflip.yaml with both sides of the coin.
func TestCoinflipConformance(t *testing.T) {
	for _, side := range []string{"heads", "tails"} {
		t.Run(side, func(t *testing.T) {
			d := load(t, coinflipYAML)
			d.respond = fixed(map[string]*stepEnd{"flip-coin": {result: str(side)}})
			d.run()
			other := map[string]string{"heads": "tails", "tails": "heads"}[side]
			d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
				"coinflip":              "Steps Succeeded",
				"coinflip[0]":           "StepGroup Succeeded",
				"coinflip[0].flip-coin": "Pod Succeeded",
				"coinflip[1]":           "StepGroup Succeeded",
				"coinflip[1]." + side:   "Pod Succeeded",
				"coinflip[1]." + other:  "Skipped Skipped when '" + side + " == " + other + "' evaluated false",
			})
			l := d.launchOf("coinflip[0].flip-coin")
			if !l.IncludeResult {
				t.Error("the result is referenced: capture it")
			}
			eq(t, "result", *d.node("coinflip[0].flip-coin").Outputs.Result, side)
		})
	}
}

// Trap 6 / rule 11.3: only the parent template's mention turns capture on;
// the entrypoint never captures.
func TestIncludeResult(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ir}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: s}
      - {name: b, template: s}
      - {name: c-d, template: s}
      - {name: e, template: s, withItems: [1], retryStrategy: {limit: 1}}
    - - name: use
        template: show
        arguments: {parameters: [{name: v, value: "{{steps.a.outputs.result}}"}]}
    outputs:
      parameters:
      - {name: o, valueFrom: {expression: "steps['c-d'].outputs.result + steps.e.outputs.result"}}
  - name: other
    steps:
    - - name: x
        template: show
        arguments: {parameters: [{name: v, value: "{{steps.b.outputs.result}}"}]}
  - name: s
    script: {image: python, command: [python], source: "print(1)"}
  - name: show
    inputs: {parameters: [{name: v}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.v}}"]}
`)
	d.respond = func(_ *driver, l Launch) *stepEnd {
		if l.Template.Name == "s" {
			return &stepEnd{result: str("1")}
		}
		return nil
	}
	d.run()
	got := map[string]bool{}
	for _, n := range []string{"ir[0].a", "ir[0].b", "ir[0].c-d", "ir[0].e(0:1)"} {
		got[n] = d.launchOf(n).IncludeResult
	}
	eq(t, "capture", got, map[string]bool{"ir[0].a": true, "ir[0].b": false, "ir[0].c-d": true, "ir[0].e(0:1)": true})
	eq(t, "env", d.launchOf("ir[0].a").Env["ARGO_INCLUDE_SCRIPT_OUTPUT"], "true")
}

// Rule 6.2: node.name is the full node name; pod.name the pod's.
func TestNodeAndPodName(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: nn}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: t, template: show}
  - name: show
    container: {image: busybox, command: [echo, "{{node.name}} {{pod.name}} {{tasks.name}}"]}
`).run()
	l := d.launchOf("nn.t")
	eq(t, "names", l.Template.Container.Command[1], "nn.t "+l.PodName+" t")
	eq(t, "pod", l.PodName, podName("nn", "nn.t", "show"))
}
