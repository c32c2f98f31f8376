package wfops

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// suspended has two Running suspend nodes (one with supplied outputs), a
// finished suspend node and a running pod.
const suspended = `
metadata: {name: sp}
spec:
  entrypoint: main
  suspend: true
  templates:
  - name: approve
    suspend: {}
    outputs:
      parameters:
      - {name: choice, valueFrom: {supplied: {}, default: "yes"}}
      - {name: note, globalName: gnote, valueFrom: {supplied: {}}}
      - {name: computed, valueFrom: {parameter: "{{inputs.parameters.x}}"}}
  - {name: wait, suspend: {}}
status:
  phase: Running
  nodes:
    sp: {type: Steps, phase: Running, children: ["sp[0]"]}
    sp[0]: {type: StepGroup, phase: Running, boundaryID: sp, children: ["sp[0].approve", "sp[0].wait", "sp[0].done", "sp[0].pod"]}
    sp[0].approve:
      type: Suspend
      phase: Running
      boundaryID: sp
      templateName: approve
      outputs:
        parameters:
        - {name: choice, valueFrom: {supplied: {}, default: "yes"}}
    sp[0].wait: {type: Suspend, phase: Running, boundaryID: sp, templateName: wait}
    sp[0].done: {type: Suspend, phase: Succeeded, boundaryID: sp, templateName: wait}
    sp[0].pod: {phase: Running, boundaryID: sp, templateName: wait}
`

func TestSuspend(t *testing.T) {
	in := mustWorkflow(t, suspended)
	in.Spec.Suspend = nil
	out, err := Suspend(in)
	checkErr(t, err, nil, "")
	if out.Spec.Suspend == nil || !*out.Spec.Suspend || in.Spec.Suspend != nil {
		t.Errorf("suspend: out %v in %v", out.Spec.Suspend, in.Spec.Suspend)
	}
	for _, phase := range []v1alpha1.WorkflowPhase{v1alpha1.WorkflowSucceeded, v1alpha1.WorkflowFailed, v1alpha1.WorkflowError} {
		in.Status.Phase = phase
		_, err := Suspend(in)
		checkErr(t, err, ErrState, "cannot suspend completed workflows")
	}
}

func TestResume(t *testing.T) {
	tests := []struct {
		name    string
		sel     string
		suspend bool // spec.suspend afterwards
		done    []string
		err     error
		text    string
	}{
		{name: "all", done: []string{"sp[0].approve", "sp[0].wait"}},
		{name: "selected", sel: "displayName=wait", suspend: true, done: []string{"sp[0].wait"}},
		{name: "a finished or non-suspend node is not a target", sel: "name=sp[0].pod",
			err: ErrBadRequest, text: `no running suspend node matches node field selector "name=sp[0].pod"`},
		{name: "bad selector", sel: "foo=1", err: ErrBadRequest, text: `unsupported field "foo"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := mustWorkflow(t, suspended)
			before := in.DeepCopy()
			out, err := Resume(in, tt.sel, testNow)
			checkErr(t, err, tt.err, tt.text)
			if err != nil {
				return
			}
			if got := out.Spec.Suspend != nil && *out.Spec.Suspend; got != tt.suspend {
				t.Errorf("spec.suspend = %v, want %v", got, tt.suspend)
			}
			if d := cmp.Diff(tt.done, changedTo(before, out, v1alpha1.NodeSucceeded)); d != "" {
				t.Errorf("resumed nodes (-want +got):\n%s", d)
			}
			if d := cmp.Diff(before, in); d != "" {
				t.Errorf("input modified:\n%s", d)
			}
		})
	}
}

func TestResumeOutputs(t *testing.T) {
	out, err := Resume(mustWorkflow(t, suspended), "", testNow)
	checkErr(t, err, nil, "")
	got := byName(t, out, "sp[0].approve").Outputs.Parameters
	want := []v1alpha1.Parameter{{Name: "choice", Value: v1alpha1.AnyStringPtr("yes")}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("outputs (-want +got):\n%s", d)
	}
	in := mustWorkflow(t, suspended)
	n := in.Status.Nodes[in.NodeID("sp[0].approve")]
	n.Outputs.Parameters[0].ValueFrom.Default = nil
	in.Status.Nodes[n.ID] = n
	_, err = Resume(in, "", testNow)
	checkErr(t, err, ErrState, "raw output parameter 'choice' has not been set and does not have a default value")
}

func TestResumeCompleted(t *testing.T) {
	in := mustWorkflow(t, suspended)
	in.Labels = map[string]string{"workflows.argoproj.io/completed": "true"}
	_, err := Resume(in, "", testNow)
	checkErr(t, err, ErrState, "cannot resume completed workflows")
}

// changedTo lists the nodes that reached phase in out, with finishedAt now.
func changedTo(in, out *v1alpha1.Workflow, phase v1alpha1.NodePhase) []string {
	got := []string{}
	for id, n := range out.Status.Nodes {
		if n.Phase == phase && in.Status.Nodes[id].Phase != phase && n.FinishedAt.Time.Equal(testNow) {
			got = append(got, n.Name)
		}
	}
	return sortStrings(got)
}
