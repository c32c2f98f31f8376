package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Rule 2.8: controller-side errors make Error nodes; inside steps the group
// is Error and the Steps node Failed; the entrypoint's own error makes the
// workflow Error.
func TestTemplateNotFound(t *testing.T) {
	t.Run("step", func(t *testing.T) {
		d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: tn}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: nope}
`).run()
		msg := "step group deemed errored due to child tn[0].a error: template nope not found"
		d.expectExactly(v1alpha1.WorkflowFailed, msg, map[string]string{
			"tn":      "Steps Failed " + msg,
			"tn[0]":   "StepGroup Error " + msg,
			"tn[0].a": "Skipped Error template nope not found",
		})
		eq(t, "placeholder flag", d.node("tn[0].a").NodeFlag, &v1alpha1.NodeFlag{})
	})
	t.Run("entrypoint", func(t *testing.T) {
		d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: te}
spec:
  entrypoint: nope
  templates:
  - name: main
    container: {image: busybox}
`).run()
		d.expect(v1alpha1.WorkflowError, "error in entry template execution: template nope not found", map[string]string{
			"te": "Skipped Error template nope not found"})
	})
	t.Run("templateRef without templates", func(t *testing.T) {
		d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: tr}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, templateRef: {name: lib, template: x}}
`).run()
		d.expect(v1alpha1.WorkflowError, d.childFailed("tr.a", "task 'tr.a' errored: templateRef lib/x: no workflow templates are available"), map[string]string{
			"tr.a": "Skipped Error task 'tr.a' errored: templateRef lib/x: no workflow templates are available",
			"tr":   "DAG Error ",
		})
	})
	t.Run("no type", func(t *testing.T) {
		d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: nt}
spec:
  entrypoint: main
  templates:
  - name: main
`).run()
		d.expect(v1alpha1.WorkflowError, "error in entry template execution: Template 'main' missing specification", nil)
	})
}

// Rule 2.8: a bad global parameter fails the workflow before any node.
func TestBadGlobalParameter(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: bg}
spec:
  entrypoint: main
  arguments:
    parameters:
    - name: p
  templates:
  - name: main
    container: {image: busybox}
`).run()
	d.expect(v1alpha1.WorkflowFailed, "failed to set global parameters: either value or valueFrom must be specified in order to set global parameter p", nil)
	eq(t, "no nodes", len(d.wf.Status.Nodes), 0)
}

func dagPhaseYAML(failFast string, tasks string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: dp}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      failFast: ` + failFast + `
      tasks:
` + tasks + `
  - name: ok
    container: {image: busybox, command: [echo, ok]}
  - name: fail
    container: {image: busybox, command: [sh, -c, "exit 1"]}
  - name: err
    container: {image: busybox, command: [err]}
  - name: need
    inputs: {parameters: [{name: x}]}
    container: {image: busybox}
`
}

// Rule 2.5 steps 3-5 and rule 2.6.
func TestDAGPhase(t *testing.T) {
	errRuntime := fixed(map[string]*stepEnd{"err": {phase: v1alpha1.NodeError, message: "boom"}})
	tests := []struct {
		name, failFast, tasks string
		phase                 v1alpha1.WorkflowPhase
		dag                   string
		child, msg            string // the workflow message: childFailed(child, msg)
	}{
		{"failed target", "true", "      - {name: a, template: fail}", v1alpha1.WorkflowFailed, "DAG Failed ", "dp.a", "main: Error (exit code 1)"},
		{"error target", "true", "      - {name: a, template: err}", v1alpha1.WorkflowError, "DAG Error ", "dp.a", "boom"},
		{"first failing target wins with failFast", "true",
			"      - {name: a, template: fail}\n      - {name: b, template: err}", v1alpha1.WorkflowFailed, "DAG Failed ", "dp.a", "main: Error (exit code 1)"},
		{"last failing target wins without failFast", "false",
			"      - {name: a, template: fail}\n      - {name: b, template: err}", v1alpha1.WorkflowError, "DAG Error ", "dp.b", "boom"},
		{"continueOn target ignored", "true",
			"      - {name: a, template: fail, continueOn: {failed: true}}\n      - {name: b, template: ok}", v1alpha1.WorkflowSucceeded, "DAG Succeeded", "", ""},
		{"omitted target inherits error", "true",
			"      - {name: a, template: need}\n      - {name: b, template: ok, depends: a}", v1alpha1.WorkflowError, "DAG Error ", "dp.a", "task 'dp.a' errored: inputs.parameters.x was not supplied"},
		{"taskgroup takes the last failure", "true",
			"      - {name: a, template: '{{item}}', withItems: [fail, err, ok]}", v1alpha1.WorkflowError, "DAG Error ", "dp.a(2:ok)", "task 'dp.a(2:ok)' errored: template {{item}} not found"},
		{"skipped target succeeds", "true",
			"      - {name: a, template: ok, when: 'false'}", v1alpha1.WorkflowSucceeded, "DAG Succeeded", "", ""},
		{"AllFailed", "true",
			"      - {name: a, template: fail, withItems: [1, 2]}\n      - {name: b, template: ok, depends: a.AllFailed}", v1alpha1.WorkflowSucceeded, "DAG Succeeded", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := load(t, dagPhaseYAML(tt.failFast, tt.tasks))
			d.respond = errRuntime
			d.run()
			msg := ""
			if tt.child != "" {
				msg = d.childFailed(tt.child, tt.msg)
			}
			d.expect(tt.phase, msg, map[string]string{"dp": tt.dag})
		})
	}
	d := load(t, dagPhaseYAML("true", "      - {name: a, template: '{{item}}', withItems: [fail, err, ok]}"))
	d.respond = errRuntime
	d.run()
	d.expect(v1alpha1.WorkflowError, d.childFailed("dp.a(2:ok)", "task 'dp.a(2:ok)' errored: template {{item}} not found"),
		map[string]string{"dp.a": "TaskGroup Error "})
}

