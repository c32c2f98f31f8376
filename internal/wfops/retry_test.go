package wfops

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const stepsFailed = `
metadata:
  name: st
  labels: {workflows.argoproj.io/phase: Failed, workflows.argoproj.io/completed: "true", team: a}
  annotations: {braid.dev/retry-generation: "1"}
spec:
  entrypoint: main
  shutdown: Stop
  activeDeadlineSeconds: 0
status:
  phase: Failed
  message: "child 'x' failed"
  startedAt: "2026-11-30T10:00:00Z"
  finishedAt: "2026-11-30T11:00:00Z"
  conditions: [{type: Completed, status: "True"}]
  outputs:
    parameters:
    - {name: fromC, value: old}
    - {name: fromD, value: kept}
  nodes:
    st: {type: Steps, phase: Failed, message: "child 'x' failed", templateName: main, children: ["st[0]"], outboundNodes: ["st[1].c", "st[1].d"]}
    st[0]: {type: StepGroup, phase: Succeeded, boundaryID: st, children: ["st[0].a", "st[0].b"]}
    st[0].a: {phase: Succeeded, boundaryID: st, children: ["st[1]"]}
    st[0].b: {phase: Succeeded, boundaryID: st, children: ["st[1]"]}
    st[1]: {type: StepGroup, phase: Failed, message: "child 'x' failed", boundaryID: st, children: ["st[1].c", "st[1].d"]}
    st[1].c:
      phase: Failed
      boundaryID: st
      outputs: {parameters: [{name: p, value: old, globalName: fromC}]}
    st[1].d:
      phase: Succeeded
      boundaryID: st
      outputs: {parameters: [{name: p, value: kept, globalName: fromD}]}
    st.onExit: {phase: Succeeded, nodeFlag: {hooked: true}}
`

const dagFailed = `
metadata: {name: dg}
spec: {entrypoint: main}
status:
  phase: Failed
  nodes:
    dg: {type: DAG, phase: Failed, templateName: main, children: [dg.A], outboundNodes: [dg.D, dg.E, dg.G]}
    dg.A: {phase: Succeeded, boundaryID: dg, children: [dg.B, dg.C, dg.F]}
    dg.B: {phase: Failed, boundaryID: dg, children: [dg.D, dg.E]}
    dg.C: {phase: Succeeded, boundaryID: dg, children: [dg.D]}
    dg.F: {type: TaskGroup, phase: Succeeded, boundaryID: dg, children: ["dg.F(0:1)", "dg.F(1:2)"]}
    dg.F(0:1): {phase: Succeeded, boundaryID: dg, children: [dg.G]}
    dg.F(1:2): {phase: Succeeded, boundaryID: dg, children: [dg.G]}
    dg.D: {type: Skipped, phase: Omitted, boundaryID: dg}
    dg.E: {phase: Succeeded, boundaryID: dg}
    dg.G: {phase: Succeeded, boundaryID: dg}
`

const retryFailed = `
metadata: {name: rt}
spec: {entrypoint: main}
status:
  phase: Failed
  nodes:
    rt: {type: Steps, phase: Failed, children: ["rt[0]"]}
    rt[0]: {type: StepGroup, phase: Failed, boundaryID: rt, children: ["rt[0].r", "rt[0].x"]}
    rt[0].r: {type: Retry, phase: Failed, message: No more retries left, boundaryID: rt, children: ["rt[0].r(0)", "rt[0].r(1)"]}
    rt[0].r(0): {phase: Failed, boundaryID: rt, nodeFlag: {retried: true}}
    rt[0].r(1): {phase: Failed, boundaryID: rt, nodeFlag: {retried: true}}
    rt[0].x: {type: Retry, phase: Succeeded, boundaryID: rt, children: ["rt[0].x(0)", "rt[0].x(1)"]}
    rt[0].x(0): {phase: Failed, boundaryID: rt, nodeFlag: {retried: true}}
    rt[0].x(1): {phase: Succeeded, boundaryID: rt, nodeFlag: {retried: true}}
`

