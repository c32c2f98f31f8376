package engine

import (
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const outputParameterYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: output-parameter-
spec:
  entrypoint: output-parameter
  templates:
  - name: output-parameter
    steps:
    - - name: generate-parameter
        template: hello-world-to-file
    - - name: consume-parameter
        template: print-message
        arguments:
          parameters:
          - name: message
            value: "{{steps.generate-parameter.outputs.parameters.hello-param}}"
  - name: hello-world-to-file
    container:
      image: busybox
      command: [sh, -c]
      args: ["sleep 1; echo -n hello world > /tmp/hello_world.txt"]
    outputs:
      parameters:
      - name: hello-param
        valueFrom:
          default: "Foobar"
          path: /tmp/hello_world.txt
  - name: print-message
    inputs:
      parameters:
      - name: message
    container:
      image: busybox
      command: [echo]
      args: ["{{inputs.parameters.message}}"]
`

func TestOutputParameterConformance(t *testing.T) {
	d := load(t, outputParameterYAML)
	d.respond = fixed(map[string]*stepEnd{"hello-world-to-file": {params: map[string]string{"hello-param": "hello world"}}})
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"output-parameter[1].consume-parameter": "Pod Succeeded"})
	eq(t, "message", arg(d.launchOf("output-parameter[1].consume-parameter"), "message"), "hello world")
	gen := d.node("output-parameter[0].generate-parameter")
	eq(t, "outputs", param(gen, "hello-param"), "hello world")
	eq(t, "exit code", *gen.Outputs.ExitCode, "0")
	// without the file, the executor reports the default
	d = load(t, outputParameterYAML).run()
	eq(t, "default", arg(d.launchOf("output-parameter[1].consume-parameter"), "message"), "Foobar")
}

// §12: outputs of steps and DAG templates, and globalName (rule 12.4).
func TestTemplateOutputs(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: to}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: inner, template: inner}
      - {name: dag, template: dag}
    - - name: show
        template: show
        arguments:
          parameters:
          - {name: v, value: "{{steps.inner.outputs.parameters.all}}|{{steps.inner.outputs.parameters.st}}|{{steps.dag.outputs.parameters.d}}|{{workflow.outputs.parameters.g}}"}
    outputs:
      parameters:
      - {name: top, valueFrom: {parameter: "{{steps.inner.outputs.parameters.all}}"}, globalName: top}
  - name: inner
    steps:
    - - {name: gen, template: gen, withItems: [a, b, c], arguments: {parameters: [{name: v, value: "{{item}}"}]}}
    - - {name: use, template: show, arguments: {parameters: [{name: v, value: x}]}}
    outputs:
      parameters:
      - {name: all, valueFrom: {parameter: "{{steps.gen.outputs.parameters.o}}"}}
      - {name: st, valueFrom: {expression: "steps.use.status"}}
      - {name: list, valueFrom: {expression: "[1, 2]"}}
      - {name: fb, valueFrom: {expression: "steps.nope.outputs.result", default: fallback}}
  - name: dag
    dag:
      tasks:
      - {name: p, template: gen, arguments: {parameters: [{name: v, value: q}]}}
    outputs:
      parameters:
      - {name: d, valueFrom: {parameter: "{{tasks.p.outputs.parameters.o}}"}}
  - name: gen
    inputs: {parameters: [{name: v}]}
    container: {image: busybox, command: [run, "{{inputs.parameters.v}}"]}
    outputs:
      parameters:
      - {name: o, valueFrom: {path: /o}, globalName: g}
  - name: show
    inputs: {parameters: [{name: v}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.v}}"]}
`)
	d.respond = func(_ *driver, l Launch) *stepEnd {
		if l.Template.Name == "gen" {
			return &stepEnd{params: map[string]string{"o": l.Template.Container.Command[1]}}
		}
		return nil
	}
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", nil)
	inner := d.node("to[0].inner")
	eq(t, "all", param(inner, "all"), `["a","b","c"]`)
	eq(t, "st", param(inner, "st"), "Succeeded")
	eq(t, "list as %v", param(inner, "list"), "[1 2]")
	eq(t, "default", param(inner, "fb"), "fallback")
	eq(t, "dag output", param(d.node("to[0].dag"), "d"), "q")
	v := arg(d.launchOf("to[1].show"), "v")
	if v != `["a","b","c"]|Succeeded|q|a` && v != `["a","b","c"]|Succeeded|q|b` && v != `["a","b","c"]|Succeeded|q|c` && v != `["a","b","c"]|Succeeded|q|q` {
		t.Errorf("show %q", v)
	}
	outs := d.wf.Status.Outputs.Parameters
	byName := map[string]string{}
	for _, p := range outs {
		byName[p.Name] = p.Value.String()
	}
	eq(t, "global top", byName["top"], `["a","b","c"]`)
	if byName["g"] == "" {
		t.Errorf("global g missing: %v", outs)
	}
}

