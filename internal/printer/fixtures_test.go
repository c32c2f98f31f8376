package printer

import (
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// t0 is when every test workflow is created; times are offsets from it.
var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// at is t0 plus sec seconds.
func at(sec int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(sec) * time.Second)) }

// nowAt is a fixed clock for Options.Now, in UTC.
func nowAt(d time.Duration) time.Time { return t0.Add(d) }

// newWorkflow is a workflow created at t0 in namespace argo with v2 pod
// names and no status.
func newWorkflow(name string) *v1alpha1.Workflow {
	return &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Namespace:         "argo",
			CreationTimestamp: at(0),
			Annotations:       map[string]string{PodNameFormatAnnotation: PodNameV2},
		},
	}
}

// nd describes a node by names, which add turns into IDs.
type nd struct {
	name     string // full node name
	display  string // default: derived from name and boundary (rule 1.5)
	typ      v1alpha1.NodeType
	tmpl     string
	phase    v1alpha1.NodePhase
	boundary string // node name of the boundary node
	start    int    // seconds after t0
	end      int    // seconds after t0; -1 while unfinished
	children []string
	msg      string
	host     string
}

var boundaryPrefix = regexp.MustCompile(`^(\[\d+\])?\.`)

// add adds nodes to wf's status.
func add(wf *v1alpha1.Workflow, nodes ...nd) {
	if wf.Status.Nodes == nil {
		wf.Status.Nodes = v1alpha1.Nodes{}
	}
	for _, n := range nodes {
		st := v1alpha1.NodeStatus{
			ID:           wf.NodeID(n.name),
			Name:         n.name,
			DisplayName:  n.display,
			Type:         n.typ,
			TemplateName: n.tmpl,
			Phase:        n.phase,
			Message:      n.msg,
			StartedAt:    at(n.start),
			HostNodeName: n.host,
		}
		if st.DisplayName == "" {
			st.DisplayName = n.name
			if n.boundary != "" {
				st.DisplayName = boundaryPrefix.ReplaceAllString(strings.TrimPrefix(n.name, n.boundary), "")
			}
		}
		if n.boundary != "" {
			st.BoundaryID = wf.NodeID(n.boundary)
		}
		if n.end >= 0 {
			st.FinishedAt = at(n.end)
		}
		for _, c := range n.children {
			st.Children = append(st.Children, wf.NodeID(c))
		}
		wf.Status.Nodes[st.ID] = st
	}
}

// node returns a pointer to the stored node named name, for adjustments.
func node(wf *v1alpha1.Workflow, name string) *v1alpha1.NodeStatus {
	st := wf.Status.Nodes[wf.NodeID(name)]
	return &st
}

// set stores a node changed through node().
func set(wf *v1alpha1.Workflow, st *v1alpha1.NodeStatus) { wf.Status.Nodes[st.ID] = *st }

func params(kv ...string) []v1alpha1.Parameter {
	var ps []v1alpha1.Parameter
	for i := 0; i+1 < len(kv); i += 2 {
		ps = append(ps, v1alpha1.Parameter{Name: kv[i], Value: v1alpha1.AnyStringPtr(kv[i+1])})
	}
	return ps
}

// stepsFailed is the steps-xk9vq example of ARGO-API.md §5.2: main runs
// hello1 then hello2 (template print-message), and hello2 fails.
func stepsFailed() *v1alpha1.Workflow {
	wf := newWorkflow("steps-xk9vq")
	wf.Spec.Entrypoint = "main"
	wf.Spec.Arguments.Parameters = params("greeting", "hello")
	wf.Status.Phase = v1alpha1.WorkflowFailed
	wf.Status.StartedAt = at(0)
	wf.Status.FinishedAt = at(20)
	wf.Status.Progress = "1/2"
	wf.Status.Message = "child 'steps-xk9vq-2794516801' failed"
	wf.Status.Conditions = v1alpha1.Conditions{
		{Type: v1alpha1.ConditionTypePodRunning, Status: metav1.ConditionFalse},
		{Type: v1alpha1.ConditionTypeCompleted, Status: metav1.ConditionTrue},
	}
	wf.Status.ResourcesDuration = v1alpha1.ResourcesDuration{corev1.ResourceCPU: 2, corev1.ResourceMemory: 8}
	add(wf,
		nd{name: "steps-xk9vq", typ: v1alpha1.NodeTypeSteps, tmpl: "main", phase: v1alpha1.NodeFailed, end: 20,
			children: []string{"steps-xk9vq[0]"}, msg: "child 'steps-xk9vq-2794516801' failed"},
		nd{name: "steps-xk9vq[0]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeSucceeded,
			boundary: "steps-xk9vq", end: 10, children: []string{"steps-xk9vq[0].hello1"}},
		nd{name: "steps-xk9vq[0].hello1", typ: v1alpha1.NodeTypePod, tmpl: "print-message", phase: v1alpha1.NodeSucceeded,
			boundary: "steps-xk9vq", end: 7, children: []string{"steps-xk9vq[1]"}, host: "worker-1"},
		nd{name: "steps-xk9vq[1]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeFailed,
			boundary: "steps-xk9vq", start: 10, end: 20, children: []string{"steps-xk9vq[1].hello2"}},
		nd{name: "steps-xk9vq[1].hello2", typ: v1alpha1.NodeTypePod, tmpl: "print-message", phase: v1alpha1.NodeFailed,
			boundary: "steps-xk9vq", start: 10, end: 17, msg: "Error (exit code 1)", host: "worker-2"},
	)
	return wf
}

