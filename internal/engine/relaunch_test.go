package engine

import (
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// A Pod node that was persisted but never started (the caller crashed
// between persisting and starting it) is launched again when the snapshot
// lists it in Relaunch, and only then; a completed node never is.
func TestRelaunch(t *testing.T) {
	src := `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: rl}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: echo}
    - - {name: b, template: echo}
  - name: echo
    container: {image: alpine, command: [echo, hi]}
`
	d := load(t, src)
	res := d.reconcile()
	if len(res.Plan.Launch) != 1 {
		t.Fatalf("first pass launched %d steps, want 1", len(res.Plan.Launch))
	}
	a := res.Plan.Launch[0]

	cases := []struct {
		name     string
		relaunch map[string]bool
		results  map[string]StepResult
		want     []string // node names launched
	}{
		{name: "no relaunch: the pending node waits", want: nil},
		{name: "relaunch the never-started node", relaunch: map[string]bool{a.NodeID: true}, want: []string{"rl[0].a"}},
		{name: "a result beats a relaunch", relaunch: map[string]bool{a.NodeID: true},
			results: map[string]StepResult{a.NodeID: {Phase: v1alpha1.NodeSucceeded}}, want: []string{"rl[1].b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wf := d.wf.DeepCopy()
			out, err := checkedReconcile(t, Snapshot{Workflow: wf, Relaunch: tc.relaunch, Results: tc.results}, d.now)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range out.Plan.Launch {
				got = append(got, l.NodeName)
				if n := out.Status.Nodes[l.NodeID]; n.Phase != v1alpha1.NodePending {
					t.Errorf("%s launched in phase %s, want Pending", l.NodeName, n.Phase)
				}
			}
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Fatalf("launched %v, want %v", got, tc.want)
			}
		})
	}
}

// A relaunched DAG task keeps what its first launch had: result capture
// for a later task that reads it, and its retry attempt's name.
func TestRelaunchDAGKeepsLaunchContext(t *testing.T) {
	d := load(t, `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: rd}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: echo}
      - {name: b, template: echo, depends: a, arguments: {parameters: [{name: m, value: "{{tasks.a.outputs.result}}"}]}}
  - name: echo
    retryStrategy: {limit: 2}
    inputs: {parameters: [{name: m, default: x}]}
    container: {image: alpine, command: [echo, "{{inputs.parameters.m}}"]}
`)
	first := d.reconcile().Plan.Launch
	if len(first) != 1 || !first[0].IncludeResult {
		t.Fatalf("first launch %+v", first)
	}
	out, err := checkedReconcile(t, Snapshot{Workflow: d.wf.DeepCopy(), Relaunch: map[string]bool{first[0].NodeID: true}}, d.now)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Plan.Launch) != 1 {
		t.Fatalf("relaunched %d", len(out.Plan.Launch))
	}
	again := out.Plan.Launch[0]
	if again.NodeName != first[0].NodeName || again.PodName != first[0].PodName || !again.IncludeResult {
		t.Fatalf("relaunch %s pod %s result %v; first %s pod %s", again.NodeName, again.PodName, again.IncludeResult, first[0].NodeName, first[0].PodName)
	}
}
