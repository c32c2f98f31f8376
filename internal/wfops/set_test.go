package wfops

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestSet(t *testing.T) {
	str := v1alpha1.AnyStringPtr
	supplied := func(def *v1alpha1.AnyString) *v1alpha1.ValueFrom {
		return &v1alpha1.ValueFrom{Supplied: &v1alpha1.SuppliedValueFrom{}, Default: def}
	}
	tests := []struct {
		name    string
		opts    SetOptions
		phase   v1alpha1.NodePhase
		msg     string
		outputs []v1alpha1.Parameter
		err     error
		text    string
	}{{
		name:  "phase and message",
		opts:  SetOptions{NodeFieldSelector: "displayName=approve", Phase: "Failed", Message: "no"},
		phase: v1alpha1.NodeFailed, msg: "no",
		outputs: []v1alpha1.Parameter{{Name: "choice", ValueFrom: supplied(str("yes"))}},
	}, {
		name: "outputs recorded on the node and declared by the template only",
		opts: SetOptions{NodeFieldSelector: "displayName=approve",
			OutputParameters: map[string]string{"choice": "no", "note": "why"}},
		phase: v1alpha1.NodeRunning,
		outputs: []v1alpha1.Parameter{{Name: "choice", Value: str("no")},
			{Name: "note", Value: str("why"), GlobalName: "gnote"}},
	}, {
		name:    "succeeded fills the remaining defaults",
		opts:    SetOptions{NodeFieldSelector: "displayName=approve", Phase: "Succeeded"},
		phase:   v1alpha1.NodeSucceeded,
		outputs: []v1alpha1.Parameter{{Name: "choice", Value: str("yes")}},
	}, {
		name: "undeclared output",
		opts: SetOptions{NodeFieldSelector: "displayName=approve", OutputParameters: map[string]string{"x": "1"}},
		err:  ErrBadRequest, text: "node sp[0].approve is not expecting output parameter 'x'",
	}, {
		name: "declared but not supplied",
		opts: SetOptions{NodeFieldSelector: "displayName=approve", OutputParameters: map[string]string{"computed": "1"}},
		err:  ErrBadRequest, text: "is not expecting output parameter 'computed'",
	}, {
		name: "template without outputs",
		opts: SetOptions{NodeFieldSelector: "displayName=wait", OutputParameters: map[string]string{"choice": "1"}},
		err:  ErrBadRequest, text: "node sp[0].wait is not expecting output parameter 'choice'",
	}, {
		name: "bad phase",
		opts: SetOptions{NodeFieldSelector: "displayName=approve", Phase: "Running"},
		err:  ErrBadRequest, text: `cannot set a node's phase to "Running": the phase must be Succeeded, Failed or Error`,
	}, {
		name: "no selector",
		opts: SetOptions{Phase: "Succeeded"},
		err:  ErrBadRequest, text: "a node field selector is required",
	}, {
		name: "nothing to set",
		opts: SetOptions{NodeFieldSelector: "displayName=approve"},
		err:  ErrBadRequest, text: "nothing to set",
	}, {
		name: "nothing matched",
		opts: SetOptions{NodeFieldSelector: "displayName=done", Phase: "Succeeded"},
		err:  ErrBadRequest, text: `no running suspend node matches node field selector "displayName=done"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := mustWorkflow(t, suspended)
			before := in.DeepCopy()
			out, err := Set(in, tt.opts, testNow)
			checkErr(t, err, tt.err, tt.text)
			if err != nil {
				return
			}
			n := byName(t, out, "sp[0].approve")
			if n.Phase != tt.phase || n.Message != tt.msg {
				t.Errorf("phase %s message %q, want %s %q", n.Phase, n.Message, tt.phase, tt.msg)
			}
			if final := n.Phase.Fulfilled(); final != n.FinishedAt.Time.Equal(testNow) {
				t.Errorf("finishedAt %v for phase %s", n.FinishedAt, n.Phase)
			}
			if d := cmp.Diff(tt.outputs, n.Outputs.Parameters); d != "" {
				t.Errorf("outputs (-want +got):\n%s", d)
			}
			if d := cmp.Diff(before, in); d != "" {
				t.Errorf("input modified:\n%s", d)
			}
		})
	}
}

func TestSetTwice(t *testing.T) {
	in := mustWorkflow(t, suspended)
	opts := SetOptions{NodeFieldSelector: "displayName=approve", OutputParameters: map[string]string{"choice": "no"}}
	once, err := Set(in, opts, testNow)
	checkErr(t, err, nil, "")
	_, err = Set(once, opts, testNow)
	checkErr(t, err, ErrState, "cannot set output parameter 'choice' of node sp[0].approve: it does not use valueFrom.supplied or it was already set")
	in.Status.Phase = v1alpha1.WorkflowFailed
	_, err = Set(in, opts, testNow)
	checkErr(t, err, ErrState, "cannot set nodes of a completed workflow")
}
