package engine

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const loopsYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: loops-
spec:
  entrypoint: loop-example
  templates:
  - name: loop-example
    steps:
    - - name: print-message-loop
        template: print-message
        arguments:
          parameters:
          - name: message
            value: "{{item}}"
        withItems:
        - hello world
        - goodbye world
  - name: print-message
    inputs:
      parameters:
      - name: message
    container:
      image: busybox
      command: [echo]
      args: ["{{inputs.parameters.message}}"]
`

func TestLoopsConformance(t *testing.T) {
	d := load(t, loopsYAML).run()
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"loops":    "Steps Succeeded",
		"loops[0]": "StepGroup Succeeded",
		"loops[0].print-message-loop(0:hello world)":   "Pod Succeeded",
		"loops[0].print-message-loop(1:goodbye world)": "Pod Succeeded",
	})
	eq(t, "arg", arg(d.launchOf("loops[0].print-message-loop(1:goodbye world)"), "message"), "goodbye world")
	eq(t, "display", d.node("loops[0].print-message-loop(0:hello world)").DisplayName, "print-message-loop(0:hello world)")
}

const loopsMapsYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: loops-maps-
spec:
  entrypoint: loop-map-example
  templates:
  - name: loop-map-example
    steps:
    - - name: test-linux
        template: cat-os-release
        arguments:
          parameters:
          - name: image
            value: "{{item.image}}"
          - name: tag
            value: "{{item.tag}}"
        withItems:
        - { image: 'debian', tag: '9.1' }
        - { image: 'debian', tag: '8.9' }
        - { image: 'alpine', tag: '3.6' }
        - { image: 'ubuntu', tag: '17.10' }
    - - name: after
        template: show
        arguments:
          parameters:
          - {name: s, value: "{{steps.test-linux.status}} {{steps.test-linux.id}}"}
  - name: cat-os-release
    inputs:
      parameters:
      - name: image
      - name: tag
    container:
      image: "{{inputs.parameters.image}}:{{inputs.parameters.tag}}"
      command: [cat]
      args: [/etc/os-release, "{{steps.name}}"]
  - name: show
    inputs:
      parameters: [{name: s}]
    container: {image: busybox, command: [echo, "{{inputs.parameters.s}}"]}
`

// Trap 4 (sorted key:value names) and trap 5 (no loop parent node:
// steps.<loop>.status is the StepGroup's).
func TestLoopsMapsConformance(t *testing.T) {
	d := load(t, loopsMapsYAML).run()
	names := []string{
		"loops-maps[0].test-linux(0:image:debian,tag:9.1)",
		"loops-maps[0].test-linux(1:image:debian,tag:8.9)",
		"loops-maps[0].test-linux(2:image:alpine,tag:3.6)",
		"loops-maps[0].test-linux(3:image:ubuntu,tag:17.10)",
	}
	want := map[string]string{"loops-maps": "Steps Succeeded", "loops-maps[0]": "StepGroup Succeeded",
		"loops-maps[1]": "StepGroup Succeeded", "loops-maps[1].after": "Pod Succeeded"}
	for _, n := range names {
		want[n] = "Pod Succeeded"
	}
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", want)
	eq(t, "group children", d.children("loops-maps[0]"), names)
	l := d.launchOf(names[3])
	eq(t, "image", l.Template.Container.Image, "ubuntu:17.10")
	eq(t, "steps.name", l.Template.Container.Args[1], "test-linux(3:image:ubuntu,tag:17.10)")
	eq(t, "loop status is the group's", arg(d.launchOf("loops-maps[1].after"), "s"),
		"Succeeded "+d.node("loops-maps[0]").ID)
}

const loopsSequenceYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: loops-sequence-
spec:
  entrypoint: loops-sequence
  arguments:
    parameters:
    - name: count
      value: "3"
  templates:
  - name: loops-sequence
    steps:
    - - name: sequence-count
        template: echo
        arguments:
          parameters:
          - name: msg
            value: "{{item}}"
        withSequence:
          count: "5"
      - name: sequence-start-end
        template: echo
        arguments:
          parameters:
          - name: msg
            value: "{{item}}"
        withSequence:
          start: "100"
          end: "105"
      - name: sequence-param
        template: echo
        arguments:
          parameters:
          - name: msg
            value: "{{item}}"
        withSequence:
          start: "200"
          count: "{{workflow.parameters.count}}"
      - name: sequence-negative
        template: echo
        arguments:
          parameters:
          - name: msg
            value: "{{item}}"
        withSequence:
          start: "5"
          end: "0"
      - name: sequence-format
        template: echo
        arguments:
          parameters:
          - name: msg
            value: "{{item}}"
        withSequence:
          count: "5"
          format: "testuser%02X"
  - name: echo
    inputs:
      parameters:
      - name: msg
    container:
      image: alpine:3.23
      command: [echo, "{{inputs.parameters.msg}}"]
`

func TestLoopsSequenceConformance(t *testing.T) {
	d := load(t, loopsSequenceYAML).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", nil)
	var got []string
	for _, c := range d.children("loops-sequence[0]") {
		got = append(got, strings.TrimPrefix(c, "loops-sequence[0]."))
	}
	var want []string
	for i := 0; i < 5; i++ {
		want = append(want, "sequence-count("+strconv.Itoa(i)+":"+strconv.Itoa(i)+")")
	}
	for i := 0; i <= 5; i++ {
		want = append(want, "sequence-start-end("+strconv.Itoa(i)+":"+strconv.Itoa(100+i)+")")
	}
	for i := 0; i < 3; i++ {
		want = append(want, "sequence-param("+strconv.Itoa(i)+":"+strconv.Itoa(200+i)+")")
	}
	for i := 0; i <= 5; i++ {
		want = append(want, "sequence-negative("+strconv.Itoa(i)+":"+strconv.Itoa(5-i)+")")
	}
	for i := 0; i < 5; i++ {
		want = append(want, "sequence-format("+strconv.Itoa(i)+":testuser0"+strconv.Itoa(i)+")")
	}
	eq(t, "iterations", got, want)
	eq(t, "item", arg(d.launchOf("loops-sequence[0].sequence-format(4:testuser04)"), "msg"), "testuser04")
	eq(t, "pods", len(d.launches), 25)
}

// Rule 5.2: item kinds and their names and values.
func TestLoopItemForms(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: it}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: l
        template: show
        arguments: {parameters: [{name: v, value: "{{item}}"}]}
        withParam: '[1.50, true, "a(b)c", [1, "two", {"k": "v"}], {"name": "first", "type": ""}, {"b": {"x": 1}, "a": "q"}]'
  - name: show
    inputs: {parameters: [{name: v}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.v}}"]}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", nil)
	names := d.children("it[0]")
	eq(t, "names", names, []string{
		"it[0].l(0:1.50)", "it[0].l(1:true)", "it[0].l(2:abc)", `it[0].l(3:[1 two {"k":"v"}])`,
		"it[0].l(4:name:first,type:)", `it[0].l(5:a:q,b:{"x":1})`})
	vals := []string{}
	for _, n := range names {
		vals = append(vals, arg(d.launchOf(n), "v"))
	}
	eq(t, "values", vals, []string{"1.50", "true", "a(b)c", `[1,"two",{"k":"v"}]`, `{"name":"first","type":""}`, `{"a":"q","b":{"x":1}}`})
}

// Rule 5.1: an empty list is a Skipped placeholder; withItems: [] is not a
// loop; a withParam that is not a list errors the group; expansion is strict.
func TestLoopEdges(t *testing.T) {
	tests := []struct {
		name, step string
		phase      v1alpha1.WorkflowPhase
		nodes      map[string]string
	}{
		{"empty withParam", `withParam: "[]"`, v1alpha1.WorkflowSucceeded, map[string]string{
			"lp[0].l": "Skipped Skipped Skipped, empty params", "lp[0]": "StepGroup Succeeded"}},
		{"empty sequence", `withSequence: {count: "0"}`, v1alpha1.WorkflowSucceeded, map[string]string{
			"lp[0].l": "Skipped Skipped Skipped, empty params"}},
		{"empty withItems runs once", `withItems: []`, v1alpha1.WorkflowSucceeded, map[string]string{
			"lp[0].l": "Pod Succeeded"}},
		{"withParam not a list", `withParam: "abc"`, v1alpha1.WorkflowFailed, map[string]string{
			"lp[0]": "StepGroup Error withParam value could not be parsed as a JSON list: abc: invalid character 'a' looking for beginning of value"}},
		{"withParam an object", `withParam: '{"a":1}'`, v1alpha1.WorkflowFailed, map[string]string{
			"lp[0]": "StepGroup Error withParam value could not be parsed as a JSON list: {\"a\":1}: json: cannot unmarshal object into Go value of type []v1alpha1.Item"}},
		{"strict expansion", `withItems: [a]
        arguments: {parameters: [{name: v, value: "{{item}} {{foo}}"}]}`, v1alpha1.WorkflowFailed, map[string]string{
			"lp[0]": "StepGroup Error failed to resolve {{foo}}"}},
		{"false when is not strict", `withItems: [a]
        when: "false"
        arguments: {parameters: [{name: v, value: "{{item}} {{foo}}"}]}`, v1alpha1.WorkflowSucceeded, map[string]string{
			"lp[0].l(0:a)": "Skipped Skipped when 'false' evaluated false"}},
		{"no end or count", `withSequence: {start: "1"}`, v1alpha1.WorkflowFailed, map[string]string{
			"lp[0]": "StepGroup Error neither end nor count was specified in withSequence"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: lp}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: l
        template: show
        `+tt.step+`
  - name: show
    inputs: {parameters: [{name: v, default: d}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.v}}"]}
`).run()
			msg := ""
			if tt.phase == v1alpha1.WorkflowFailed {
				msg = d.node("lp[0]").Message
			}
			d.expect(tt.phase, msg, tt.nodes)
			if tt.phase == v1alpha1.WorkflowFailed {
				eq(t, "steps node", d.node("lp").Phase, v1alpha1.NodeFailed)
			}
		})
	}
}

const parameterAggregationYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: parameter-aggregation-
spec:
  entrypoint: parameter-aggregation
  templates:
  - name: parameter-aggregation
    steps:
    - - name: odd-or-even
        template: odd-or-even
        arguments:
          parameters:
          - name: num
            value: "{{item}}"
        withItems: [1, 2, 3, 4]
    - - name: print-nums
        template: print-message
        arguments:
          parameters:
          - name: message
            value: "{{steps.odd-or-even.outputs.parameters.num}}"
    - - name: print-evenness
        template: print-message
        arguments:
          parameters:
          - name: message
            value: "{{steps.odd-or-even.outputs.parameters.evenness}}"
    - - name: divide-by-2
        template: divide-by-2
        arguments:
          parameters:
          - name: num
            value: "{{item.num}}"
        withParam: "{{steps.odd-or-even.outputs.parameters}}"
        when: "{{item.evenness}} == even"
    - - name: print
        template: print-message
        arguments:
          parameters:
          - name: message
            value: "{{item}}"
        withParam: "{{steps.divide-by-2.outputs.result}}"
  - name: odd-or-even
    inputs:
      parameters:
      - name: num
    container:
      image: alpine:3.23
      command: [sh, -xc]
      args:
      - |
        sleep 1 &&
        echo {{inputs.parameters.num}} > /tmp/num &&
        if [ $(({{inputs.parameters.num}}%2)) -eq 0 ]; then
          echo "even" > /tmp/even;
        else
          echo "odd" > /tmp/even;
        fi
    outputs:
      parameters:
      - name: num
        valueFrom:
          path: /tmp/num
      - name: evenness
        valueFrom:
          path: /tmp/even
  - name: divide-by-2
    inputs:
      parameters:
      - name: num
    script:
      image: alpine:3.23
      command: [sh, -x]
      source: |
        echo $(({{inputs.parameters.num}}/2))
  - name: print-message
    inputs:
      parameters:
      - name: message
    container:
      image: busybox
      command: [echo]
      args: ["{{inputs.parameters.message}}"]