const nestedWithHooks = `
metadata: {name: ns}
spec: {entrypoint: main}
status:
  phase: Failed
  nodes:
    ns: {type: Steps, phase: Failed, children: ["ns[0]", ns.hooks.h]}
    ns[0]: {type: StepGroup, phase: Failed, boundaryID: ns, children: ["ns[0].s"]}
    ns[0].s: {type: Steps, phase: Failed, boundaryID: ns, children: ["ns[0].s[0]", "ns[0].s.onExit"]}
    ns[0].s[0]: {type: StepGroup, phase: Failed, boundaryID: "ns[0].s", children: ["ns[0].s[0].p"]}
    ns[0].s[0].p: {phase: Failed, boundaryID: "ns[0].s"}
    ns[0].s.onExit: {phase: Succeeded, boundaryID: ns, nodeFlag: {hooked: true}}
    ns.hooks.h: {phase: Succeeded, nodeFlag: {hooked: true}}
    ns.onExit: {type: Steps, phase: Failed, nodeFlag: {hooked: true}, children: ["ns.onExit[0]"]}
    ns.onExit[0]: {type: StepGroup, phase: Failed, boundaryID: ns.onExit, children: ["ns.onExit[0].e"]}
    ns.onExit[0].e: {phase: Failed, boundaryID: ns.onExit}
`

const placeholdersFailed = `
metadata: {name: ep}
spec: {entrypoint: main}
status:
  phase: Failed
  nodes:
    ep: {type: Steps, phase: Failed, children: ["ep[0]"]}
    ep[0]: {type: StepGroup, phase: Failed, boundaryID: ep, children: ["ep[0].w", "ep[0].bad", "ep[0].ok"]}
    ep[0].w: {type: Suspend, phase: Failed, message: "Stopped with strategy 'Stop'", boundaryID: ep}
    ep[0].bad: {type: Skipped, phase: Error, message: "bad when", boundaryID: ep, nodeFlag: {}}
    ep[0].ok: {type: Skipped, phase: Skipped, message: "when 'a == b' evaluated false", boundaryID: ep, nodeFlag: {}}
`

// dagSucceeded has a DAG A -> B -> C -> E(C.Failed, Omitted) and D alone.
const dagSucceeded = `
metadata: {name: sel}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: x, value: "1"}]
  templates:
  - name: main
    dag:
      tasks:
      - {name: A, template: t}
      - {name: B, template: t, depends: A}
      - {name: C, template: t, dependencies: [B]}
      - {name: D, template: t}
      - {name: E, template: t, depends: C.Failed}
  - {name: t, container: {image: alpine}}
status:
  phase: Succeeded
  nodes:
    sel: {type: DAG, phase: Succeeded, templateName: main, children: [sel.A, sel.D], outboundNodes: [sel.D, sel.E]}
    sel.A: {phase: Succeeded, boundaryID: sel, templateName: t, children: [sel.B], inputs: {parameters: [{name: x, value: "1"}]}}
    sel.B: {phase: Succeeded, boundaryID: sel, templateName: t, children: [sel.C], inputs: {parameters: [{name: x, value: "2"}]}}
    sel.C: {phase: Succeeded, boundaryID: sel, templateName: t, children: [sel.E]}
    sel.D: {phase: Succeeded, boundaryID: sel, templateName: t}
    sel.E: {type: Skipped, phase: Omitted, boundaryID: sel, templateName: t}
`

