package engine

import (
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const diamondYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: dag-diamond-
spec:
  entrypoint: diamond
  templates:
  - name: diamond
    dag:
      tasks:
      - name: A
        template: echo
        arguments:
          parameters: [{name: message, value: A}]
      - name: B
        depends: "A"
        template: echo
        arguments:
          parameters: [{name: message, value: B}]
      - name: C
        depends: "A"
        template: echo
        arguments:
          parameters: [{name: message, value: C}]
      - name: D
        depends: "B && C"
        template: echo
        arguments:
          parameters: [{name: message, value: D}]
  - name: echo
    inputs:
      parameters:
      - name: message
    container:
      image: busybox
      command: [echo, "{{inputs.parameters.message}}"]
`

func TestDAGDiamondConformance(t *testing.T) {
	d := load(t, diamondYAML).run()
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"dag-diamond":   "DAG Succeeded",
		"dag-diamond.A": "Pod Succeeded",
		"dag-diamond.B": "Pod Succeeded",
		"dag-diamond.C": "Pod Succeeded",
		"dag-diamond.D": "Pod Succeeded",
	})
	eq(t, "root children", d.children("dag-diamond"), []string{"dag-diamond.A"})
	eq(t, "A children", d.children("dag-diamond.A"), []string{"dag-diamond.B", "dag-diamond.C"})
	eq(t, "B children", d.children("dag-diamond.B"), []string{"dag-diamond.D"})
	eq(t, "C children", d.children("dag-diamond.C"), []string{"dag-diamond.D"})
	eq(t, "outbound", d.outbound("dag-diamond"), []string{"dag-diamond.D"})
	eq(t, "D command", argsOf(d.launchOf("dag-diamond.D")), "echo D")
	eq(t, "displayName", d.node("dag-diamond.D").DisplayName, "D")
	// A runs alone, then B and C together, then D.
	var order []string
	for _, l := range d.launches {
		order = append(order, l.NodeName)
	}
	eq(t, "launch order", order, []string{"dag-diamond.A", "dag-diamond.B", "dag-diamond.C", "dag-diamond.D"})
}

const enhancedDependsYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: dag-diamond-
spec:
  entrypoint: diamond
  templates:
    - name: diamond
      dag:
        tasks:
          - name: A
            template: pass
          - name: B
            depends: A
            template: pass
          - name: C
            depends: A
            template: fail
          - name: should-execute-1
            depends: "A && (C.Succeeded || C.Failed)"
            template: pass
          - name: should-execute-2
            depends: B || C
            template: pass
          - name: should-not-execute
            depends: B && C
            template: pass
          - name: should-execute-3
            depends: should-execute-2.Succeeded || should-not-execute
            template: pass
    - name: pass
      container: {image: busybox, command: [sh, -c, exit 0]}
    - name: fail
      container: {image: busybox, command: [sh, -c, exit 1]}
`

// Trap 2: C fails but is not a target, so the DAG succeeds.
func TestDAGEnhancedDependsConformance(t *testing.T) {
	d := load(t, enhancedDependsYAML).run()
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"dag-diamond":                    "DAG Succeeded",
		"dag-diamond.A":                  "Pod Succeeded",
		"dag-diamond.B":                  "Pod Succeeded",
		"dag-diamond.C":                  "Pod Failed main: Error (exit code 1)",
		"dag-diamond.should-execute-1":   "Pod Succeeded",
		"dag-diamond.should-execute-2":   "Pod Succeeded",
		"dag-diamond.should-not-execute": "Skipped Omitted omitted: depends condition not met",
		"dag-diamond.should-execute-3":   "Pod Succeeded",
	})
	n := d.node("dag-diamond.should-not-execute")
	eq(t, "omitted flag", n.NodeFlag, &v1alpha1.NodeFlag{})
	eq(t, "omitted parents", d.children("dag-diamond.B"), []string{"dag-diamond.should-execute-2", "dag-diamond.should-not-execute"})
}

// The DAG of rule 1.9 [run]: B fails, E runs on B.Failed, D is omitted and,
// as a target reached from the failed B, fails the DAG with no message.
const dgTreeYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: dg
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: A, template: ok}
      - {name: B, template: bad, depends: A}
      - {name: C, template: ok, depends: A}
      - {name: F, template: ok, depends: A, withItems: [1, 2]}
      - {name: D, template: ok, depends: "B && C"}
      - {name: E, template: ok, depends: B.Failed}
      - {name: G, template: ok, depends: F.AnySucceeded}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
  - name: bad
    container: {image: busybox, command: [sh, -c, "exit 1"]}