// stepsRunning is the same workflow while hello2 still runs (§5.3).
func stepsRunning() *v1alpha1.Workflow {
	wf := newWorkflow("steps-xk9vq")
	wf.Spec.Entrypoint = "main"
	wf.Spec.Arguments.Parameters = params("greeting", "hello")
	wf.Status.Phase = v1alpha1.WorkflowRunning
	wf.Status.StartedAt = at(0)
	wf.Status.Progress = "1/2"
	add(wf,
		nd{name: "steps-xk9vq", typ: v1alpha1.NodeTypeSteps, tmpl: "main", phase: v1alpha1.NodeRunning, end: -1,
			children: []string{"steps-xk9vq[0]"}},
		nd{name: "steps-xk9vq[0]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeSucceeded,
			boundary: "steps-xk9vq", end: 10, children: []string{"steps-xk9vq[0].hello1"}},
		nd{name: "steps-xk9vq[0].hello1", typ: v1alpha1.NodeTypePod, tmpl: "print-message", phase: v1alpha1.NodeSucceeded,
			boundary: "steps-xk9vq", end: 7, children: []string{"steps-xk9vq[1]"}},
		nd{name: "steps-xk9vq[1]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeRunning,
			boundary: "steps-xk9vq", start: 10, end: -1, children: []string{"steps-xk9vq[1].hello2"}},
		nd{name: "steps-xk9vq[1].hello2", typ: v1alpha1.NodeTypePod, tmpl: "print-message", phase: v1alpha1.NodeRunning,
			boundary: "steps-xk9vq", start: 10, end: -1},
	)
	return wf
}

// withArtifacts gives wf's pods output artifacts and resource usage, for the
// wide view.
func withArtifacts(wf *v1alpha1.Workflow) *v1alpha1.Workflow {
	for _, name := range []string{"steps-xk9vq[0].hello1", "steps-xk9vq[1].hello2"} {
		st := node(wf, name)
		st.Outputs = &v1alpha1.Outputs{Artifacts: v1alpha1.Artifacts{{Name: "main-logs"}, {Name: "report"}}}
		st.ResourcesDuration = v1alpha1.ResourcesDuration{corev1.ResourceCPU: 1, corev1.ResourceMemory: 4}
		set(wf, st)
	}
	root := node(wf, "steps-xk9vq")
	root.ResourcesDuration = v1alpha1.ResourcesDuration{corev1.ResourceCPU: 2, corev1.ResourceMemory: 8}
	set(wf, root)
	return wf
}