// Rule 2.3: a step group fails on its first failing child in children
// order; Skipped children never fail it.
func TestStepGroupPhase(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sg}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: slowfail}
      - {name: b, template: fail}
      - {name: s, template: fail, when: "false"}
  - name: fail
    container: {image: busybox, command: [sh, -c, "exit 1"]}
  - name: slowfail
    container: {image: busybox, command: [sh, -c, "sleep 5; exit 2"]}
`).run()
	a := v1alpha1.NodeID("sg", "sg[0].a")
	d.expect(v1alpha1.WorkflowFailed, "child '"+a+"' failed", map[string]string{"sg[0]": "StepGroup Failed child '" + a + "' failed"})
}

// Rule 2.2: the workflow phase and finish bookkeeping.
func TestWorkflowCompletion(t *testing.T) {
	d := load(t, stepsYAML)
	d.reconcile()
	eq(t, "running", d.wf.Status.Phase, v1alpha1.WorkflowRunning)
	eq(t, "started", d.wf.Status.StartedAt.Time, t0)
	d.run()
	st := d.wf.Status
	eq(t, "conditions", st.Conditions, v1alpha1.Conditions{{Type: v1alpha1.ConditionTypePodRunning, Status: "False"},
		{Type: v1alpha1.ConditionTypeCompleted, Status: "True"}})
	eq(t, "finished", st.FinishedAt.Time, t0.Add(2*time.Second))
	// a completed workflow is left alone
	before := d.passes
	res := d.reconcile()
	eq(t, "no change", len(res.Changed)+len(res.Plan.Launch), 0)
	eq(t, "passes", d.passes, before+1)
}

// Rule 2.8: when the workflow errors while its root still runs, the root is
// set to Error "Workflow operation error".
func TestWorkflowOperationError(t *testing.T) {
	d := load(t, loopsSequenceYAML)
	d.limits.MaxNodes = 5
	d.run()
	d.expect(v1alpha1.WorkflowError, `node "loops-sequence[0].sequence-count(3:3)": the workflow would have 6 nodes, more than the limit (limits.maxNodes = 5)`, map[string]string{
		"loops-sequence": "Steps Error Workflow operation error"})
}

// Result.Changed lists exactly the nodes created or modified, and each once.
func TestChangedIsExact(t *testing.T) {
	for _, y := range []string{stepsYAML, stTreeYAML, dgTreeYAML, rtYAML, wrYAML, exitHandlerStepLevelYAML, parallelismLimitYAML, dagTaskTimeoutYAML} {
		d := load(t, y)
		prev := map[string]v1alpha1.NodeStatus{}
		for i := 0; i < 200 && !d.wf.Status.Phase.Completed(); i++ {
			res := d.reconcile()
			seen := map[string]bool{}
			for _, id := range res.Changed {
				if seen[id] {
					t.Fatalf("%s listed twice", id)
				}
				seen[id] = true
			}
			for id, n := range d.wf.Status.Nodes {
				old, existed := prev[id]
				modified := !existed || !equalJSON(old, n)
				if modified != seen[id] {
					t.Errorf("%s pass %d: node %s modified=%v listed=%v", d.wf.Name, i, n.Name, modified, seen[id])
				}
				prev[id] = *n.DeepCopy()
			}
			d.collect()
			if len(d.pending) == 0 {
				d.now = d.nextEvent(res.RequeueAfter)
				d.collect()
			}
		}
		if !d.wf.Status.Phase.Completed() {
			t.Errorf("%s did not complete", d.wf.Name)
		}
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Determinism: the same snapshot and time give the same result.
func TestDeterministic(t *testing.T) {
	for _, y := range []string{stTreeYAML, dgTreeYAML, loopsSequenceYAML, parameterAggregationYAML} {
		a, b := load(t, y), load(t, y)
		b.prepared = nil // the same with and without a Prepared
		a.respond, b.respond = parameterAggregationRuntime, parameterAggregationRuntime
		for i := 0; i < 40 && !a.wf.Status.Phase.Completed(); i++ {
			ra, rb := a.reconcile(), b.reconcile()
			if !equalJSON(ra, rb) {
				t.Fatalf("pass %d differs", i)
			}
			a.collect()
			b.collect()
			if len(a.pending) == 0 {
				a.now = a.nextEvent(ra.RequeueAfter)
				b.now = a.now
				a.collect()
				b.collect()
			}
		}
	}
}
