package engine

import (
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// templateRef resolves through Snapshot.Templates; names inside a
// WorkflowTemplate resolve within it, and its nodes record its scope.
func TestTemplateRef(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: lib}
spec:
  templates:
  - name: pair
    inputs: {parameters: [{name: m}]}
    steps:
    - - {name: one, template: say, arguments: {parameters: [{name: m, value: "{{inputs.parameters.m}}"}]}}
  - name: say
    inputs: {parameters: [{name: m}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.m}}"]}
---
apiVersion: argoproj.io/v1alpha1
kind: ClusterWorkflowTemplate
metadata: {name: clib}
spec:
  templates:
  - name: hi
    container: {image: busybox, command: [echo, hi]}
---
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: tr}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: a
        templateRef: {name: lib, template: pair}
        arguments: {parameters: [{name: m, value: hello}]}
      - name: b
        templateRef: {name: clib, template: hi, clusterScope: true}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"tr[0].a[0].one": "Pod Succeeded", "tr[0].b": "Pod Succeeded"})
	a := d.node("tr[0].a")
	eq(t, "caller scope", a.TemplateScope, "local/tr")
	eq(t, "templateRef", a.TemplateRef, &v1alpha1.TemplateRef{Name: "lib", Template: "pair"})
	one := d.node("tr[0].a[0].one")
	eq(t, "inner scope", one.TemplateScope, "namespaced/lib")
	eq(t, "inner template", one.TemplateName, "say")
	eq(t, "args", argsOf(d.launchOf("tr[0].a[0].one")), "echo hello")
	eq(t, "pod name uses the resolved template", d.launchOf("tr[0].b").PodName, podName("tr", "tr[0].b", "hi"))
}

// templateDefaults are merged into every template; the template wins.
func TestTemplateDefaults(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: td}
spec:
  entrypoint: main
  templateDefaults:
    timeout: 30s
    container: {image: busybox, env: [{name: A, value: "1"}]}
  templates:
  - name: main
    steps:
    - - {name: a, template: x}
  - name: x
    container: {command: [echo, x]}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", nil)
	l := d.launchOf("td[0].a")
	eq(t, "image", l.Template.Container.Image, "busybox")
	eq(t, "command", l.Template.Container.Command, []string{"echo", "x"})
	eq(t, "env", len(l.Template.Container.Env), 1)
	eq(t, "timeout", l.Deadline, d.node("td[0].a").StartedAt.Add(30*time.Second))
	if d.node("td").Type != v1alpha1.NodeTypeSteps {
		t.Error("a default container must not turn a steps template into a pod")
	}
}

// Inline templates run in place of a named one.
func TestInlineTemplates(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: il}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - name: a
        inline:
          steps:
          - - name: b
              inline:
                container: {image: busybox, command: [echo, inline]}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"il.a": "Steps Succeeded", "il.a[0].b": "Pod Succeeded"})
	eq(t, "args", argsOf(d.launchOf("il.a[0].b")), "echo inline")
	eq(t, "pod name", d.launchOf("il.a[0].b").PodName, podName("il", "il.a[0].b", ""))
}

// Resource, HTTP, plugin, data and containerSet templates are launched like
// pods; the runtime decides whether it can run them.
func TestOtherLeafTypes(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: lt}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: res, template: res}
      - {name: http, template: http}
      - {name: plug, template: plug}
      - {name: data, template: data}
      - {name: set, template: set}
  - name: res
    resource: {action: create, manifest: "kind: ConfigMap"}
  - name: http
    http: {url: "http://example.com"}
  - name: plug
    plugin: {hello: {}}
  - name: data
    data:
      source: {artifactPaths: {name: a, s3: {key: k}}}
      transformation: [{expression: "filter(data, {# endsWith '.txt'})"}]
  - name: set
    containerSet:
      containers: [{name: main, image: busybox}]
`)
	d.respond = func(_ *driver, l Launch) *stepEnd {
		if l.Template.Resource != nil {
			return &stepEnd{phase: v1alpha1.NodeError, message: "resource templates are not supported by the local runtime"}
		}
		return &stepEnd{}
	}
	d.run()
	d.expect(v1alpha1.WorkflowFailed, d.wf.Status.Message, map[string]string{
		"lt[0].res":  "Pod Error resource templates are not supported by the local runtime",
		"lt[0].http": "HTTP Succeeded",
		"lt[0].plug": "Plugin Succeeded",
		"lt[0].data": "Pod Succeeded",
		"lt[0].set":  "Pod Succeeded",
	})
	if !d.launchOf("lt[0].data").IncludeResult {
		t.Error("data templates always capture their result")
	}
}

// Rule 11.1: a script keeps its source; the runtime stages it.
func TestScriptLaunch(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sc}
spec:
  entrypoint: main
  arguments: {parameters: [{name: who, value: world}]}
  templates:
  - name: main
    script:
      image: python
      command: [python]
      args: [-u]
      source: |
        print("hello {{workflow.parameters.who}}")
`).run()
	s := d.launchOf("sc").Template.Script
	eq(t, "source", s.Source, "print(\"hello world\")\n")
	eq(t, "args", s.Args, []string{"-u"})
}

// Rule 1.5: the display-name annotation renames an existing node; a bad
// value is an Error.
func TestDisplayNameAnnotation(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: dn}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: named, arguments: {parameters: [{name: n, value: nice-name}]}}
  - name: named
    inputs: {parameters: [{name: n}]}
    metadata: {}
    annotations:
      workflows.argoproj.io/display-name: "{{inputs.parameters.n}}"
    container: {image: busybox, command: [sleep, "3"]}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", nil)
	eq(t, "display", d.node("dn[0].a").DisplayName, "nice-name")
}
