package engine

import (
	"cmp"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// maxConcurrent tracks the most pods running at once.
func maxConcurrent(d *driver) *int {
	most := 0
	prev := d.respond
	d.respond = func(d *driver, l Launch) *stepEnd {
		if n := len(d.running) + 1; n > most {
			most = n
		}
		if prev != nil {
			return prev(d, l)
		}
		return nil
	}
	return &most
}

const parallelismLimitYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: parallelism-limit-
spec:
  entrypoint: parallelism-limit
  parallelism: 2
  templates:
  - name: parallelism-limit
    steps:
    - - name: sleep
        template: sleep
        withItems:
        - this
        - workflow
        - should
        - take
        - at
        - least
        - 60
        - seconds
        - to
        - complete
  - name: sleep
    container:
      image: busybox
      command: [sh, -c, sleep 10]
`

// parallelism-limit.yaml: spec.parallelism caps running pods (rule 10.1).
func TestParallelismLimitConformance(t *testing.T) {
	d := load(t, parallelismLimitYAML)
	most := maxConcurrent(d)
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", nil)
	eq(t, "max concurrent", *most, 2)
	eq(t, "pods", len(d.launches), 10)
	eq(t, "took", d.wf.Status.FinishedAt.Sub(t0), 50*time.Second)
	// iterations start in order
	var order []string
	for _, l := range d.launches {
		order = append(order, strings.TrimPrefix(l.NodeName, "parallelism-limit[0]."))
	}
	eq(t, "order", order[:3], []string{"sleep(0:this)", "sleep(1:workflow)", "sleep(2:should)"})
}

const continueOnFailYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: continue-on-fail-
spec:
  entrypoint: workflow-ignore
  parallelism: 1
  templates:
  - name: workflow-ignore
    steps:
    - - name: A
        template: hello-world
    - - name: B
        template: hello-world
      - name: C
        template: intentional-fail
        continueOn:
          failed: true
    - - name: D
        template: hello-world
  - name: hello-world
    container:
      image: busybox
      command: [echo]
      args: ["hello world"]
  - name: intentional-fail
    container:
      image: busybox
      command: [sh, -c]
      args: ["echo intentional failure; exit 1"]
`

func TestContinueOnFailConformance(t *testing.T) {
	d := load(t, continueOnFailYAML)
	most := maxConcurrent(d)
	d.run()
	p := "continue-on-fail"
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		p:           "Steps Succeeded",
		p + "[0]":   "StepGroup Succeeded",
		p + "[0].A": "Pod Succeeded",
		p + "[1]":   "StepGroup Succeeded",
		p + "[1].B": "Pod Succeeded",
		p + "[1].C": "Pod Failed main: Error (exit code 1)",
		p + "[2]":   "StepGroup Succeeded",
		p + "[2].D": "Pod Succeeded",
	})
	eq(t, "one at a time", *most, 1)
	eq(t, "D hangs under B and C", d.node(p+"[1].C").Children, []string{d.node(p + "[2]").ID})
}

// Rule 10.2: template parallelism limits direct children.
func TestTemplateParallelism(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: tp}
spec:
  entrypoint: main
  templates:
  - name: main
    parallelism: 3
    dag:
      tasks:
      - {name: fan, template: work, withSequence: {count: "8"}}
  - name: work
    container: {image: busybox, command: [sleep, "5"]}
`)
	most := maxConcurrent(d)
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"tp.fan": "TaskGroup Succeeded"})
	eq(t, "max concurrent", *most, 3)
	eq(t, "pods", len(d.launches), 8)
}

// Rule 10.3 [run]: template failFast stops new children once one failed,
// and fails the template (and its last group) when none is active.
func TestTemplateFailFast(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: ff}
spec:
  entrypoint: main
  templates:
  - name: main
    parallelism: 2
    failFast: true
    steps:
    - - name: fan
        template: work
        arguments: {parameters: [{name: n, value: "{{item}}"}]}
        withSequence: {count: "6"}
  - name: work
    inputs: {parameters: [{name: n}]}
    container: {image: busybox, command: [run, "{{inputs.parameters.n}}"]}
`)
	d.respond = func(_ *driver, l Launch) *stepEnd {
		if strings.HasSuffix(argsOf(l), " 1") {
			return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1, duration: time.Second}
		}
		return &stepEnd{duration: 3 * time.Second}
	}
	d.run()
	msg := "template has failed or errored children and failFast enabled"
	d.expect(v1alpha1.WorkflowFailed, msg, map[string]string{
		"ff":             "Steps Failed " + msg,
		"ff[0]":          "StepGroup Failed " + msg,
		"ff[0].fan(0:0)": "Pod Succeeded",
		"ff[0].fan(1:1)": "Pod Failed",
	})
	eq(t, "pods", len(d.launches), 2)
}

