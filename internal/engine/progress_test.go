package engine

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// sumsYAML is ARGO-API §6's example: hello1, then hello2 ("sleep 7" makes
// a step run 7s on the test driver's clock).
const sumsYAML = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: pg}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: hello1, template: print}
    - - {name: hello2, template: print}
  - name: print
    container: {image: busybox, command: [sh, -c, "sleep 7"]}
`

// Progress is "done/total" over the executable nodes a node reaches through
// children, so "[0]" counts hello2 too (ARGO-API §6); resourcesDuration sums
// the same Pod nodes, and a pod counts its main and wait containers at the
// default 100m cpu (1 cpu) and 100Mi memory for each whole second it ran.
func TestProgressAndResourcesDuration(t *testing.T) {
	type want struct {
		progress v1alpha1.Progress
		rd       string
	}
	tests := []struct {
		name  string
		yaml  string
		wf    want
		nodes map[string]want
	}{
		{name: "steps of ARGO-API §6", yaml: sumsYAML,
			wf: want{"2/2", "cpu=28 memory=28 "},
			nodes: map[string]want{
				"pg":           {"2/2", "cpu=28 memory=28 "},
				"pg[0]":        {"2/2", "cpu=28 memory=28 "},
				"pg[0].hello1": {"1/1", "cpu=14 memory=14 "},
				"pg[1]":        {"1/1", "cpu=14 memory=14 "},
				"pg[1].hello2": {"1/1", "cpu=14 memory=14 "},
			}},
		{name: "a failed pod stays 0/1, a skipped step counts nothing", yaml: `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: pg}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: ok}
      - {name: f, template: fail, continueOn: {failed: true}}
      - {name: s, template: ok, when: "1 == 2"}
  - name: ok
    container: {image: busybox, command: [echo, hi]}
  - name: fail
    container: {image: busybox, command: [sh, -c, "exit 3"]}
`,
			wf: want{"1/2", "cpu=4 memory=4 "},
			nodes: map[string]want{
				"pg":      {"1/2", "cpu=4 memory=4 "},
				"pg[0]":   {"1/2", "cpu=4 memory=4 "},
				"pg[0].a": {"1/1", "cpu=2 memory=2 "},
				"pg[0].f": {"0/1", "cpu=2 memory=2 "},
				"pg[0].s": {"", ""},
			}},
		{name: "requests, limits and sidecars", yaml: `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: pg}
spec:
  entrypoint: big
  templates:
  - name: big
    container:
      image: busybox
      command: [sh, -c, "sleep 10"]
      resources:
        requests: {cpu: "2", memory: 1Gi}
        limits: {cpu: "4", nvidia.com/gpu: "1"}
    sidecars:
    - {name: side, image: busybox, resources: {limits: {cpu: 500m}}}
`,
			// main: cpu 2*10, memory 1Gi*10/100Mi = 102, gpu 10; wait and
			// the sidecar: 10 and 10 each.
			wf:    want{"1/1", "cpu=40 memory=122 nvidia.com/gpu=10 "},
			nodes: map[string]want{"pg": {"1/1", "cpu=40 memory=122 nvidia.com/gpu=10 "}}},
		{name: "a DAG diamond counts the shared task once", yaml: `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: pg}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: ok}
      - {name: b, template: ok, depends: a}
      - {name: c, template: ok, depends: a}
      - {name: d, template: ok, depends: b && c}
  - name: ok
    container: {image: busybox, command: [echo, hi]}
`,
			wf: want{"4/4", "cpu=8 memory=8 "},
			nodes: map[string]want{
				"pg":   {"4/4", "cpu=8 memory=8 "},
				"pg.a": {"1/1", "cpu=2 memory=2 "},
				"pg.d": {"1/1", "cpu=2 memory=2 "},
			}},
		{name: "retry attempts count once each", yaml: `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: pg}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: r, template: flaky}
    - - {name: wait, template: pause}
  - name: flaky
    retryStrategy: {limit: 1}
    container: {image: busybox, command: [sh, -c, "exit 1"]}
  - name: pause
    suspend: {duration: "1"}