// Rule 12.1: every output of a steps template needs a valueFrom.
func TestOutputWithoutValueFrom(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: nv}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: ok}
    outputs:
      parameters: [{name: x}]
  - name: ok
    container: {image: busybox, command: [echo, ok]}
`).run()
	d.expect(v1alpha1.WorkflowError, "error in entry template execution: output parameters must have a valueFrom specified",
		map[string]string{"nv": "Steps Error output parameters must have a valueFrom specified"})
}

// Rule 12.4: a pod exports its global outputs even when it fails.
func TestGlobalOutputOfFailedPod(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: gf}
spec:
  entrypoint: main
  onExit: exit
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, "exit 1"]}
    outputs:
      parameters: [{name: o, valueFrom: {path: /o}, globalName: result}]
  - name: exit
    container: {image: busybox, command: [echo, "{{workflow.outputs.parameters.result}}"]}
`)
	d.respond = fixed(map[string]*stepEnd{"main": {phase: v1alpha1.NodeFailed, exitCode: 1, params: map[string]string{"o": "partial"}}})
	d.run()
	eq(t, "status outputs", d.wf.Status.Outputs.Parameters, []v1alpha1.Parameter{{Name: "result", Value: v1alpha1.AnyStringPtr("partial")}})
	eq(t, "exit sees it", argsOf(d.launchOf("gf.onExit")), "echo partial")
}

func skippedYAML(kind, producerOutput, consumer string) string {
	if kind == "steps" {
		return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sk}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: p, template: producer, when: "false"}
    - - name: c
        template: consumer
        arguments: {parameters: [{name: v, value: "` + consumer + `"}]}
` + skippedTemplates(producerOutput)
	}
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sk}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: p, template: producer, when: "false"}
      - name: c
        depends: p
        template: consumer
        arguments: {parameters: [{name: v, value: "` + consumer + `"}]}
` + skippedTemplates(producerOutput)
}

func skippedTemplates(producerOutput string) string {
	return `
  - name: producer
    container: {image: busybox, command: [echo, hi]}
    outputs:
      parameters: [{name: o, valueFrom: {path: /o` + producerOutput + `}}]
  - name: consumer
    inputs: {parameters: [{name: v, default: consumer-default}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.v}}"]}
  - name: strict
    inputs: {parameters: [{name: v}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.v}}"]}
`
}

// Rule 6.6 and trap 13: skipped outputs are absent, not "".
func TestSkippedOutputs(t *testing.T) {
	tests := []struct {
		name, kind, producer, consumer, want string
	}{
		{"producer default", "steps", ", default: producer-default", "{{steps.p.outputs.parameters.o}}", "producer-default"},
		{"consumer default", "steps", "", "{{steps.p.outputs.parameters.o}}", "consumer-default"},
		{"expression fallback", "steps", "", "{{=steps.p.outputs.parameters.o ?? 'fb'}}", "fb"},
		{"dag producer default", "dag", ", default: producer-default", "{{tasks.p.outputs.parameters.o}}", "producer-default"},
		{"dag consumer default", "dag", "", "{{tasks.p.outputs.parameters.o}}", "consumer-default"},
		{"dag expression fallback", "dag", "", "{{=tasks.p.outputs.parameters.o ?? 'fb'}}", "fb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := load(t, skippedYAML(tt.kind, tt.producer, tt.consumer)).run()
			d.expect(v1alpha1.WorkflowSucceeded, "", nil)
			name := "sk[1].c"
			if tt.kind == "dag" {
				name = "sk.c"
			}
			eq(t, "consumer", arg(d.launchOf(name), "v"), tt.want)
		})
	}
}

// Trap 1 / trap 13: any other use of an absent output is a terminal Error;
// in steps it ends Failed, in a DAG (a target) Error.
func TestSkippedOutputRefError(t *testing.T) {
	t.Run("steps fail", func(t *testing.T) {
		y := skippedYAML("steps", "", "x {{steps.p.outputs.parameters.o}}")
		d := load(t, y).run()
		msg := "failed to resolve references: {{steps.p.outputs.parameters.o}} refers to an absent optional value: its producer was skipped or omitted and declares no default; use a default or an expression with ??"
		d.expect(v1alpha1.WorkflowFailed, msg, map[string]string{"sk[1]": "StepGroup Error " + msg, "sk": "Steps Failed " + msg})
	})
	t.Run("dag errors", func(t *testing.T) {
		y := skippedYAML("dag", "", "x {{tasks.p.outputs.parameters.o}}")
		d := load(t, y).run()
		d.expect(v1alpha1.WorkflowError, d.childFailed("sk.c", "{{tasks.p.outputs.parameters.o}} refers to an absent optional value: its producer was skipped or omitted and declares no default; use a default or an expression with ??"), map[string]string{
			"sk.c": "Skipped Error {{tasks.p.outputs.parameters.o}} refers to an absent optional value: its producer was skipped or omitted and declares no default; use a default or an expression with ??",
			"sk":   "DAG Error ",
		})
	})
	t.Run("no consumer default", func(t *testing.T) {
		y := skippedYAML("steps", "", "{{steps.p.outputs.parameters.o}}")
		d := load(t, y)
		d.wf.Spec.Templates[0].Steps[1][0].Template = "strict"
		d.run()
		msg := "step group deemed errored due to child sk[1].c error: inputs.parameters.v: argument references an absent optional (skipped/omitted node output with no default)"
		d.expect(v1alpha1.WorkflowFailed, msg, nil)
	})
}