// dagFanOut is the DAG of ARGO-SEMANTICS.md 1.9: A -> {B, C, F[withItems
// 1,2]}; D: B && C (omitted, as B fails); E: B.Failed; G: F.AnySucceeded.
// F is a TaskGroup, which is not drawn: its iterations sit under the DAG.
func dagFanOut() *v1alpha1.Workflow {
	wf := newWorkflow("dg")
	wf.Status.Phase = v1alpha1.WorkflowFailed
	wf.Status.StartedAt = at(0)
	wf.Status.FinishedAt = at(15)
	wf.Status.Progress = "5/6"
	wf.Status.Message = "child 'dg-2941835836' failed"
	echo := func(name string, start, end int, children ...string) nd {
		return nd{name: name, typ: v1alpha1.NodeTypePod, tmpl: "echo", phase: v1alpha1.NodeSucceeded,
			boundary: "dg", start: start, end: end, children: children}
	}
	add(wf,
		nd{name: "dg", typ: v1alpha1.NodeTypeDAG, tmpl: "main", phase: v1alpha1.NodeFailed, end: 15,
			children: []string{"dg.A"}, msg: "child 'dg-2941835836' failed"},
		echo("dg.A", 0, 5, "dg.B", "dg.C", "dg.F"),
		nd{name: "dg.B", typ: v1alpha1.NodeTypePod, tmpl: "fail", phase: v1alpha1.NodeFailed, boundary: "dg",
			start: 6, end: 9, children: []string{"dg.D", "dg.E"}, msg: "Error (exit code 1)"},
		echo("dg.C", 6, 8, "dg.D"),
		nd{name: "dg.F", typ: v1alpha1.NodeTypeTaskGroup, tmpl: "echo", phase: v1alpha1.NodeSucceeded, boundary: "dg",
			start: 6, end: 12, children: []string{"dg.F(0:1)", "dg.F(1:2)"}},
		echo("dg.F(1:2)", 6, 12, "dg.G"),
		echo("dg.F(0:1)", 6, 11, "dg.G"),
		nd{name: "dg.D", typ: v1alpha1.NodeTypeSkipped, tmpl: "echo", phase: v1alpha1.NodeOmitted, boundary: "dg",
			start: 9, end: 9, msg: "omitted: depends condition not met"},
		echo("dg.E", 10, 14),
		echo("dg.G", 13, 15),
	)
	return wf
}

// retries has a retried step whose first attempt succeeded (the Retry node
// is hidden) and one that needed two attempts (drawn).
func retries() *v1alpha1.Workflow {
	wf := newWorkflow("rt")
	wf.Status.Phase = v1alpha1.WorkflowSucceeded
	wf.Status.StartedAt = at(0)
	wf.Status.FinishedAt = at(30)
	wf.Status.Progress = "3/3"
	add(wf,
		nd{name: "rt", typ: v1alpha1.NodeTypeSteps, tmpl: "main", phase: v1alpha1.NodeSucceeded, end: 30,
			children: []string{"rt[0]"}},
		nd{name: "rt[0]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeSucceeded, boundary: "rt", end: 30,
			children: []string{"rt[0].once", "rt[0].flaky"}},
		nd{name: "rt[0].once", typ: v1alpha1.NodeTypeRetry, tmpl: "echo", phase: v1alpha1.NodeSucceeded,
			boundary: "rt", end: 5, children: []string{"rt[0].once(0)"}},
		nd{name: "rt[0].once(0)", typ: v1alpha1.NodeTypePod, tmpl: "echo", phase: v1alpha1.NodeSucceeded,
			boundary: "rt", end: 5},
		nd{name: "rt[0].flaky", typ: v1alpha1.NodeTypeRetry, tmpl: "flaky", phase: v1alpha1.NodeSucceeded,
			boundary: "rt", end: 30, children: []string{"rt[0].flaky(0)", "rt[0].flaky(1)"}},
		nd{name: "rt[0].flaky(1)", typ: v1alpha1.NodeTypePod, tmpl: "flaky", phase: v1alpha1.NodeSucceeded,
			boundary: "rt", start: 20, end: 30},
		nd{name: "rt[0].flaky(0)", typ: v1alpha1.NodeTypePod, tmpl: "flaky", phase: v1alpha1.NodeFailed,
			boundary: "rt", end: 10, msg: "Error (exit code 1)"},
	)
	return wf
}

