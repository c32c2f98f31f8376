package wfops

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const toResubmit = `
metadata:
  name: dg
  namespace: ns1
  labels:
    team: a
    workflows.argoproj.io/phase: Failed
    workflows.argoproj.io/completed: "true"
    workflows.argoproj.io/workflow: dg
    workflows.argoproj.io/resubmitted-from-workflow: older
    braid.dev/x: "1"
  annotations: {note: keep, braid.dev/retry-generation: "3"}
spec:
  entrypoint: main
  shutdown: Terminate
  suspend: true
  arguments: {parameters: [{name: x, value: "1"}]}
status:
  phase: Failed
  message: boom
  nodes:
    dg: {type: DAG, phase: Failed, templateName: main, children: [dg.A], outboundNodes: [dg.B, dg.C]}
    dg.A: {phase: Succeeded, boundaryID: dg, children: [dg.B, dg.C]}
    dg.B: {phase: Failed, boundaryID: dg}
    dg.C: {phase: Succeeded, boundaryID: dg}
    dg.onExit: {phase: Succeeded, nodeFlag: {hooked: true}}
`

func TestResubmit(t *testing.T) {
	in := mustWorkflow(t, toResubmit)
	before := in.DeepCopy()
	out, err := Resubmit(in, ResubmitOptions{Parameters: []string{"x=2"}})
	checkErr(t, err, nil, "")
	want := metav1.ObjectMeta{
		GenerateName: "dg-",
		Namespace:    "ns1",
		Labels:       map[string]string{"team": "a", "workflows.argoproj.io/resubmitted-from-workflow": "dg"},
		Annotations:  map[string]string{"note": "keep"},
	}
	if d := cmp.Diff(want, out.ObjectMeta); d != "" {
		t.Errorf("metadata (-want +got):\n%s", d)
	}
	if out.Spec.Shutdown != "" || out.Spec.Suspend != nil || out.Spec.Arguments.Parameters[0].Value.String() != "2" {
		t.Errorf("spec: shutdown %q suspend %v x %v", out.Spec.Shutdown, out.Spec.Suspend, out.Spec.Arguments.Parameters[0].Value)
	}
	if d := cmp.Diff(v1alpha1.WorkflowStatus{}, out.Status); d != "" {
		t.Errorf("status not empty:\n%s", d)
	}
	if d := cmp.Diff(before, in); d != "" {
		t.Errorf("input modified:\n%s", d)
	}
	_, err = Resubmit(in, ResubmitOptions{Parameters: []string{"nope=1"}})
	checkErr(t, err, ErrBadRequest, `parameter "nope" is not declared`)
}

func TestResubmitMemoized(t *testing.T) {
	in := mustWorkflow(t, toResubmit)
	out, err := Resubmit(in, ResubmitOptions{Memoized: true})
	checkErr(t, err, nil, "")
	if out.Status.Phase != "" {
		t.Errorf("phase %q, want empty", out.Status.Phase)
	}
	out.Name = "dg-x7k2p"
	checkErr(t, RenameNodes(out, "dg"), nil, "")
	want := []string{
		"dg-x7k2p Running [dg-x7k2p.A]",
		"dg-x7k2p.A Succeeded [dg-x7k2p.C]",
		"dg-x7k2p.C Succeeded",
	}
	if d := cmp.Diff(want, treeLines(out)); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
	for id, n := range out.Status.Nodes {
		if id != n.ID || n.ID != v1alpha1.NodeID("dg-x7k2p", n.Name) {
			t.Errorf("node %s has ID %s under key %s", n.Name, n.ID, id)
		}
	}
	root, a := byName(t, out, "dg-x7k2p"), byName(t, out, "dg-x7k2p.A")
	if root.DisplayName != "dg-x7k2p" || a.DisplayName != "A" || a.BoundaryID != root.ID {
		t.Errorf("root displayName %q, A displayName %q boundary %q", root.DisplayName, a.DisplayName, a.BoundaryID)
	}
	if d := cmp.Diff([]string{out.NodeID("dg-x7k2p.C")}, root.OutboundNodes); d != "" {
		t.Errorf("outbound nodes (-want +got):\n%s", d)
	}
}

func TestResubmitMemoizedRefused(t *testing.T) {
	in := mustWorkflow(t, toResubmit)
	in.Status.Phase = v1alpha1.WorkflowSucceeded
	_, err := Resubmit(in, ResubmitOptions{Memoized: true})
	checkErr(t, err, ErrState, "workflow must be Failed/Error to resubmit in memoized mode")
	if _, err := Resubmit(in, ResubmitOptions{}); err != nil {
		t.Errorf("a plain resubmit of a Succeeded workflow: %v", err)
	}
	in = mustWorkflow(t, toResubmit)
	n := in.Status.Nodes[in.NodeID("dg.C")]
	n.Phase = v1alpha1.NodePending
	in.Status.Nodes[n.ID] = n
	_, err = Resubmit(in, ResubmitOptions{Memoized: true})
	checkErr(t, err, ErrState, "workflow cannot be resubmitted in memoized mode with node dg.C in Pending phase")
}

func TestRenameNodesErrors(t *testing.T) {
	wf := mustWorkflow(t, toResubmit)
	before := wf.DeepCopy()
	wf.Name = ""
	checkErr(t, RenameNodes(wf, "dg"), ErrBadRequest, "the workflow has no name yet")
	wf.Name = "new"
	checkErr(t, RenameNodes(wf, "other"), ErrBadRequest, `does not start with "other"`)
	wf.Name = before.Name
	if d := cmp.Diff(before, wf); d != "" {
		t.Errorf("workflow changed on error:\n%s", d)
	}
}
