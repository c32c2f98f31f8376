package engine

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// drivePerPass drives d to completion like run, checking after every pass
// that it created at most max nodes and that a pass that stopped at the
// bound asks to be called again at once. It returns the passes that hit it.
func drivePerPass(t *testing.T, d *driver, max int) int {
	t.Helper()
	full := 0
	for i := 0; i < d.maxPasses && !d.wf.Status.Phase.Completed(); i++ {
		before := len(d.wf.Status.Nodes)
		res := d.reconcile()
		created := len(d.wf.Status.Nodes) - before
		if created > max {
			t.Fatalf("pass %d created %d nodes, more than %d", d.passes, created, max)
		}
		if created == max {
			full++
			if res.RequeueAfter != time.Millisecond {
				t.Fatalf("pass %d stopped at the bound with RequeueAfter %v", d.passes, res.RequeueAfter)
			}
		}
		if d.wf.Status.Phase.Completed() {
			break
		}
		d.collect()
		if len(d.pending) > 0 {
			continue
		}
		if next := d.nextEvent(res.RequeueAfter); !next.IsZero() {
			d.now = next
			d.collect()
		}
	}
	return full
}

// Limits.MaxNodesPerPass: expansion is incremental. A loop of 1,000 items
// without parallelism takes several passes of at most 100 new nodes, and
// ends as it would in one.
func TestNodesPerPass(t *testing.T) {
	for _, kind := range []string{"steps", "dag"} {
		t.Run(kind, func(t *testing.T) {
			d := load(t, loopYAML(kind, "withSequence: {count: '1000'}", 0))
			d.limits.MaxNodesPerPass = 100
			full := drivePerPass(t, d, 100)
			d.expect(v1alpha1.WorkflowSucceeded, "", nil)
			eq(t, "launches", len(d.launches), 1000)
			if full < 9 {
				t.Errorf("only %d passes reached the bound", full)
			}
			last := "lp[0].l(999:999)"
			if kind == "dag" {
				last = "lp.l(999:999)"
			}
			eq(t, "last iteration", describe(d.node(last), "Pod Succeeded"), "Pod Succeeded")
		})
	}
}

// A huge loop with parallelism 2: a pass creates only what may run, and a
// stop or terminate ends the workflow in the next pass without creating
// the iterations that never ran.
func TestHugeLoopShutdown(t *testing.T) {
	for _, kind := range []string{"steps", "dag"} {
		for _, strategy := range []v1alpha1.ShutdownStrategy{v1alpha1.ShutdownStop, v1alpha1.ShutdownTerminate} {
			t.Run(kind+" "+string(strategy), func(t *testing.T) {
				d := load(t, loopYAML(kind, "withSequence: {count: '100000'}", 2))
				d.reconcile()
				if n := len(d.wf.Status.Nodes); n > 4 {
					t.Fatalf("first pass: %d nodes", n)
				}
				eq(t, "launches", len(d.launches), 2)
				d.runFor(5 * time.Second)
				nodes := len(d.wf.Status.Nodes)
				if nodes < 8 || nodes > 20 {
					t.Fatalf("after 5s: %d nodes", nodes)
				}
				d.wf.Spec.Shutdown = strategy
				d.reconcile()
				stopped := fmt.Sprintf("Stopped with strategy '%s'", strategy)
				d.expect(v1alpha1.WorkflowFailed, stopped, nil)
				if n := len(d.wf.Status.Nodes); n > nodes+1 {
					t.Errorf("the shutdown pass went from %d to %d nodes", nodes, n)
				}
			})
		}
	}
}

// hugeLoop is a loop of n pods under a steps template, in the middle of its
// run: done iterations Succeeded, none running, and the template's
// parallelism p, so that a pass walks the done part and creates p nodes.
func hugeLoop(tb testing.TB, n, done, p int) *driver {
	tb.Helper()
	d := load(tb, loopYAML("steps", fmt.Sprintf("withSequence: {count: '%d'}", n), 0))
	d.limits.MaxNodesPerPass = done
	d.limits.MaxNodes = 2 * n // the loop's n nodes pass the default bound
	res, err := checkedReconcile(tb, Snapshot{Workflow: d.wf, Limits: d.limits, Prepared: d.prepared}, d.now)
	if err != nil {
		tb.Fatal(err)
	}
	results := map[string]StepResult{}
	for _, l := range res.Plan.Launch {
		results[l.NodeID] = StepResult{Phase: v1alpha1.NodeSucceeded, ExitCode: i32(0), FinishedAt: d.now}
	}
	d.wf.Status = res.Status
	par := intstr.FromInt(p)
	d.wf.Spec.Templates[0].Parallelism = &par
	d.prepared, d.limits = NewPrepared(), Limits{MaxNodes: 2 * n}
	d.pending = results
	return d
}

