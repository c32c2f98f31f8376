package engine

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func chainSpec(n int) *v1alpha1.Workflow {
	var groups []v1alpha1.ParallelSteps
	for i := 0; i < n; i++ {
		s := v1alpha1.WorkflowStep{Name: fmt.Sprintf("s%d", i), Template: "work"}
		if i > 0 {
			s.Arguments.Parameters = []v1alpha1.Parameter{{Name: "prev", Value: v1alpha1.AnyStringPtr(fmt.Sprintf("{{steps.s%d.status}}", i-1))}}
		}
		groups = append(groups, v1alpha1.ParallelSteps{s})
	}
	return &v1alpha1.Workflow{
		ObjectMeta: metav1ObjectMeta("chain"),
		Spec: v1alpha1.WorkflowSpec{
			Entrypoint: "main",
			Templates: []v1alpha1.Template{
				{Name: "main", Steps: groups},
				{Name: "work", Inputs: v1alpha1.Inputs{Parameters: []v1alpha1.Parameter{{Name: "prev", Default: v1alpha1.AnyStringPtr("none")}}},
					Container: containerOf("sh", "-c", "echo {{inputs.parameters.prev}}")},
			},
		},
	}
}

func wideSpec(n int) *v1alpha1.Workflow {
	tasks := []v1alpha1.DAGTask{{Name: "source", Template: "work"}}
	var mids []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("t%d", i)
		tasks = append(tasks, v1alpha1.DAGTask{Name: name, Template: "work", Depends: "source"})
		mids = append(mids, name)
	}
	tasks = append(tasks, v1alpha1.DAGTask{Name: "sink", Template: "work", Dependencies: mids})
	return &v1alpha1.Workflow{
		ObjectMeta: metav1ObjectMeta("wide"),
		Spec: v1alpha1.WorkflowSpec{
			Entrypoint: "main",
			Templates: []v1alpha1.Template{
				{Name: "main", DAG: &v1alpha1.DAGTemplate{Tasks: tasks}},
				{Name: "work", Container: containerOf("sh", "-c", "true")},
			},
		},
	}
}

// drive runs a workflow to completion, reporting each launched step as
// Running and then Succeeded, one event per Reconcile, as a runtime would.
// It returns the number of Reconcile calls.
func drive(tb testing.TB, wf *v1alpha1.Workflow) int {
	now := t0
	var queue []StepResult
	var ids []string
	calls := 0
	var results map[string]StepResult
	memo := NewPrepared()
	if os.Getenv("BRAID_NOMEMO") != "" {
		memo = nil
	}
	for calls < 1<<22 {
		res, err := Reconcile(Snapshot{Workflow: wf, Results: results, Prepared: memo}, now)
		if err != nil {
			tb.Fatal(err)
		}
		calls++
		wf.Status = res.Status
		if wf.Status.Phase.Completed() {
			if wf.Status.Phase != v1alpha1.WorkflowSucceeded {
				tb.Fatalf("workflow %s %q", wf.Status.Phase, wf.Status.Message)
			}
			return calls
		}
		for _, l := range res.Plan.Launch {
			ids = append(ids, l.NodeID, l.NodeID)
			queue = append(queue, StepResult{Phase: v1alpha1.NodeRunning, StartedAt: now},
				StepResult{Phase: v1alpha1.NodeSucceeded, ExitCode: new(int32), StartedAt: now, FinishedAt: now})
		}
		if len(queue) == 0 {
			tb.Fatalf("stuck after %d calls", calls)
		}
		// Running events first, then completions, one per call.
		i := 0
		for j := range queue {
			if queue[j].Phase == v1alpha1.NodeRunning {
				i = j
				break
			}
		}
		results = map[string]StepResult{ids[i]: queue[i]}
		queue = append(queue[:i], queue[i+1:]...)
		ids = append(ids[:i], ids[i+1:]...)
		now = now.Add(time.Millisecond)
	}
	tb.Fatal("did not finish")
	return calls
}

// BenchmarkReconcileChain: a steps template of 1,000 sequential steps. The
// reported ns/step is the total Reconcile time per step, over the two
// events (Running, Succeeded) each step produces.
func BenchmarkReconcileChain(b *testing.B) {
	const n = 1000
	base := chainSpec(n)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		wf := base.DeepCopy()
		start := time.Now()
		drive(b, wf)
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*n), "ns/step")
}

