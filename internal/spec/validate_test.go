package spec

import (
	"errors"
	"strings"
	"testing"
)

// lintYAML loads the documents and validates them together, returning every issue.
func lintYAML(t *testing.T, docs string) Issues {
	t.Helper()
	loaded, err := Load("test.yaml", []byte(docs), Strict)
	var issues Issues
	if err != nil && !errors.As(err, &issues) {
		t.Fatalf("load: %v", err)
	}
	for _, d := range loaded {
		issues = append(issues, d.Warnings...)
	}
	return append(issues, ValidateAll(loaded, loaded)...)
}

// wf wraps templates (indented as list items under spec.templates) into a Workflow.
func wf(specExtra, templates string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: t-
spec:
  entrypoint: main
` + specExtra + `  templates:
` + templates
}

const echo = `
  - name: echo
    inputs:
      parameters:
      - name: msg
        default: hi
    container:
      image: busybox
      command: [echo, "{{inputs.parameters.msg}}"]
`

const wfTemplate = `---
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata:
  name: lib
spec:
  templates:
  - name: print
    inputs:
      parameters: [{name: msg}]
    container: {image: busybox, command: [echo, "{{inputs.parameters.msg}}"]}
`

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // a part of the message, with its field path
	}{
		{"workflow.scheduledTime outside a cron", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: w}
spec:
  entrypoint: main
  templates: [{name: main, container: {image: busybox, command: [echo, "{{workflow.scheduledTime}}"]}}]
`, "failed to resolve {{workflow.scheduledTime}}"},
		{"entrypoint missing", strings.Replace(wf("", echo), "  entrypoint: main\n", "", 1),
			"spec.entrypoint: spec.entrypoint is required"},
		{"entrypoint not found", wf("", echo), `spec.entrypoint: entrypoint template "main" not found`},
		{"duplicate template", wf("", "  - name: main\n    suspend: {}\n  - name: main\n    suspend: {}\n"),
			`spec.templates[1].name: template name "main" is not unique`},
		{"invalid template name", wf("", "  - name: main\n    suspend: {}\n  - name: my_tmpl\n    suspend: {}\n"),
			`spec.templates[1].name: template name "my_tmpl" is invalid`},
		{"step template not found", wf("", `  - name: main
    steps:
    - - name: a
        template: echo
    - - name: b
        template: whalesay2
`+echo), `spec.templates[0].steps[1][0].template: "whalesay2" not found`},
		{"templateRef object not found", wf("", `  - name: main
    steps:
    - - name: a
        templateRef: {name: nolib, template: print}
`), `spec.templates[0].steps[0][0].templateRef.name: WorkflowTemplate "nolib" not found`},
		{"templateRef template not found", wf("", `  - name: main
    steps:
    - - name: a
        templateRef: {name: lib, template: nope}
`) + wfTemplate, `templateRef.template: template "nope" not found in WorkflowTemplate "lib"`},
		{"workflow onExit not found", wf("  onExit: bye\n", "  - name: main\n    suspend: {}\n"),
			`spec.onExit: template "bye" not found`},
		{"step onExit not found", wf("", `  - name: main
    steps:
    - - name: a
        template: echo
        onExit: bye
`+echo), `spec.templates[0].steps[0][0].onExit: template "bye" not found`},
		{"hook template not found", wf("  hooks:\n    exit:\n      template: bye\n", "  - name: main\n    suspend: {}\n"),
			`spec.hooks.exit.template: "bye" not found`},
		{"hook without expression", wf("  hooks:\n    running:\n      template: main\n", "  - name: main\n    suspend: {}\n"),
			`spec.hooks.running.expression: hook "running" needs an expression`},
		{"duplicate step", wf("", `  - name: main
    steps:
    - - {name: a, template: echo}
      - {name: a, template: echo}
`+echo), `spec.templates[0].steps[0][1].name: step name "a" is not unique`},
		{"duplicate task", wf("", `  - name: main
    dag:
      tasks:
      - {name: a, template: echo}
      - {name: a, template: echo}
`+echo), `spec.templates[0].dag.tasks[1].name: step name "a" is not unique`},
		{"dependency not found", wf("", `  - name: main
    dag:
      tasks:
      - {name: a, template: echo, dependencies: [z]}
`+echo), `spec.templates[0].dag.tasks[0].dependencies[0]: dependency "z" not found`},
		{"depends task not found", wf("", `  - name: main
    dag:
      tasks:
      - {name: a, template: echo, depends: "z.Succeeded"}
`+echo), `spec.templates[0].dag.tasks[0].depends: dependency "z" not found`},
		{"cycle", wf("", `  - name: main
    dag:
      tasks:
      - {name: a, template: echo, depends: c}
      - {name: b, template: echo, depends: a}
      - {name: c, template: echo, depends: b}
`+echo), `dependency cycle: a -> c -> b -> a`},
		{"depends and dependencies mixed", wf("", `  - name: main
    dag:
      tasks:
      - {name: a, template: echo}
      - {name: b, template: echo, depends: a}
      - {name: c, template: echo, dependencies: [a]}
`+echo), `cannot use both 'depends' and 'dependencies' in the same DAG template`},
		{"depends bad result", wf("", `  - name: main
    dag:
      tasks:
      - {name: a, template: echo}
      - {name: b, template: echo, depends: a.Finished}
`+echo), `spec.templates[0].dag.tasks[1].depends: depends 'a.Finished'`},
		{"depends unbalanced", wf("", `  - name: main
    dag:
      tasks:
      - {name: a, template: echo}
      - {name: b, template: echo, depends: "(a && a"}
`+echo), `spec.templates[0].dag.tasks[1].depends: depends '(a && a': invalid depends expression: unbalanced parentheses`},
		{"AnySucceeded without loop", wf("", `  - name: main
    dag:
      tasks:
      - {name: a, template: echo}
      - {name: b, template: echo, depends: a.AnySucceeded}
`+echo), `a.AnySucceeded is only valid for a task with withItems, withParam or withSequence`},
		{"target not found", wf("", `  - name: main
    dag:
      target: x
      tasks:
      - {name: a, template: echo}
`+echo), `spec.templates[0].dag.target: target task "x" not found`},
		{"undeclared input", wf("", `  - name: main
    container: {image: busybox, args: ["{{inputs.parameters.nope}}"]}
`), `spec.templates[0].container.args[0]: failed to resolve {{inputs.parameters.nope}}`},
		{"undeclared workflow parameter", wf("", `  - name: main
    container: {image: busybox, args: ["{{workflow.parameters.nope}}"]}
`), `failed to resolve {{workflow.parameters.nope}}: declare it in spec.arguments.parameters`},
		{"step refers to same group", wf("", `  - name: main
    steps:
    - - {name: a, template: echo}
      - name: b
        template: echo
        arguments: {parameters: [{name: msg, value: "{{steps.a.outputs.result}}"}]}
`+echo), `spec.templates[0].steps[0][1].arguments.parameters[0].value: failed to resolve {{steps.a.outputs.result}}: step "a" is not in an earlier step group`},
		{"step refers to later group", wf("", `  - name: main
    steps:
    - - name: a
        template: echo
        arguments: {parameters: [{name: msg, value: "{{steps.b.outputs.result}}"}]}
    - - {name: b, template: echo}
`+echo), `failed to resolve {{steps.b.outputs.result}}: step "b" is not in an earlier step group`},
		{"unknown step", wf("", `  - name: main
    steps:
    - - {name: a, template: echo}
    - - name: b
        template: echo
        arguments: {parameters: [{name: msg, value: "{{steps.nope.outputs.result}}"}]}
`+echo), `failed to resolve {{steps.nope.outputs.result}}: this template has no such step`},
		{"undeclared output parameter", wf("", `  - name: main
    steps:
    - - {name: a, template: echo}
    - - name: b
        template: echo
        arguments: {parameters: [{name: msg, value: "{{steps.a.outputs.parameters.p}}"}]}
`+echo), `failed to resolve {{steps.a.outputs.parameters.p}}: template "echo" declares no such output`},
		{"task not an ancestor", wf("", `  - name: main
    dag:
      tasks:
      - {name: a, template: echo}
      - {name: c, template: echo}
      - name: b
        depends: a
        template: echo
        arguments: {parameters: [{name: msg, value: "{{tasks.c.outputs.result}}"}]}
`+echo), `failed to resolve {{tasks.c.outputs.result}}: task "c" is not an ancestor of "b"`},
		{"item outside a loop", wf("", `  - name: main
    steps:
    - - name: a
        template: echo
        arguments: {parameters: [{name: msg, value: "{{item}}"}]}
`+echo), `failed to resolve {{item}}`},
		{"input not supplied by step", wf("", `  - name: main
    steps:
    - - {name: a, template: need}
  - name: need
    inputs: {parameters: [{name: msg}]}
    container: {image: busybox}
`), `spec.templates[0].steps[0][0].arguments: inputs.parameters.msg was not supplied`},
		{"input not supplied to entrypoint", wf("", `  - name: main
    inputs: {parameters: [{name: msg}]}
    container: {image: busybox}
`), `spec.arguments: inputs.parameters.msg was not supplied`},
		{"argument value not in enum", wf(`  arguments:
    parameters:
    - name: color
      value: pink
      enum: [red, blue]
`, "  - name: main\n    suspend: {}\n"), `spec.arguments.parameters[0].value: value "pink" of parameter "color" is not in its enum list ["red","blue"]`},
		{"step argument not in callee enum", wf("", `  - name: main
    steps:
    - - name: a
        template: pick
        arguments: {parameters: [{name: color, value: pink}]}
  - name: pick
    inputs: {parameters: [{name: color, enum: [red, blue]}]}
    container: {image: busybox}
`), `value "pink" is not in the enum list ["red","blue"] of input "color" of template "pick"`},
		{"withParam not a list", wf("", `  - name: main
    steps:
    - - {name: a, template: echo, withParam: '{"a": 1}'}
`+echo), `spec.templates[0].steps[0][0].withParam: withParam value could not be parsed as a JSON list`},
		{"withSequence count and end", wf("", `  - name: main
    steps:
    - - {name: a, template: echo, withSequence: {count: "3", end: "5"}}
`+echo), `withSequence: set only one of count and end`},
		{"withSequence without count or end", wf("", `  - name: main
    steps:
    - - {name: a, template: echo, withSequence: {start: "3"}}
`+echo), `neither end nor count was specified in withSequence`},
		{"withSequence not a number", wf("", `  - name: main
    steps:
    - - {name: a, template: echo, withSequence: {count: "three"}}
`+echo), `withSequence.count: must be an integer or a {{variable}}, got "three"`},
		{"two loops", wf("", `  - name: main
    steps:
    - - {name: a, template: echo, withItems: [1], withParam: "[1]"}
`+echo), `set only one of withItems, withParam and withSequence`},
		{"retry limit", wf("", "  - name: main\n    retryStrategy: {limit: three}\n    container: {image: busybox}\n"),
			`spec.templates[0].retryStrategy.limit: must be a non-negative integer or a {{variable}}, got "three"`},
		{"retry policy", wf("", "  - name: main\n    retryStrategy: {retryPolicy: Sometimes}\n    container: {image: busybox}\n"),
			`unknown retryPolicy "Sometimes"`},
		{"backoff duration", wf("", "  - name: main\n    retryStrategy: {backoff: {duration: 1x}}\n    container: {image: busybox}\n"),
			`spec.templates[0].retryStrategy.backoff.duration: invalid duration "1x"`},
		{"retry expression", wf("", "  - name: main\n    retryStrategy: {expression: \"lastRetry.exitCode ==\"}\n    container: {image: busybox}\n"),
			`spec.templates[0].retryStrategy.expression: invalid expression`},
		{"timeout without unit", wf("", "  - name: main\n    timeout: \"30\"\n    container: {image: busybox}\n"),
			`spec.templates[0].timeout: invalid duration "30": add a unit`},
		{"timeout on steps", wf("", "  - name: main\n    timeout: 30s\n    steps:\n    - - {name: a, template: echo}\n"+echo),
			`timeout is only valid for leaf templates`},
		{"deadline on dag", wf("", "  - name: main\n    activeDeadlineSeconds: 10\n    dag:\n      tasks:\n      - {name: a, template: echo}\n"+echo),
			`activeDeadlineSeconds is only valid for leaf templates`},
		{"suspend duration", wf("", "  - name: main\n    suspend: {duration: soon}\n"),
			`spec.templates[0].suspend.duration: invalid duration "soon"`},
		{"no template type", wf("", "  - name: main\n    inputs: {}\n"), `template "main" has no type`},
		{"two template types", wf("", "  - name: main\n    suspend: {}\n    container: {image: busybox}\n"),
			`template "main" has several types (container, suspend)`},
		{"cron schedule", `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: c}
spec:
  schedules: ["61 * * * *"]
  workflowSpec:
    entrypoint: main
    templates: [{name: main, suspend: {}}]
`, `spec.schedules[0]: cron schedule "61 * * * *" is malformed`},
		{"cron timezone", `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: c}
spec:
  schedules: ["* * * * *"]
  timezone: Mars/Olympus
  workflowSpec:
    entrypoint: main
    templates: [{name: main, suspend: {}}]
`, `spec.timezone: unknown timezone "Mars/Olympus"`},
		{"cron workflowSpec", `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: c}
spec:
  schedules: ["* * * * *"]
  workflowSpec:
    entrypoint: nope
    templates: [{name: main, suspend: {}}]
`, `spec.workflowSpec.entrypoint: entrypoint template "nope" not found`},
		{"event selector", `apiVersion: argoproj.io/v1alpha1
kind: WorkflowEventBinding
metadata: {name: e}
spec:
  event:
    selector: payload.message ==
  submit:
    workflowTemplateRef: {name: lib}
` + wfTemplate, `spec.event.selector: invalid expression`},
		{"unknown field", wf("", "  - name: main\n    contianer: {image: busybox}\n"),
			`spec.templates[0].contianer: unknown field "contianer" (line 9)`},
		{"duplicate key", wf("", "  - name: main\n    name: other\n    suspend: {}\n"),
			`spec.templates[0].name: duplicate key "name" (first at line 8): the last value is used (line 9)`},
		{"wrong shape", wf("", "  - name: main\n    container: {image: busybox, args: hello}\n"),
			`spec.templates[0].container.args: expected a list, got the string "hello"`},
		{"invalid yaml", "kind: Workflow\n  bad: [", `test.yaml: invalid YAML`},
		{"no kind", "apiVersion: v1\nmetadata: {name: x}\n", `kind: the document has no kind`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issues := lintYAML(t, tt.yaml)
			if len(issues) == 0 {
				t.Fatalf("no issue; want %q", tt.want)
			}
			for _, is := range issues {
				if strings.Contains(is.Error(), tt.want) {
					return
				}
			}
			t.Fatalf("want an issue containing %q, got:\n%v", tt.want, issues)
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	tests := []struct{ name, yaml string }{
		{"a template may use workflow.scheduledTime", `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: t}
spec:
  entrypoint: main
  templates: [{name: main, container: {image: busybox, command: [echo, "{{workflow.scheduledTime}}"]}}]
`},
		{"steps outputs of earlier group and loops", wf(`  arguments:
    parameters: [{name: who, value: world}]
`, `  - name: main
    steps:
    - - name: gen
        template: gen
    - - name: each
        template: echo
        arguments: {parameters: [{name: msg, value: "{{item.name}} {{steps.gen.outputs.parameters.out}}"}]}
        withItems: [{name: a}, {name: b}]
      - name: param
        template: echo
        arguments: {parameters: [{name: msg, value: "{{item}}"}]}
        withParam: "{{steps.gen.outputs.result}}"
        when: "{{steps.gen.status}} == Succeeded"
    - - name: agg
        template: echo
        arguments: {parameters: [{name: msg, value: "{{steps.each.outputs.parameters}} {{workflow.parameters.who}}"}]}
        hooks:
          done:
            expression: steps.agg.status == "Succeeded"
            template: echo
            arguments: {parameters: [{name: msg, value: "{{steps.agg.status}}"}]}
    outputs:
      parameters:
      - name: out
        valueFrom: {parameter: "{{steps.gen.outputs.parameters.out}}"}
  - name: gen
    script:
      image: python
      command: [python]
      source: print('[1]')
    outputs:
      parameters:
      - name: out
        globalName: g
        valueFrom: {path: /tmp/out}
`+echo)},
		{"dag ancestors and depends", wf("", `  - name: main
    dag:
      tasks:
      - {name: A, template: echo}
      - {name: B, depends: A, template: echo, arguments: {parameters: [{name: msg, value: "{{tasks.A.outputs.result}}"}]}}
      - {name: F, depends: A, template: echo, withSequence: {count: "2"}}
      - name: D
        depends: "(B.Succeeded || B.Failed) && F.AnySucceeded && !A.Errored"
        template: echo
        arguments: {parameters: [{name: msg, value: "{{tasks.A.outputs.result}} {{tasks.B.exitCode}} {{workflow.outputs.parameters.g}}"}]}
      - {name: E, depends: D, templateRef: {name: lib, template: print}, arguments: {parameters: [{name: msg, value: "{{=sprig.upper('x')}}"}]}}
  - name: g
    container: {image: busybox}
    outputs:
      parameters: [{name: o, globalName: g, valueFrom: {path: /o}}]
`+echo) + wfTemplate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if issues := lintYAML(t, tt.yaml); len(issues) > 0 {
				t.Fatalf("unexpected issues:\n%v", issues)
			}
		})
	}
}