// BenchmarkHugeLoopPass is one pass over a loop of 100,000 items with
// parallelism 2, half done: it walks the 50,000 done iterations and creates
// two. It must stay far under a second (see doc.go for the figure).
func BenchmarkHugeLoopPass(b *testing.B) {
	d := hugeLoop(b, 100000, 50000, 2)
	res, err := Reconcile(Snapshot{Workflow: d.wf, Results: d.pending, Limits: d.limits, Prepared: d.prepared}, d.now)
	if err != nil {
		b.Fatal(err)
	}
	d.wf.Status = res.Status
	if got := len(res.Plan.Launch); got != 2 {
		b.Fatalf("%d launches", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := Reconcile(Snapshot{Workflow: d.wf, Limits: d.limits, Prepared: d.prepared}, d.now)
		if err != nil {
			b.Fatal(err)
		}
		d.wf.Status = res.Status
	}
	b.ReportMetric(float64(len(d.wf.Status.Nodes)), "nodes")
}

// The pass of BenchmarkHugeLoopPass creates no more than parallelism
// allows and does not build the items it does not create.
func TestHugeLoopPass(t *testing.T) {
	d := hugeLoop(t, 100000, 5000, 2)
	before := len(d.wf.Status.Nodes)
	res, err := checkedReconcile(t, Snapshot{Workflow: d.wf, Results: d.pending, Limits: d.limits, Prepared: d.prepared}, d.now)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "launches", len(res.Plan.Launch), 2)
	eq(t, "new nodes", len(res.Status.Nodes)-before, 2)
	for _, e := range d.prepared.c.loops {
		if len(e.ids) > 5003 {
			t.Errorf("%d iterations named, want at most the 5,002 reached", len(e.ids))
		}
	}
}

// bombYAML calls its own template twice per step; with work, each level
// first runs a pod, so the tree doubles level by level instead of going deep
// at once.
func bombYAML(work bool) string {
	first := ""
	if work {
		first = `
    - - {name: w, template: work}`
	}
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: bomb}
spec:
  entrypoint: bomb
  templates:
  - name: bomb
    steps:` + first + `
    - - {name: a, template: bomb}
      - {name: b, template: bomb}
  - name: work
    container: {image: busybox, command: [echo, hi]}
`
}

// driveBomb reconciles like the controller, every step succeeding at once,
// until the workflow ends. It returns the passes and the peak heap.
func driveBomb(tb testing.TB, d *driver) (passes int, peak uint64) {
	tb.Helper()
	results := map[string]StepResult{}
	var ms runtime.MemStats
	for passes = 1; passes < 100000; passes++ {
		res, err := checkedReconcile(tb, Snapshot{Workflow: d.wf, Results: results, Limits: d.limits, Prepared: d.prepared}, d.now)
		if err != nil {
			tb.Fatal(err)
		}
		d.wf.Status = res.Status
		if passes%8 == 0 || d.wf.Status.Phase.Completed() {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		if d.wf.Status.Phase.Completed() {
			return passes, peak
		}
		d.now = d.now.Add(time.Second)
		results = map[string]StepResult{}
		for _, l := range res.Plan.Launch {
			results[l.NodeID] = StepResult{Phase: v1alpha1.NodeSucceeded, ExitCode: i32(0), FinishedAt: d.now}
		}
	}
	tb.Fatalf("the bomb did not end: %d nodes", len(d.wf.Status.Nodes))
	return passes, peak
}

// The recursion bomb ends Error with the bound it crossed: at once by
// depth when it recurses directly, by node count when each level works.
func TestRecursionBomb(t *testing.T) {
	t.Run("depth", func(t *testing.T) {
		d := load(t, bombYAML(false))
		passes, _ := driveBomb(t, d)
		deepest := "bomb" + strings.Repeat("[0].a", DefaultMaxDepth-1)
		d.expect(v1alpha1.WorkflowError, fmt.Sprintf(
			"Maximum recursion depth exceeded: node %q: templates nest 100 deep, more than the limit (limits.maxDepth = 100)", deepest), nil)
		eq(t, "passes", passes, 1)
	})
	t.Run("nodes", func(t *testing.T) {
		d := load(t, bombYAML(true))
		d.limits = Limits{MaxNodes: 3000, MaxNodesPerPass: 500}
		driveBomb(t, d)
		if d.wf.Status.Phase != v1alpha1.WorkflowError || !strings.HasSuffix(d.wf.Status.Message,
			": the workflow would have 3001 nodes, more than the limit (limits.maxNodes = 3000)") {
			t.Errorf("workflow %s %q", d.wf.Status.Phase, d.wf.Status.Message)
		}
		if n := len(d.wf.Status.Nodes); n != 3000 {
			t.Errorf("%d nodes", n)
		}
		for _, n := range d.wf.Status.Nodes {
			if isLeafType(n.Type) && !n.Phase.Fulfilled() {
				t.Errorf("%s still %s", n.Name, n.Phase)
			}
		}
	})
}

// BenchmarkRecursionBomb drives the bomb with the default limits until it
// ends, and reports the peak heap and the heap per node: what one runaway
// workflow costs the server at most (see doc.go for the figures).
func BenchmarkRecursionBomb(b *testing.B) {
	for b.Loop() {
		d := load(b, bombYAML(true))
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		passes, peak := driveBomb(b, d)
		if d.wf.Status.Phase != v1alpha1.WorkflowError || !strings.Contains(d.wf.Status.Message, "limits.maxNodes") {
			b.Fatalf("workflow %s %q", d.wf.Status.Phase, d.wf.Status.Message)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		nodes := len(d.wf.Status.Nodes)
		b.ReportMetric(float64(nodes), "nodes")
		b.ReportMetric(float64(passes), "passes")
		b.ReportMetric(float64(peak-base.HeapAlloc)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(after.HeapAlloc-base.HeapAlloc)/float64(nodes), "heap-B/node")
		runtime.KeepAlive(d)
	}
}
