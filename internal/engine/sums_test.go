package engine

import (
	"fmt"
	"maps"
	"slices"

	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// nodeSums is a node's progress and resourcesDuration, as JSON shows them.
type nodeSums struct {
	progress v1alpha1.Progress
	rd       string
}

func sumsOf(nodes v1alpha1.Nodes) map[string]nodeSums {
	out := make(map[string]nodeSums, len(nodes))
	for id, n := range nodes {
		out[id] = nodeSums{n.Progress, fmtRD(n.ResourcesDuration)}
	}
	return out
}

func fmtRD(rd v1alpha1.ResourcesDuration) string {
	if len(rd) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(rd))
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf("%s=%d ", k, rd[k])
	}
	return s
}

// checkSums recomputes every sum the way Argo does (a fresh walk per node,
// each reachable node counted once) and compares it with what the
// incremental bookkeeping of the pass left; every node whose sums moved
// must be listed in changed. The driver runs it after every pass.
func checkSums(t testing.TB, wf *v1alpha1.Workflow, before map[string]nodeSums, changed []string) {
	t.Helper()
	nodes := wf.Status.Nodes
	var done, total int64
	rd := v1alpha1.ResourcesDuration{}
	for _, n := range nodes {
		if !isExecutable(n.Type) {
			continue
		}
		want := v1alpha1.Progress("0/1")
		if n.Phase == v1alpha1.NodeSucceeded {
			want = "1/1"
		}
		if n.Progress != want {
			t.Fatalf("%s (%s %s): progress %q, want %q", n.Name, n.Type, n.Phase, n.Progress, want)
		}
		total++
		if want == "1/1" {
			done++
		}
		if n.Type == v1alpha1.NodeTypePod {
			for k, v := range n.ResourcesDuration {
				rd[k] += v
			}
		}
	}
	want := referenceSums(nodes)
	completed := wf.Status.Phase.Completed()
	for _, maxWords := range []int{maxSumWords, 0} { // bit sets, walks
		cp := make(v1alpha1.Nodes, len(nodes))
		for id, n := range nodes {
			cp[id] = n
		}
		sumNodes(cp, func(n v1alpha1.NodeStatus) { cp[n.ID] = n }, maxWords)
		for id, w := range want {
			n := cp[id]
			if got := (nodeSums{n.Progress, fmtRD(n.ResourcesDuration)}); got != w {
				t.Fatalf("SumNodes (max %d words): %s (%s): %+v, want %+v", maxWords, n.Name, n.Type, got, w)
			}
			if n := nodes[id]; completed && (nodeSums{n.Progress, fmtRD(n.ResourcesDuration)}) != w {
				t.Fatalf("%s (%s) of a completed workflow: progress %q, resourcesDuration %s; want %+v",
					n.Name, n.Type, n.Progress, fmtRD(n.ResourcesDuration), w)
			}
		}
	}
	if want := formatProgress(done, total); wf.Status.Progress != want && want != "" {
		t.Fatalf("workflow progress %q, want %q", wf.Status.Progress, want)
	}
	if fmtRD(wf.Status.ResourcesDuration) != fmtRD(rd) {
		t.Fatalf("workflow resourcesDuration %s, want %s", fmtRD(wf.Status.ResourcesDuration), fmtRD(rd))
	}
	checkPodRunning(t, wf)
	in := map[string]bool{}
	for _, id := range changed {
		in[id] = true
	}
	for id, n := range nodes {
		if now := (nodeSums{n.Progress, fmtRD(n.ResourcesDuration)}); before[id] != now && !in[id] {
			t.Fatalf("%s: sums moved from %v to %v but the node is not in Result.Changed", n.Name, before[id], now)
		}
	}
}

// referenceSums computes the sums of every node that is not executable as
// Argo does: a fresh walk per node, each reachable node counted once;
// resourcesDuration only for fulfilled nodes.
func referenceSums(nodes v1alpha1.Nodes) map[string]nodeSums {
	out := map[string]nodeSums{}
	for id, n := range nodes {
		if isExecutable(n.Type) {
			continue
		}
		seen := map[string]bool{}
		var d, m int64
		rd := v1alpha1.ResourcesDuration{}
		var walk func(ids []string)
		walk = func(ids []string) {
			for _, id := range ids {
				if seen[id] {
					continue
				}
				seen[id] = true
				c := nodes[id]
				walk(c.Children)
				if isExecutable(c.Type) {
					cd, cm := parseProgress(c.Progress)
					d, m = d+cd, m+cm
				}
				if c.Type == v1alpha1.NodeTypePod {
					for k, v := range c.ResourcesDuration {
						rd[k] += v
					}
				}
			}
		}
		walk(n.Children)
		s := nodeSums{progress: formatProgress(d, m)}
		if fulfilled(n) {
			s.rd = fmtRD(rd)
		} else {
			s.rd = fmtRD(n.ResourcesDuration)
		}
		out[id] = s
	}
	return out
}

// checkPodRunning: PodRunning is True while a Pod node runs (a daemon may
// be missed, a suspended workflow keeps its condition) and False otherwise.
func checkPodRunning(t testing.TB, wf *v1alpha1.Workflow) {
	t.Helper()
	var cond *v1alpha1.Condition
	for i := range wf.Status.Conditions {
		if wf.Status.Conditions[i].Type == v1alpha1.ConditionTypePodRunning {
			cond = &wf.Status.Conditions[i]
		}
	}
	if cond == nil || (wf.Spec.Suspend != nil && *wf.Spec.Suspend) {
		return
	}
	plain, any := false, false
	for _, n := range wf.Status.Nodes {
		if podRunning(n) {
			any = true
			plain = plain || !isDaemoned(n)
		}
	}
	if plain && cond.Status != "True" || !any && cond.Status != "False" {
		t.Fatalf("PodRunning %s, but a pod running: %v", cond.Status, any)
	}
}

// BenchmarkSumNodes: the sums of every node of a finished chain of 1,000
// steps (what Reconcile computes once, when the workflow completes).
func BenchmarkSumNodes(b *testing.B) {
	wf := chainSpec(1000)
	drive(b, wf)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sumNodes(wf.Status.Nodes, func(v1alpha1.NodeStatus) {}, maxSumWords)
	}
}