`,
			// the workflow fails after both attempts: nothing completes.
			wf: want{"0/2", "cpu=4 memory=4 "},
			nodes: map[string]want{
				"pg":         {"0/2", "cpu=4 memory=4 "},
				"pg[0].r":    {"0/2", "cpu=4 memory=4 "},
				"pg[0]":      {"0/2", "cpu=4 memory=4 "},
				"pg[0].r(1)": {"0/1", "cpu=2 memory=2 "},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := load(t, tt.yaml).run()
			eq(t, "workflow", want{d.wf.Status.Progress, fmtRD(d.wf.Status.ResourcesDuration)}, tt.wf)
			for name, w := range tt.nodes {
				n := d.node(name)
				if got := (want{n.Progress, fmtRD(n.ResourcesDuration)}); got != w {
					t.Errorf("%s: got %+v, want %+v", name, got, w)
				}
			}
		})
	}
}

// While hello1 runs, everything counts it as 0/1; no unfulfilled node has a
// resourcesDuration yet; PodRunning follows the pod.
func TestProgressWhileRunning(t *testing.T) {
	d := load(t, sumsYAML)
	d.reconcile()
	eq(t, "progress after the first pass", d.wf.Status.Progress, v1alpha1.Progress("0/1"))
	eq(t, "[0] progress while running", d.node("pg[0]").Progress, v1alpha1.Progress(""))
	st := d.wf.Status.DeepCopy()
	SumNodes(st)
	eq(t, "[0] progress from SumNodes", st.Nodes[d.node("pg[0]").ID].Progress, v1alpha1.Progress("0/1"))
	eq(t, "conditions", d.wf.Status.Conditions, v1alpha1.Conditions{{Type: v1alpha1.ConditionTypePodRunning, Status: metav1.ConditionFalse}})
	d.collect()
	d.reconcile() // hello1 reported Running
	eq(t, "conditions while running", d.wf.Status.Conditions, v1alpha1.Conditions{{Type: v1alpha1.ConditionTypePodRunning, Status: metav1.ConditionTrue}})
	if rd := d.node("pg[0]").ResourcesDuration; rd != nil {
		t.Errorf("[0] is running but has resourcesDuration %v", rd)
	}
	d.run()
	eq(t, "final conditions", d.wf.Status.Conditions, v1alpha1.Conditions{
		{Type: v1alpha1.ConditionTypePodRunning, Status: metav1.ConditionFalse},
		{Type: v1alpha1.ConditionTypeCompleted, Status: metav1.ConditionTrue}})
	h := d.node("pg[1].hello2")
	if h.TaskResultSynced == nil || !*h.TaskResultSynced {
		t.Errorf("hello2 taskResultSynced = %v, want true", h.TaskResultSynced)
	}
}

// A Pod node keeps the host the runtime reported; none leaves it absent.
func TestHostNodeName(t *testing.T) {
	for _, host := range []string{"worker-1", ""} {
		d := load(t, sumsYAML)
		d.reconcile()
		id := d.last.Plan.Launch[0].NodeID
		d.pending = map[string]StepResult{id: {Phase: v1alpha1.NodeRunning, HostNode: host}}
		d.reconcile()
		d.pending = map[string]StepResult{id: {Phase: v1alpha1.NodeSucceeded, ExitCode: new(int32), HostNode: host}}
		d.reconcile()
		eq(t, "hostNodeName", d.node("pg[0].hello1").HostNodeName, host)
	}
}

// A status written before progress was kept (no progress on an existing
// pod) is recomputed whole on the next pass.
func TestProgressRecomputedForOldStatus(t *testing.T) {
	d := load(t, sumsYAML)
	d.reconcile()
	for id, n := range d.wf.Status.Nodes {
		n.Progress = ""
		d.wf.Status.Nodes[id] = n
	}
	d.wf.Status.Progress = ""
	d.run()
	eq(t, "progress", d.wf.Status.Progress, v1alpha1.Progress("2/2"))
	eq(t, "[0] progress", d.node("pg[0]").Progress, v1alpha1.Progress("2/2"))
}