`

func TestDAGTreeRule19(t *testing.T) {
	d := load(t, dgTreeYAML).run()
	d.expectExactly(v1alpha1.WorkflowFailed, d.childFailed("dg.B", "main: Error (exit code 1)"), map[string]string{
		"dg":        "DAG Failed ",
		"dg.A":      "Pod Succeeded",
		"dg.B":      "Pod Failed",
		"dg.C":      "Pod Succeeded",
		"dg.F":      "TaskGroup Succeeded",
		"dg.F(0:1)": "Pod Succeeded",
		"dg.F(1:2)": "Pod Succeeded",
		"dg.D":      "Skipped Omitted omitted: depends condition not met",
		"dg.E":      "Pod Succeeded",
		"dg.G":      "Pod Succeeded",
	})
	eq(t, "dg", d.children("dg"), []string{"dg.A"})
	eq(t, "dg.A", d.children("dg.A"), []string{"dg.B", "dg.C", "dg.F"})
	eq(t, "dg.F", d.children("dg.F"), []string{"dg.F(0:1)", "dg.F(1:2)"})
	eq(t, "dg.B", d.children("dg.B"), []string{"dg.D", "dg.E"})
	eq(t, "dg.C", d.children("dg.C"), []string{"dg.D"})
	eq(t, "dg.F(0:1)", d.children("dg.F(0:1)"), []string{"dg.G"})
	eq(t, "dg.F(1:2)", d.children("dg.F(1:2)"), []string{"dg.G"})
	eq(t, "outbound", d.outbound("dg"), []string{"dg.D", "dg.E", "dg.G"})
	eq(t, "taskgroup flag", d.node("dg.F").NodeFlag, &v1alpha1.NodeFlag{})
	eq(t, "iteration boundary", d.node("dg.F(0:1)").BoundaryID, "dg")
	eq(t, "iteration display", d.node("dg.F(1:2)").DisplayName, "F(1:2)")
}

// dag-targets.yaml: a templated target runs only it and its dependencies.
func TestDAGTargets(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: dag-target-
spec:
  entrypoint: dag-target
  arguments:
    parameters:
    - name: target
      value: E
  templates:
  - name: dag-target
    dag:
      target: "{{workflow.parameters.target}}"
      tasks:
      - {name: A, template: echo}
      - {name: B, depends: "A", template: echo}
      - {name: C, depends: "A", template: echo}
      - {name: D, depends: "B && C", template: echo}
      - {name: E, depends: "C", template: echo}
  - name: echo
    container: {image: busybox, command: [echo, hi]}
`).run()
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"dag-target": "DAG Succeeded", "dag-target.A": "Pod Succeeded", "dag-target.C": "Pod Succeeded", "dag-target.E": "Pod Succeeded"})
	eq(t, "outbound", d.outbound("dag-target"), []string{"dag-target.E"})
}

// Rule 3.2: continueOn widens a bare dependency name.
func TestDAGContinueOnDependency(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: dc}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: A, template: bad, continueOn: {failed: true}}
      - {name: B, template: ok, dependencies: [A]}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
  - name: bad
    container: {image: busybox, command: [sh, -c, "exit 1"]}
`).run()
	d.expect(v1alpha1.WorkflowSucceeded, "", map[string]string{"dc.A": "Pod Failed", "dc.B": "Pod Succeeded"})
}

// Rule 1.8 [run]: a Retry node's outbound node is its last child, its exit
// node when it has one, so the next task hangs under the exit node; the DAG
// walk goes through the attempts and the exit node.
func TestDAGRetryWithExitHandler(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: dr}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: A, template: flaky, onExit: ok}
      - {name: B, template: ok, depends: A}
  - name: flaky
    retryStrategy: {limit: 1}
    container: {image: busybox, command: [run]}
  - name: ok
    container: {image: busybox, command: [echo, ok]}
`)
	n := 0
	d.respond = func(_ *driver, l Launch) *stepEnd {
		if l.Template.Name == "flaky" {
			n++
			if n == 1 {
				return &stepEnd{phase: v1alpha1.NodeFailed, exitCode: 1}
			}
		}
		return nil
	}
	d.run()
	d.expectExactly(v1alpha1.WorkflowSucceeded, "", map[string]string{
		"dr":          "DAG Succeeded",
		"dr.A":        "Retry Succeeded",
		"dr.A(0)":     "Pod Failed",
		"dr.A(1)":     "Pod Succeeded",
		"dr.A.onExit": "Pod Succeeded",
		"dr.B":        "Pod Succeeded",
	})
	eq(t, "A children", d.children("dr.A"), []string{"dr.A(0)", "dr.A(1)", "dr.A.onExit"})
	eq(t, "B under the exit node", d.children("dr.A.onExit"), []string{"dr.B"})
	eq(t, "outbound", d.outbound("dr"), []string{"dr.B"})
}