// parallel runs a, b and c (skipped) in one group and d after them.
func parallel() *v1alpha1.Workflow {
	wf := newWorkflow("par")
	wf.Status.Phase = v1alpha1.WorkflowRunning
	wf.Status.StartedAt = at(0)
	wf.Status.Progress = "2/3"
	add(wf,
		nd{name: "par", typ: v1alpha1.NodeTypeSteps, tmpl: "main", phase: v1alpha1.NodeRunning, end: -1,
			children: []string{"par[0]"}},
		nd{name: "par[0]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeSucceeded, boundary: "par", end: 9,
			children: []string{"par[0].a", "par[0].b", "par[0].c"}},
		nd{name: "par[0].a", typ: v1alpha1.NodeTypePod, tmpl: "echo", phase: v1alpha1.NodeSucceeded, boundary: "par",
			end: 9, children: []string{"par[1]"}},
		nd{name: "par[0].b", typ: v1alpha1.NodeTypePod, tmpl: "echo", phase: v1alpha1.NodeError, boundary: "par",
			end: 4, children: []string{"par[1]"}, msg: "pod deleted"},
		nd{name: "par[0].c", typ: v1alpha1.NodeTypeSkipped, tmpl: "echo", phase: v1alpha1.NodeSkipped, boundary: "par",
			end: 0, children: []string{"par[1]"}, msg: "when 'a == b' evaluated false"},
		nd{name: "par[1]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeRunning, boundary: "par", start: 10, end: -1,
			children: []string{"par[1].d"}},
		nd{name: "par[1].d", typ: v1alpha1.NodeTypePod, tmpl: "echo", phase: v1alpha1.NodePending, boundary: "par",
			start: 10, end: -1},
	)
	return wf
}

// onExit has a workflow exit handler, itself a steps template: a second tree.
func onExit() *v1alpha1.Workflow {
	wf := newWorkflow("eh")
	wf.Spec.OnExit = "exit-handler"
	wf.Status.Phase = v1alpha1.WorkflowSucceeded
	wf.Status.StartedAt = at(0)
	wf.Status.FinishedAt = at(20)
	wf.Status.Progress = "2/2"
	add(wf,
		nd{name: "eh", typ: v1alpha1.NodeTypeSteps, tmpl: "main", phase: v1alpha1.NodeSucceeded, end: 10,
			children: []string{"eh[0]"}},
		nd{name: "eh[0]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeSucceeded, boundary: "eh", end: 10,
			children: []string{"eh[0].work"}},
		nd{name: "eh[0].work", typ: v1alpha1.NodeTypePod, tmpl: "work", phase: v1alpha1.NodeSucceeded, boundary: "eh",
			end: 10, host: "worker-1"},
		nd{name: "eh.onExit", typ: v1alpha1.NodeTypeSteps, tmpl: "exit-handler", phase: v1alpha1.NodeSucceeded,
			start: 11, end: 20, children: []string{"eh.onExit[0]"}},
		nd{name: "eh.onExit[0]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeSucceeded, boundary: "eh.onExit",
			start: 11, end: 20, children: []string{"eh.onExit[0].notify"}},
		nd{name: "eh.onExit[0].notify", typ: v1alpha1.NodeTypePod, tmpl: "notify", phase: v1alpha1.NodeSucceeded,
			boundary: "eh.onExit", start: 11, end: 20, host: "worker-2"},
	)
	st := node(wf, "eh.onExit")
	st.NodeFlag = &v1alpha1.NodeFlag{Hooked: true}
	set(wf, st)
	return wf
}

// suspended waits in a running Suspend node after a build step.
func suspended() *v1alpha1.Workflow {
	wf := newWorkflow("approval")
	wf.Spec.ServiceAccountName = "workflow-runner"
	wf.Status.Phase = v1alpha1.WorkflowRunning
	wf.Status.StartedAt = at(0)
	wf.Status.EstimatedDuration = 90
	wf.Status.Progress = "1/1"
	add(wf,
		nd{name: "approval", typ: v1alpha1.NodeTypeSteps, tmpl: "main", phase: v1alpha1.NodeRunning, end: -1,
			children: []string{"approval[0]"}},
		nd{name: "approval[0]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeSucceeded, boundary: "approval",
			end: 5, children: []string{"approval[0].build"}},
		nd{name: "approval[0].build", typ: v1alpha1.NodeTypePod, tmpl: "build", phase: v1alpha1.NodeSucceeded,
			boundary: "approval", end: 5, children: []string{"approval[1]"}},
		nd{name: "approval[1]", typ: v1alpha1.NodeTypeStepGroup, phase: v1alpha1.NodeRunning, boundary: "approval",
			start: 6, end: -1, children: []string{"approval[1].approve"}},
		nd{name: "approval[1].approve", typ: v1alpha1.NodeTypeSuspend, tmpl: "approve", phase: v1alpha1.NodeRunning,
			boundary: "approval", start: 6, end: -1},
	)
	return wf
}