func TestRetryTree(t *testing.T) {
	tests := []struct {
		name    string
		wf      string
		opts    RetryOptions
		deleted []string
		tree    []string
	}{{
		name:    "steps: the failed step goes, its group and the root reopen, the rest stays",
		wf:      stepsFailed,
		deleted: []string{"st.onExit", "st[1].c"},
		tree: []string{
			"st Running [st[0]]",
			"st[0] Succeeded [st[0].a st[0].b]",
			"st[0].a Succeeded [st[1]]",
			"st[0].b Succeeded [st[1]]",
			"st[1] Running [st[1].d]",
			"st[1].d Succeeded",
		},
	}, {
		name:    "dag: the failed task goes with the tasks hung below it; independent branches stay",
		wf:      dagFailed,
		deleted: []string{"dg.B", "dg.D", "dg.E"},
		tree: []string{
			"dg Running [dg.A]",
			"dg.A Succeeded [dg.C dg.F]",
			"dg.C Succeeded",
			"dg.F Succeeded [dg.F(0:1) dg.F(1:2)]",
			"dg.F(0:1) Succeeded [dg.G]",
			"dg.F(1:2) Succeeded [dg.G]",
			"dg.G Succeeded",
		},
	}, {
		name:    "a failed Retry node goes as a whole; a Retry that succeeded keeps its failed attempt",
		wf:      retryFailed,
		deleted: []string{"rt[0].r", "rt[0].r(0)", "rt[0].r(1)"},
		tree: []string{
			"rt Running [rt[0]]",
			"rt[0] Running [rt[0].x]",
			"rt[0].x Succeeded [rt[0].x(0) rt[0].x(1)]",
			"rt[0].x(0) Failed",
			"rt[0].x(1) Succeeded",
		},
	}, {
		name: "exit handlers and hooks of reopened nodes go, and the workflow's",
		wf:   nestedWithHooks,
		deleted: []string{"ns.hooks.h", "ns.onExit", "ns.onExit[0]", "ns.onExit[0].e",
			"ns[0].s.onExit", "ns[0].s[0].p"},
		tree: []string{
			"ns Running [ns[0]]",
			"ns[0] Running [ns[0].s]",
			"ns[0].s Running [ns[0].s[0]]",
			"ns[0].s[0] Running",
		},
	}, {
		name:    "failed suspend and error placeholder go; a when-skipped sibling stays",
		wf:      placeholdersFailed,
		deleted: []string{"ep[0].bad", "ep[0].w"},
		tree: []string{
			"ep Running [ep[0]]",
			"ep[0] Running [ep[0].ok]",
			"ep[0].ok Skipped",
		},
	}, {
		name:    "restart successful: the selected task, its dependents, and what hangs below them",
		wf:      dagSucceeded,
		opts:    RetryOptions{RestartSuccessful: true, NodeFieldSelector: "inputs.parameters.x.value=2"},
		deleted: []string{"sel.B", "sel.C", "sel.E"},
		tree: []string{
			"sel Running [sel.A sel.D]",
			"sel.A Succeeded",
			"sel.D Succeeded",
		},
	}, {
		name:    "a selector without restartSuccessful changes nothing on a failed workflow",
		wf:      dagFailed,
		opts:    RetryOptions{NodeFieldSelector: "name=dg.C"},
		deleted: []string{"dg.B", "dg.D", "dg.E"},
		tree: []string{
			"dg Running [dg.A]",
			"dg.A Succeeded [dg.C dg.F]",
			"dg.C Succeeded",
			"dg.F Succeeded [dg.F(0:1) dg.F(1:2)]",
			"dg.F(0:1) Succeeded [dg.G]",
			"dg.F(1:2) Succeeded [dg.G]",
			"dg.G Succeeded",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := mustWorkflow(t, tt.wf)
			before := in.DeepCopy()
			out, deleted, err := Retry(in, tt.opts, testNow)
			checkErr(t, err, nil, "")
			if d := cmp.Diff(tt.deleted, names(in, deleted)); d != "" {
				t.Errorf("deleted (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.tree, treeLines(out)); d != "" {
				t.Errorf("tree (-want +got):\n%s", d)
			}
			if d := cmp.Diff(before, in); d != "" {
				t.Errorf("input modified:\n%s", d)
			}
			checkReopened(t, in, out)
		})
	}
}

// checkReopened checks that Running nodes were reset and the others kept.
func checkReopened(t *testing.T, in, out *v1alpha1.Workflow) {
	t.Helper()
	for id, n := range out.Status.Nodes {
		if n.Phase != v1alpha1.NodeRunning {
			if d := cmp.Diff(in.Status.Nodes[id].FinishedAt, n.FinishedAt); d != "" {
				t.Errorf("kept node %s changed finishedAt", n.Name)
			}
			continue
		}
		if !n.FinishedAt.IsZero() || n.Message != "" || !n.StartedAt.Time.Equal(testNow) {
			t.Errorf("reopened node %s: finishedAt %v message %q startedAt %v", n.Name, n.FinishedAt, n.Message, n.StartedAt)
		}
	}
}

func TestRetryWorkflowFields(t *testing.T) {
	in := mustWorkflow(t, stepsFailed)
	out, _, err := Retry(in, RetryOptions{}, testNow)
	checkErr(t, err, nil, "")
	st := out.Status
	if st.Phase != v1alpha1.WorkflowRunning || st.Message != "" || !st.FinishedAt.IsZero() || !st.StartedAt.Time.Equal(testNow) {
		t.Errorf("status: phase %s message %q finishedAt %v startedAt %v", st.Phase, st.Message, st.FinishedAt, st.StartedAt)
	}
	wantLabels := map[string]string{"workflows.argoproj.io/phase": "Running", "team": "a"}
	if d := cmp.Diff(wantLabels, out.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	if g := out.Annotations[AnnotationRetryGeneration]; g != "2" {
		t.Errorf("retry generation %q, want 2", g)
	}
	if out.Spec.Shutdown != "" || out.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("shutdown %q deadline %v not cleared", out.Spec.Shutdown, out.Spec.ActiveDeadlineSeconds)
	}
	if c := st.Conditions[0]; c.Status != "False" {
		t.Errorf("Completed condition %v", c)
	}
	wantOutputs := []v1alpha1.Parameter{{Name: "fromD", Value: v1alpha1.AnyStringPtr("kept")}}
	if d := cmp.Diff(wantOutputs, st.Outputs.Parameters); d != "" {
		t.Errorf("global outputs (-want +got):\n%s", d)
	}
	if root := byName(t, out, "st"); len(root.OutboundNodes) != 1 || root.OutboundNodes[0] != out.NodeID("st[1].d") {
		t.Errorf("outbound nodes %v keep a deleted node", root.OutboundNodes)
	}
	again, _, err := Retry(mustWorkflow(t, dagFailed), RetryOptions{}, testNow)
	checkErr(t, err, nil, "")
	if g := again.Annotations[AnnotationRetryGeneration]; g != "1" {
		t.Errorf("first retry generation %q, want 1", g)
	}
}

func TestRetryParameters(t *testing.T) {
	tests := []struct {
		name   string
		params []string
		want   string
		err    error
		text   string
	}{
		{name: "override", params: []string{"x=42"}, want: "42"},
		{name: "value with =", params: []string{"x=a=b"}, want: "a=b"},
		{name: "undeclared", params: []string{"y=1"}, err: ErrBadRequest, text: `parameter "y" is not declared in spec.arguments.parameters (declared: x)`},
		{name: "malformed", params: []string{"x"}, err: ErrBadRequest, text: "expected parameter of the form: NAME=VALUE. Received: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := mustWorkflow(t, dagSucceeded)
			in.Status.Phase = v1alpha1.WorkflowFailed
			out, _, err := Retry(in, RetryOptions{Parameters: tt.params}, testNow)
			checkErr(t, err, tt.err, tt.text)
			if err != nil {
				return
			}
			if got := out.Spec.Arguments.Parameters[0].Value.String(); got != tt.want {
				t.Errorf("x = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRetryRefused(t *testing.T) {
	tests := []struct {
		name  string
		wf    string
		phase v1alpha1.WorkflowPhase
		opts  RetryOptions
		err   error
		text  string
	}{
		{name: "succeeded", wf: dagSucceeded, err: ErrState, text: "workflow must be Failed/Error to retry"},
		{name: "succeeded, selector without restartSuccessful", wf: dagSucceeded,
			opts: RetryOptions{NodeFieldSelector: "name=sel.B"}, err: ErrState, text: "set restartSuccessful"},
		{name: "running", wf: dagFailed, phase: v1alpha1.WorkflowRunning, err: ErrState, text: "it is Running"},
		{name: "selector matches nothing", wf: dagSucceeded,
			opts: RetryOptions{RestartSuccessful: true, NodeFieldSelector: "name=nope"}, err: ErrBadRequest, text: `no node matches node field selector "name=nope"`},
		{name: "unknown selector field", wf: dagFailed,
			opts: RetryOptions{RestartSuccessful: true, NodeFieldSelector: "foo=bar"}, err: ErrBadRequest, text: `unsupported field "foo"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := mustWorkflow(t, tt.wf)
			if tt.phase != "" {
				in.Status.Phase = tt.phase
			}
			_, _, err := Retry(in, tt.opts, testNow)
			checkErr(t, err, tt.err, tt.text)
		})
	}
	t.Run("a node still running", func(t *testing.T) {
		in := mustWorkflow(t, dagFailed)
		n := in.Status.Nodes[in.NodeID("dg.G")]
		n.Phase = v1alpha1.NodeRunning
		in.Status.Nodes[n.ID] = n
		_, _, err := Retry(in, RetryOptions{}, testNow)
		checkErr(t, err, ErrState, "workflow cannot be retried with node dg.G in Running phase")
	})
}