// Trap 3: dag.failFast does not stop independent branches in v4.1.2; it
// only decides which failing target wins.
func TestDAGFailFastDoesNotCancel(t *testing.T) {
	yaml := func(ff string) string {
		return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: df}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      failFast: ` + ff + `
      tasks:
      - {name: a, template: bad}
      - {name: b, template: slow}
      - {name: c, template: ok, depends: b}
  - name: bad
    container: {image: busybox, command: [sh, -c, "exit 1"]}
  - name: slow
    container: {image: busybox, command: [sleep, "5"]}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
`
	}
	for _, ff := range []string{"true", "false"} {
		d := load(t, yaml(ff)).run()
		d.expect(v1alpha1.WorkflowFailed, d.childFailed("df.a", "main: Error (exit code 1)"), map[string]string{"df.a": "Pod Failed", "df.b": "Pod Succeeded", "df.c": "Pod Succeeded", "df": "DAG Failed "})
	}
}

const shutdownYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sd}
spec:
  entrypoint: main
  onExit: exit
  templates:
  - name: main
    steps:
    - - {name: a, template: slow}
      - {name: w, template: wait}
      - {name: later, template: ok, when: "{{steps.x.status}} == x"}
    - - {name: b, template: ok}
  - name: wait
    suspend: {}
  - name: slow
    container: {image: busybox, command: [sleep, "100"]}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
  - name: exit
    steps:
    - - {name: e, template: slow}
`

// Rule 10.4 and trap 12: the shutdown messages depend on where the pod was;
// Stop runs exit handlers and spares their pods, Terminate starts none.
func TestShutdown(t *testing.T) {
	for _, strategy := range []v1alpha1.ShutdownStrategy{v1alpha1.ShutdownStop, v1alpha1.ShutdownTerminate} {
		t.Run(string(strategy), func(t *testing.T) {
			d := load(t, strings.Replace(shutdownYAML, `      - {name: later, template: ok, when: "{{steps.x.status}} == x"}
`, "", 1))
			d.runFor(10 * time.Second)
			d.wf.Spec.Shutdown = strategy
			d.run()
			stopped := fmt.Sprintf("Stopped with strategy '%s'", strategy)
			a := v1alpha1.NodeID("sd", "sd[0].a")
			d.expect(v1alpha1.WorkflowFailed, stopped, map[string]string{
				"sd":      "Steps Failed child '" + a + "' failed",
				"sd[0].a": "Pod Failed workflow shutdown with strategy:  " + string(strategy),
				"sd[0].w": "Suspend Failed " + stopped,
			})
			if d.has("sd[1].b") {
				t.Error("no new group after a shutdown")
			}
			eq(t, "kill", d.kills[0], Kill{NodeID: a, Reason: "workflow shutdown with strategy:  " + string(strategy)})
			if strategy == v1alpha1.ShutdownStop {
				d.expect(v1alpha1.WorkflowFailed, stopped, map[string]string{"sd.onExit": "Steps Succeeded", "sd.onExit[0].e": "Pod Succeeded"})
			} else if d.has("sd.onExit") {
				t.Error("Terminate must not start the exit handler")
			}
		})
	}
}

// Trap 12: a pod that was never created gets the one-space message.
func TestShutdownBeforeCreation(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sb}
spec:
  entrypoint: main
  shutdown: Stop
  templates:
  - name: main
    steps:
    - - {name: a, template: ok}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
`).run()
	d.expect(v1alpha1.WorkflowFailed, "Stopped with strategy 'Stop'", map[string]string{
		"sb[0].a": "Pod Failed workflow shutdown with strategy: Stop"})
	eq(t, "no launch", len(d.launches), 0)
}

// Rule 2.5: a DAG fails at once under a shutdown.
func TestShutdownDAG(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sg}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: slow}
      - {name: b, template: slow, depends: a}
  - name: slow
    container: {image: busybox, command: [sleep, "100"]}
`)
	d.runFor(5 * time.Second)
	d.wf.Spec.Shutdown = v1alpha1.ShutdownTerminate
	d.run()
	d.expect(v1alpha1.WorkflowFailed, "Stopped with strategy 'Terminate'", map[string]string{
		"sg": "DAG Failed ", "sg.a": "Pod Failed workflow shutdown with strategy:  Terminate"})
}