// siblings has DAG tasks that start together: names without an index sort by
// name, loop iterations by index, and start times count in whole seconds.
func siblings() *v1alpha1.Workflow {
	wf := newWorkflow("srt")
	wf.Status.Phase = v1alpha1.WorkflowSucceeded
	wf.Status.StartedAt = at(0)
	wf.Status.FinishedAt = at(9)
	echo := func(name string, start int) nd {
		return nd{name: name, typ: v1alpha1.NodeTypePod, tmpl: "echo", phase: v1alpha1.NodeSucceeded,
			boundary: "srt", start: start, end: 8}
	}
	add(wf,
		nd{name: "srt", typ: v1alpha1.NodeTypeDAG, tmpl: "main", phase: v1alpha1.NodeSucceeded, end: 9},
		echo("srt.late", 5),
		echo("srt.x(10:j)", 0),
		echo("srt.x(2:k)", 0),
		echo("srt.b", 0),
		echo("srt.x(1:z)", 0),
		echo("srt.a", 0),
		echo("srt.early", 0),
	)
	// b starts 0.1s and a 0.9s after t0: the same second, so a goes first.
	b, a := node(wf, "srt.b"), node(wf, "srt.a")
	b.StartedAt = metav1.NewTime(t0.Add(100 * time.Millisecond))
	a.StartedAt = metav1.NewTime(t0.Add(900 * time.Millisecond))
	set(wf, b)
	set(wf, a)
	// early really is earlier.
	e := node(wf, "srt.early")
	e.StartedAt = metav1.NewTime(t0.Add(-time.Second))
	set(wf, e)
	return wf
}

// headerCases exercises the optional header lines: a workflowTemplateRef
// (ServiceAccount "unset"), a terminated failure, conditions with icons,
// parameters from the stored spec, and output parameters and artifacts.
func headerCases() *v1alpha1.Workflow {
	wf := newWorkflow("from-template")
	wf.Spec.WorkflowTemplateRef = &v1alpha1.WorkflowTemplateRef{Name: "tmpl"}
	wf.Spec.Shutdown = v1alpha1.ShutdownTerminate
	wf.Spec.Arguments.Parameters = params("ignored", "spec-only")
	wf.Status.StoredWorkflowSpec = &v1alpha1.WorkflowSpec{
		Arguments: v1alpha1.Arguments{Parameters: append(params("message", "from stored spec"),
			v1alpha1.Parameter{Name: "no-value"})},
	}
	wf.Status.Phase = v1alpha1.WorkflowFailed
	wf.Status.Message = "Stopped with strategy 'Terminate'"
	wf.Status.StartedAt = at(0)
	wf.Status.FinishedAt = at(3*3600 + 65)
	wf.Status.Progress = "0/1"
	wf.Status.Conditions = v1alpha1.Conditions{
		{Type: v1alpha1.ConditionTypeSpecWarning, Status: metav1.ConditionTrue, Message: "deprecated field"},
		{Type: v1alpha1.ConditionTypeMetricsError, Status: metav1.ConditionTrue, Message: "bad metric"},
		{Type: v1alpha1.ConditionTypeCompleted, Status: metav1.ConditionTrue},
	}
	insecure := true
	wf.Status.Outputs = &v1alpha1.Outputs{
		Parameters: []v1alpha1.Parameter{
			{Name: "value", Value: v1alpha1.AnyStringPtr("42")},
			{Name: "default", Default: v1alpha1.AnyStringPtr("d")},
			{Name: "from", ValueFrom: &v1alpha1.ValueFrom{Path: "/tmp/x"}},
			{Name: "nothing"},
		},
		Artifacts: v1alpha1.Artifacts{
			{Name: "s3", ArtifactLocation: v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{
				S3Bucket: v1alpha1.S3Bucket{Endpoint: "minio:9000", Bucket: "my-bucket", Insecure: &insecure,
					AccessKeySecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "my-minio-cred"}, Key: "accesskey"}},
				Key: "from-template/out.tgz"}}},
			{Name: "raw", ArtifactLocation: v1alpha1.ArtifactLocation{Raw: &v1alpha1.RawArtifact{Data: "hi"}}},
			{Name: "unstored"},
		},
	}
	add(wf,
		nd{name: "from-template", typ: v1alpha1.NodeTypePod, tmpl: "main", phase: v1alpha1.NodeFailed,
			end: 3*3600 + 65, msg: "Stopped with strategy 'Terminate'"},
	)
	return wf
}