// conditional-parameters.yaml: the output expression reads only the branch
// that ran; the other producer's result is absent.
func TestConditionalParametersConformance(t *testing.T) {
	for _, side := range []string{"heads", "tails"} {
		d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: conditional-parameter-
spec:
  entrypoint: main
  templates:
    - name: main
      steps:
        - - name: flip-coin
            template: flip-coin
        - - name: heads
            template: heads
            when: "{{steps.flip-coin.outputs.result}} == heads"
          - name: tails
            template: tails
            when: "{{steps.flip-coin.outputs.result}} == tails"
      outputs:
        parameters:
          - name: stepresult
            valueFrom:
              expression: "steps['flip-coin'].outputs.result == 'heads' ? steps.heads.outputs.result : steps.tails.outputs.result"
    - name: flip-coin
      script:
        image: python:alpine3.23
        command: [ python ]
        source: |
          import random
          print("heads" if random.randint(0,1) == 0 else "tails")
    - name: heads
      script: {image: python, command: [python], source: 'print("heads")'}
    - name: tails
      script: {image: python, command: [python], source: 'print("tails")'}
`)
		d.respond = fixed(map[string]*stepEnd{"flip-coin": {result: str(side)}})
		d.run()
		d.expect(v1alpha1.WorkflowSucceeded, "", nil)
		eq(t, side, param(d.node("conditional-parameter"), "stepresult"), side)
	}
}

// Artifacts pass from a step's outputs to a later step's inputs, to the
// template's outputs, and to status.outputs with a globalName.
func TestArtifactPassing(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ap}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: gen, template: gen}
    - - name: use
        template: use
        arguments:
          artifacts:
          - {name: in, from: "{{steps.gen.outputs.artifacts.out}}"}
          - {name: maybe, from: "{{steps.gen.outputs.artifacts.nope}}", optional: true}
          - {name: part, from: "{{steps.gen.outputs.artifacts.out}}", subPath: dir/file.txt}
    outputs:
      artifacts:
      - {name: final, from: "{{steps.gen.outputs.artifacts.out}}", globalName: final}
  - name: gen
    container: {image: busybox, command: [gen]}
    outputs:
      artifacts: [{name: out, path: /tmp/out}]
  - name: use
    inputs:
      artifacts:
      - {name: in, path: /in}
      - {name: maybe, path: /maybe, optional: true}
      - {name: part, path: /part}
    container: {image: busybox, command: [cat, "{{inputs.artifacts.in.path}}"]}
`)
	loc := v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{Key: "ap/gen/out.tgz"}}
	d.respond = func(_ *driver, l Launch) *stepEnd {
		if l.Template.Name == "gen" {
			return &stepEnd{arts: []v1alpha1.Artifact{{Name: "out", Path: "/tmp/out", ArtifactLocation: loc}}}
		}
		return nil
	}
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", nil)
	in := d.launchOf("ap[1].use").Template.Inputs.Artifacts
	eq(t, "input path", in[0].Path, "/in")
	eq(t, "input location", in[0].S3, loc.S3)
	eq(t, "optional absent", in[1].S3 == nil, true)
	eq(t, "the argument's subPath", in[2].SubPath, "dir/file.txt")
	eq(t, "subPath location", in[2].S3, loc.S3)
	eq(t, "command", argsOf(d.launchOf("ap[1].use")), "cat /in")
	out := d.node("ap").Outputs.Artifacts
	eq(t, "template output", out[0].Name, "final")
	eq(t, "template output location", out[0].S3, loc.S3)
	eq(t, "global", d.wf.Status.Outputs.Artifacts, []v1alpha1.Artifact{{Name: "final", ArtifactLocation: loc}})
}

// A required input artifact that is not supplied is an Error.
func TestArtifactNotSupplied(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: an}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: use, template: use}
  - name: use
    inputs:
      artifacts: [{name: in, path: /in}]
    container: {image: busybox}
`).run()
	d.expect(v1alpha1.WorkflowFailed, "step group deemed errored due to child an[0].use error: inputs.artifacts.in was not supplied", nil)
}