// spec.suspend stops all progress until it is cleared.
func TestWorkflowSuspend(t *testing.T) {
	d := load(t, stepsYAML)
	yes := true
	d.wf.Spec.Suspend = &yes
	d.reconcile()
	eq(t, "nothing created", len(d.wf.Status.Nodes), 0)
	eq(t, "running", d.wf.Status.Phase, v1alpha1.WorkflowRunning)
	d.wf.Spec.Suspend = nil
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", nil)
}

// Limits.MaxDepth: runaway recursion ends the workflow Error with a
// message that names the bound, its value and the node, instead of a crash.
func TestRecursionLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int // 0: the default, 100
	}{{"set", 50}, {"default", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: rec}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: again, template: main}
`)
			d.limits.MaxDepth = tc.limit
			d.run()
			limit := cmp.Or(tc.limit, DefaultMaxDepth)
			deepest := "rec" + strings.Repeat("[0].again", limit-1)
			msg := fmt.Sprintf("Maximum recursion depth exceeded: node %q: templates nest %d deep, more than the limit (limits.maxDepth = %d)",
				deepest, limit, limit)
			d.expect(v1alpha1.WorkflowError, msg, map[string]string{
				deepest: "Skipped Error " + msg,
				"rec":   "Steps Failed",
			})
		})
	}
}

// Limits.MaxNodes ends a workflow that grows too big.
func TestNodeLimit(t *testing.T) {
	d := load(t, loopsSequenceYAML)
	d.limits.MaxNodes = 10
	d.run()
	d.expect(v1alpha1.WorkflowError, `node "loops-sequence[0].sequence-start-end(3:103)": the workflow would have 11 nodes, more than the limit (limits.maxNodes = 10)`, nil)
	if n := len(d.wf.Status.Nodes); n > 10 {
		t.Errorf("%d nodes", n)
	}
	for _, n := range d.wf.Status.Nodes {
		if n.Type == v1alpha1.NodeTypePod && !n.Phase.Fulfilled() {
			t.Errorf("pod %s still %s", n.Name, n.Phase)
		}
	}
}

// Rule 10.5: a daemon counts as done once Running, and is killed and marked
// Succeeded when its scope ends.
func TestDaemon(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: dm}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: server, template: server}
    - - name: client
        template: client
        arguments: {parameters: [{name: ip, value: "{{steps.server.ip}}"}]}
  - name: server
    daemon: true
    container: {image: nginx}
  - name: client
    inputs: {parameters: [{name: ip}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.ip}}"]}
`)
	d.respond = func(_ *driver, l Launch) *stepEnd {
		if l.Template.Name == "server" {
			return &stepEnd{running: true}
		}
		return nil
	}
	d.run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"dm[0].server": "Pod Succeeded", "dm[1].client": "Pod Succeeded"})
	eq(t, "ip", arg(d.launchOf("dm[1].client"), "ip"), "10.0.0.1")
	eq(t, "killed", d.kills, []Kill{{NodeID: v1alpha1.NodeID("dm", "dm[0].server")}})
	if d.node("dm[0].server").Daemoned != nil {
		t.Error("daemoned flag must be cleared")
	}
}