`

// parameterAggregationRuntime computes what the example's shell would.
func parameterAggregationRuntime(_ *driver, l Launch) *stepEnd {
	switch l.Template.Name {
	case "odd-or-even":
		n, _ := strconv.Atoi(arg(l, "num"))
		ev := "odd"
		if n%2 == 0 {
			ev = "even"
		}
		return &stepEnd{params: map[string]string{"num": arg(l, "num"), "evenness": ev}}
	case "divide-by-2":
		n, _ := strconv.Atoi(arg(l, "num"))
		return &stepEnd{result: str(strconv.Itoa(n / 2))}
	}
	return nil
}

// Trap 7: aggregates of Succeeded iterations by index; withParam uses both
// the parameter and the result aggregates.
func TestParameterAggregationConformance(t *testing.T) {
	d := load(t, parameterAggregationYAML)
	d.respond = parameterAggregationRuntime
	d.run()
	p := "parameter-aggregation"
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{
		p + "[3].divide-by-2(0:evenness:odd,num:1)":  "Skipped Skipped when 'odd == even' evaluated false",
		p + "[3].divide-by-2(1:evenness:even,num:2)": "Pod Succeeded",
		p + "[3].divide-by-2(2:evenness:odd,num:3)":  "Skipped Skipped when 'odd == even' evaluated false",
		p + "[3].divide-by-2(3:evenness:even,num:4)": "Pod Succeeded",
		p + "[4].print(0:1)":                         "Pod Succeeded",
		p + "[4].print(1:2)":                         "Pod Succeeded",
	})
	eq(t, "nums", arg(d.launchOf(p+"[1].print-nums"), "message"), `["1","2","3","4"]`)
	eq(t, "evenness", arg(d.launchOf(p+"[2].print-evenness"), "message"), `["odd","even","odd","even"]`)
	eq(t, "divide args", arg(d.launchOf(p+"[3].divide-by-2(3:evenness:even,num:4)"), "num"), "4")
	if !d.launchOf(p + "[3].divide-by-2(1:evenness:even,num:2)").IncludeResult {
		t.Error("divide-by-2 result is referenced and must be captured")
	}
	if d.launchOf(p + "[0].odd-or-even(0:1)").IncludeResult {
		t.Error("odd-or-even result is not referenced")
	}
	eq(t, "script source kept", d.launchOf(p+"[3].divide-by-2(1:evenness:even,num:2)").Template.Script.Source, "echo $((2/2))\n")
}

func aggYAML(producer, consumerArg string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ag}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: gen
        template: gen
        arguments: {parameters: [{name: v, value: "{{item}}"}]}
        withItems: [a, b, c]
        continueOn: {failed: true}
    - - name: use
        template: show
        arguments: {parameters: [{name: v, value: "` + consumerArg + `"}]}
  - name: gen
    inputs: {parameters: [{name: v}]}
` + producer + `
  - name: show
    inputs: {parameters: [{name: v}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.v}}"]}
`
}