// BenchmarkReconcileWide: a DAG with 2,000 parallel tasks between a source
// and a sink, events reported one per Reconcile. ns/task is the total time
// per task.
func BenchmarkReconcileWide(b *testing.B) {
	const n = 2000
	base := wideSpec(wideN(n))
	var total time.Duration
	for i := 0; i < b.N; i++ {
		wf := base.DeepCopy()
		start := time.Now()
		drive(b, wf)
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*(wideN(n)+2)), "ns/task")
}

// TestBenchmarkWorkflowsRun keeps the benchmark workflows honest in the
// ordinary test run, with fewer steps.
func TestBenchmarkWorkflowsRun(t *testing.T) {
	calls := drive(t, chainSpec(50))
	eq(t, "chain calls", calls, 101)
	calls = drive(t, wideSpec(40))
	eq(t, "wide calls", calls, 85)
}

// wideN lets a profile run use a smaller DAG (BRAID_WIDE=n).
func wideN(n int) int {
	if v, err := strconv.Atoi(os.Getenv("BRAID_WIDE")); err == nil && v > 0 {
		return v
	}
	return n
}

func loopSpec(n int) *v1alpha1.Workflow {
	return &v1alpha1.Workflow{
		ObjectMeta: metav1ObjectMeta("loop"),
		Spec: v1alpha1.WorkflowSpec{
			Entrypoint: "main",
			Arguments:  v1alpha1.Arguments{Parameters: []v1alpha1.Parameter{{Name: "n", Value: v1alpha1.AnyStringPtr(strconv.Itoa(n))}}},
			Templates: []v1alpha1.Template{
				{Name: "main", Steps: []v1alpha1.ParallelSteps{{{Name: "fan", Template: "work",
					WithSequence: &v1alpha1.Sequence{Count: ptrIntOrString("{{workflow.parameters.n}}")},
					Arguments:    v1alpha1.Arguments{Parameters: []v1alpha1.Parameter{{Name: "i", Value: v1alpha1.AnyStringPtr("{{item}}")}}}}}}},
				{Name: "work", Inputs: v1alpha1.Inputs{Parameters: []v1alpha1.Parameter{{Name: "i"}}},
					Container: containerOf("echo", "{{inputs.parameters.i}}")},
			},
		},
	}
}

// BenchmarkReconcileLoop: a steps loop of 2,000 iterations, events reported
// one per Reconcile. ns/iteration is the total time per iteration.
func BenchmarkReconcileLoop(b *testing.B) {
	const n = 2000
	base := loopSpec(wideN(n))
	var total time.Duration
	for i := 0; i < b.N; i++ {
		wf := base.DeepCopy()
		start := time.Now()
		drive(b, wf)
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*wideN(n)), "ns/iteration")
}

func dagChainSpec(n int) *v1alpha1.Workflow {
	tasks := make([]v1alpha1.DAGTask, n)
	for i := range tasks {
		tasks[i] = v1alpha1.DAGTask{Name: fmt.Sprintf("t%d", i), Template: "work"}
		if i > 0 {
			tasks[i].Depends = fmt.Sprintf("t%d", i-1)
		}
	}
	return &v1alpha1.Workflow{
		ObjectMeta: metav1ObjectMeta("dagchain"),
		Spec: v1alpha1.WorkflowSpec{
			Entrypoint: "main",
			Templates: []v1alpha1.Template{
				{Name: "main", DAG: &v1alpha1.DAGTemplate{Tasks: tasks}},
				{Name: "work", Container: containerOf("true")},
			},
		},
	}
}

// BenchmarkReconcileDAGChain: a DAG of 1,000 tasks, each depending on the
// one before (the shape test/bench runs against make).
func BenchmarkReconcileDAGChain(b *testing.B) {
	const n = 1000
	base := dagChainSpec(wideN(n))
	var total time.Duration
	for i := 0; i < b.N; i++ {
		wf := base.DeepCopy()
		start := time.Now()
		drive(b, wf)
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*wideN(n)), "ns/step")
}
