package wfops

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// nestedDownstream: root DAG "nd" with tasks A, S (a steps template, depends
// on A), T (depends S.Succeeded || A), U (dependencies [T]), V alone.
// Inside S: three groups; the children links after S are left out on
// purpose, so only the spec says what comes after.
const nestedDownstream = `
metadata: {name: nd}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: A, template: t}
      - {name: S, template: sub, depends: A}
      - {name: T, template: t, depends: "(S.Succeeded || A.Failed) && !V"}
      - {name: U, template: t, dependencies: [T]}
      - {name: V, template: t}
  - name: sub
    steps:
    - [{name: a, template: t}]
    - [{name: b, template: t}]
    - [{name: c, template: t}]
  - {name: t, container: {image: alpine}}
status:
  phase: Succeeded
  nodes:
    nd: {type: DAG, phase: Succeeded, templateName: main, children: [nd.A, nd.V]}
    nd.A: {phase: Succeeded, boundaryID: nd, templateName: t, children: [nd.S]}
    nd.S: {type: Steps, phase: Succeeded, boundaryID: nd, templateName: sub, children: ["nd.S[0]"]}
    nd.S[0]: {type: StepGroup, phase: Succeeded, boundaryID: nd.S, children: ["nd.S[0].a"]}
    nd.S[0].a: {phase: Succeeded, boundaryID: nd.S, templateName: t}
    nd.S[1]: {type: StepGroup, phase: Succeeded, boundaryID: nd.S, children: ["nd.S[1].b"]}
    nd.S[1].b: {phase: Succeeded, boundaryID: nd.S, templateName: t, children: ["nd.S[1].b.onExit"]}
    nd.S[1].b.onExit: {phase: Succeeded, boundaryID: nd.S, nodeFlag: {hooked: true}}
    nd.S[2]: {type: StepGroup, phase: Succeeded, boundaryID: nd.S, children: ["nd.S[2].c"]}
    nd.S[2].c: {phase: Succeeded, boundaryID: nd.S, templateName: t}
    nd.T: {type: Retry, phase: Succeeded, boundaryID: nd, templateName: t, children: ["nd.T(0)"]}
    nd.T(0): {phase: Succeeded, boundaryID: nd, templateName: t}
    nd.U: {type: TaskGroup, phase: Succeeded, boundaryID: nd, templateName: t, children: ["nd.U(0:x)"]}
    nd.U(0:x): {phase: Succeeded, boundaryID: nd, templateName: t}
    nd.V: {phase: Succeeded, boundaryID: nd, templateName: t}
`

func TestDownstream(t *testing.T) {
	tests := []struct {
		name string
		from []string
		want []string
	}{
		{name: "a task: its dependents, their iterations and attempts, transitively",
			from: []string{"nd.S"},
			want: []string{"nd.T", "nd.T(0)", "nd.U", "nd.U(0:x)"}},
		{name: "the first task: everything depending on it",
			from: []string{"nd.A"},
			want: []string{"nd.S", "nd.T", "nd.T(0)", "nd.U", "nd.U(0:x)"}},
		{name: "a step: the later groups of its steps, then the dependents of the steps node",
			from: []string{"nd.S[1].b"},
			want: []string{"nd.S[2]", "nd.S[2].c", "nd.T", "nd.T(0)", "nd.U", "nd.U(0:x)"}},
		{name: "a step group: the later groups and their hooks",
			from: []string{"nd.S[0]"},
			want: []string{"nd.S[1]", "nd.S[1].b", "nd.S[1].b.onExit", "nd.S[2]", "nd.S[2].c", "nd.T", "nd.T(0)", "nd.U", "nd.U(0:x)"}},
		{name: "a retry attempt counts as its task",
			from: []string{"nd.T(0)"},
			want: []string{"nd.U", "nd.U(0:x)"}},
		{name: "a task nothing depends on, and the root",
			from: []string{"nd.U", "nd"},
			want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wf := mustWorkflow(t, nestedDownstream)
			got := names(wf, Downstream(wf, ids(wf, tt.from...)))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestDependentTasks(t *testing.T) {
	tasks := []v1alpha1.DAGTask{
		{Name: "a"},
		{Name: "b-1", Depends: "a.Succeeded"},
		{Name: "c", Dependencies: []string{"b-1"}},
		{Name: "d", Depends: "!c && e_2.AnySucceeded"},
		{Name: "e_2"},
		{Name: "ab", Depends: "e_2"},
	}
	tests := []struct {
		task string
		want map[string]bool
	}{
		{task: "a", want: map[string]bool{"b-1": true, "c": true, "d": true}},
		{task: "e_2", want: map[string]bool{"d": true, "ab": true}},
		{task: "d", want: map[string]bool{}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, DependentTasks(tasks, tt.task)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.task, d)
		}
	}
}

// TestRetryFromDeepNode restarts a step inside a steps node that is a DAG
// task: the later groups and the DAG's downstream run again even though no
// children link reaches them.
func TestRetryFromDeepNode(t *testing.T) {
	in := mustWorkflow(t, nestedDownstream)
	out, deleted, err := Retry(in, RetryOptions{RestartSuccessful: true, NodeFieldSelector: "name=nd.S[1].b"}, testNow)
	checkErr(t, err, nil, "")
	wantDeleted := []string{"nd.S[1].b", "nd.S[1].b.onExit", "nd.S[2]", "nd.S[2].c", "nd.T", "nd.T(0)", "nd.U", "nd.U(0:x)"}
	if d := cmp.Diff(wantDeleted, names(in, deleted)); d != "" {
		t.Errorf("deleted (-want +got):\n%s", d)
	}
	want := []string{
		"nd Running [nd.A nd.V]",
		"nd.A Succeeded [nd.S]",
		"nd.S Running [nd.S[0]]",
		"nd.S[0] Succeeded [nd.S[0].a]",
		"nd.S[0].a Succeeded",
		"nd.S[1] Running",
		"nd.V Succeeded",
	}
	if d := cmp.Diff(want, treeLines(out)); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
}