// Rule 5.6 / trap 7 [run] results and the JSON rules of the aggregates.
func TestAggregation(t *testing.T) {
	paramProducer := `    container: {image: busybox, command: [run, "{{inputs.parameters.v}}"]}
    outputs: {parameters: [{name: o, valueFrom: {path: /o}}]}`
	resultProducer := `    script: {image: busybox, command: [sh], source: "echo {{inputs.parameters.v}}"}`
	value := func(l Launch) string { return strings.TrimPrefix(argsOf(l), "run ") }
	tests := []struct {
		name, producer, arg string
		out                 func(l Launch) *stepEnd
		want                string
	}{
		{"parameters", paramProducer, "{{steps.gen.outputs.parameters}}",
			func(l Launch) *stepEnd { return &stepEnd{params: map[string]string{"o": value(l)}} }, `[{"o":"a"},{"o":"b"},{"o":"c"}]`},
		{"parameter list of strings", paramProducer, "{{steps.gen.outputs.parameters.o}}",
			func(l Launch) *stepEnd { return &stepEnd{params: map[string]string{"o": value(l)}} }, `["a","b","c"]`},
		{"numbers stay strings", paramProducer, "{{steps.gen.outputs.parameters.o}}",
			func(l Launch) *stepEnd {
				return &stepEnd{params: map[string]string{"o": map[string]string{"a": "1", "b": "2", "c": "3"}[value(l)]}}
			}, `["1","2","3"]`},
		{"objects decode", paramProducer, "{{steps.gen.outputs.parameters.o}}",
			func(l Launch) *stepEnd { return &stepEnd{params: map[string]string{"o": `{"k":"` + value(l) + `"}`}} },
			`[{"k":"a"},{"k":"b"},{"k":"c"}]`},
		{"mixed stay strings", paramProducer, "{{steps.gen.outputs.parameters.o}}",
			func(l Launch) *stepEnd {
				v := value(l)
				if v == "b" {
					v = `{"k":"b"}`
				}
				return &stepEnd{params: map[string]string{"o": v}}
			}, `["a","{\"k\":\"b\"}","c"]`},
		{"results decode", resultProducer, "{{steps.gen.outputs.result}}",
			func(l Launch) *stepEnd {
				r := map[string]string{"a": `"a"`, "b": `{"k":"b"}`, "c": `"c"`}[strings.TrimPrefix(l.Template.Script.Source, "echo ")]
				return &stepEnd{result: &r}
			}, `["a",{"k":"b"},"c"]`},
		{"only succeeded, by index", paramProducer, "{{steps.gen.outputs.parameters.o}}",
			func(l Launch) *stepEnd {
				if value(l) == "b" {
					return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1, params: map[string]string{"o": "b"}}
				}
				return &stepEnd{params: map[string]string{"o": value(l)}, duration: map[string]time.Duration{"a": 3, "c": 1}[value(l)] * time.Second}
			}, `["a","c"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := load(t, aggYAML(tt.producer, tt.arg))
			d.respond = func(_ *driver, l Launch) *stepEnd {
				if l.Template.Name == "gen" {
					return tt.out(l)
				}
				return nil
			}
			d.run()
			eq(t, "consumer", arg(d.launchOf("ag[1].use"), "v"), tt.want)
		})
	}
}

// Trap 6: loop results that are not JSON error the Steps template.
func TestAggregationResultNotJSON(t *testing.T) {
	d := load(t, aggYAML(`    script: {image: busybox, command: [sh], source: "echo {{inputs.parameters.v}}"}`, "{{steps.gen.outputs.result}}"))
	d.respond = func(_ *driver, l Launch) *stepEnd {
		if l.Template.Name == "gen" {
			return &stepEnd{result: str("hello")}
		}
		return nil
	}
	d.run()
	msg := "error in entry template execution: steps.gen.outputs.result: invalid character 'h' looking for beginning of value"
	d.expect(v1alpha1.WorkflowError, msg, map[string]string{
		"ag": "Steps Error steps.gen.outputs.result: invalid character 'h' looking for beginning of value"})
	if d.has("ag[1].use") {
		t.Error("the consumer must not run")
	}
}

// Trap 7 [run]: a parameter no iteration produced is never set, so its
// consumer waits forever.
func TestAggregationMissingWaits(t *testing.T) {
	d := load(t, aggYAML(`    container: {image: busybox, command: [sh, -c, "exit 1"]}
    outputs: {parameters: [{name: o, valueFrom: {path: /o}}]}`, "{{steps.gen.outputs.parameters.o}}"))
	d.idle = func(*driver) bool { return false }
	for i := 0; i < 20; i++ {
		d.reconcile()
		d.collect()
		if len(d.pending) == 0 {
			if next := d.nextEvent(d.last.RequeueAfter); !next.IsZero() {
				d.now = next
				d.collect()
			}
		}
	}
	d.expect(v1alpha1.WorkflowRunning, "", map[string]string{"ag[1]": "StepGroup Running", "ag[0]": "StepGroup Succeeded"})
	if d.has("ag[1].use") {
		t.Error("the consumer must wait")
	}
	eq(t, "no timer", d.last.RequeueAfter, time.Duration(0))
}

const dagLoopYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: dl}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - name: gen
        template: gen
        arguments: {parameters: [{name: v, value: "{{item}}"}]}
        withItems: [x, y]
      - name: use
        depends: gen
        template: show
        arguments: {parameters: [{name: v, value: "{{tasks.gen.status}} {{tasks.gen.id}} {{tasks.gen.outputs.parameters.o}}"}]}
  - name: gen
    inputs: {parameters: [{name: v}]}
    container: {image: busybox, command: [run, "{{tasks.name}}"]}
    outputs: {parameters: [{name: o, valueFrom: {path: /o}}]}
  - name: show
    inputs: {parameters: [{name: v}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.v}}"]}
`

// Rule 5.4: tasks.<loop>.status and .id describe the TaskGroup; tasks.name
// is the expanded name inside an iteration.
func TestDAGLoopVariables(t *testing.T) {
	d := load(t, dagLoopYAML)
	d.respond = func(_ *driver, l Launch) *stepEnd {
		if l.Template.Name == "gen" {
			return &stepEnd{params: map[string]string{"o": strings.TrimPrefix(argsOf(l), "run ")}}
		}
		return nil
	}
	d.run()
	tg := d.node("dl.gen")
	eq(t, "use", arg(d.launchOf("dl.use"), "v"), `Succeeded `+tg.ID+` ["gen(0:x)","gen(1:y)"]`)
	eq(t, "tasks.name", argsOf(d.launchOf("dl.gen(1:y)")), "run gen(1:y)")
}

// withsequence-nested-result.yaml: a sequence bound by an earlier step's
// result turns capture on and counts from it.
func TestSequenceFromResult(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: withsequence-nested-result-
spec:
  entrypoint: hello-entrypoint
  templates:
    - name: hello-entrypoint
      steps:
        - - name: hello-a
            template: hello
        - - name: hello-b
            template: hello-hello
            withSequence:
              start: "1"
              end: "{{steps.hello-a.outputs.result}}"
    - name: hello-hello
      steps:
        - - name: hello-b
            template: hello
        - - name: hello-c
            template: hello
            withSequence:
              start: "1"
              end: "{{steps.hello-b.outputs.result}}"
    - name: hello
      script:
        image: python:alpine3.23
        command: [python]
        source: |
          import random
          result = random.randint(0,5)
          print(result)
`)
	d.respond = fixed(map[string]*stepEnd{"hello": {result: str("2")}})
	d.run()
	p := "withsequence-nested-result"
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{
		p + "[1].hello-b(0:1)":                 "Steps Succeeded",
		p + "[1].hello-b(1:2)[1].hello-c(1:2)": "Pod Succeeded",
	})
	if !d.launchOf(p + "[0].hello-a").IncludeResult {
		t.Error("hello-a's result is referenced by a withSequence")
	}
}
