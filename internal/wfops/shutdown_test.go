package wfops

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestStop(t *testing.T) {
	tests := []struct {
		name, sel, msg string
		shutdown       v1alpha1.ShutdownStrategy
		failed         []string
		wantMsg        string
		err            error
		text           string
	}{
		{name: "whole workflow", shutdown: v1alpha1.ShutdownStop, failed: []string{}},
		{name: "one suspend node, default message", sel: "templateName=wait",
			failed: []string{"sp[0].wait"}, wantMsg: "Stopped with strategy 'Stop'"},
		{name: "one suspend node, message", sel: "displayName=approve", msg: "rejected",
			failed: []string{"sp[0].approve"}, wantMsg: "rejected"},
		{name: "a running pod is not a target", sel: "name=sp[0].pod", err: ErrBadRequest, text: "no running suspend node matches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := mustWorkflow(t, suspended)
			before := in.DeepCopy()
			out, err := Stop(in, tt.sel, tt.msg, testNow)
			checkErr(t, err, tt.err, tt.text)
			if err != nil {
				return
			}
			if out.Spec.Shutdown != tt.shutdown {
				t.Errorf("shutdown %q, want %q", out.Spec.Shutdown, tt.shutdown)
			}
			failed := changedTo(before, out, v1alpha1.NodeFailed)
			if d := cmp.Diff(tt.failed, failed); d != "" {
				t.Errorf("failed nodes (-want +got):\n%s", d)
			}
			for _, name := range failed {
				if m := byName(t, out, name).Message; m != tt.wantMsg {
					t.Errorf("%s message %q, want %q", name, m, tt.wantMsg)
				}
			}
			if d := cmp.Diff(before, in); d != "" {
				t.Errorf("input modified:\n%s", d)
			}
		})
	}
}

func TestTerminate(t *testing.T) {
	in := mustWorkflow(t, suspended)
	out, err := Terminate(in)
	checkErr(t, err, nil, "")
	if out.Spec.Shutdown != v1alpha1.ShutdownTerminate || in.Spec.Shutdown != "" {
		t.Errorf("shutdown: out %q in %q", out.Spec.Shutdown, in.Spec.Shutdown)
	}
}

func TestShutdownCompleted(t *testing.T) {
	in := mustWorkflow(t, suspended)
	in.Status.Phase = v1alpha1.WorkflowSucceeded
	_, err := Stop(in, "", "", testNow)
	checkErr(t, err, ErrState, "cannot shutdown a completed workflow")
	_, err = Stop(in, "templateName=wait", "", testNow)
	checkErr(t, err, ErrState, "cannot shutdown a completed workflow")
	_, err = Terminate(in)
	checkErr(t, err, ErrState, "cannot shutdown a completed workflow")
}
