package engine

import (
	"math/bits"
	"sort"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// SumNodes sets the progress of every node that is not executable (Steps,
// DAG, StepGroup, TaskGroup, Retry, Skipped) to the sum of the progress of
// the executable nodes it reaches through children, each counted once, and
// the resourcesDuration of each such node that is fulfilled to the sum over
// the Pod nodes it reaches (Argo's progress and resource updaters; a
// StepGroup reaches the later groups through its steps' children, so "[0]"
// counts every step of its template). Reconcile writes these sums when a
// workflow completes; a server calls SumNodes to show them on a workflow
// that is still running. It changes st.Nodes in place and does nothing
// else; the executable nodes' own values and the workflow's totals are
// Reconcile's.
//
// It costs O(edges x executable nodes / 64) with one bit set per node, or,
// when those sets would take more than maxSumWords words, one walk per node.
func SumNodes(st *v1alpha1.WorkflowStatus) {
	sumNodes(st.Nodes, func(n v1alpha1.NodeStatus) { st.Nodes[n.ID] = n }, maxSumWords)
}

// maxSumWords bounds the memory of the bit sets (32 MiB).
const maxSumWords = 4 << 20

// sumGraph is the node graph with integer indices.
type sumGraph struct {
	ids      []string
	exec     []bool // executable
	children [][]int32
	bit      []int32  // the executable node's bit, or -1
	pods     []int32  // node index of each bit
	done     []uint64 // bits of the executable nodes that count as done
	keys     []apiv1.ResourceName
	rd       []int64  // per bit, its Pod node's resourcesDuration by keys
	has      []bool   // per bit and key, whether the Pod node has that key
	withRD   []uint64 // bits of the Pod nodes with a resourcesDuration
	full     bool     // every such Pod node has every key
}

func newSumGraph(nodes v1alpha1.Nodes) *sumGraph {
	g := &sumGraph{ids: make([]string, 0, len(nodes))}
	idx := make(map[string]int32, len(nodes))
	for id := range nodes {
		idx[id] = int32(len(g.ids))
		g.ids = append(g.ids, id)
	}
	g.exec = make([]bool, len(g.ids))
	g.children = make([][]int32, len(g.ids))
	g.bit = make([]int32, len(g.ids))
	var podNodes []*v1alpha1.NodeStatus
	for i, id := range g.ids {
		n := nodes[id]
		if len(n.Children) > 0 {
			cs := make([]int32, 0, len(n.Children))
			for _, c := range n.Children {
				if j, ok := idx[c]; ok {
					cs = append(cs, j)
				}
			}
			g.children[i] = cs
		}
		g.bit[i] = -1
		if isExecutable(n.Type) {
			g.exec[i] = true
			g.bit[i] = int32(len(g.pods))
			g.pods = append(g.pods, int32(i))
			podNodes = append(podNodes, &n)
		}
	}
	g.done = make([]uint64, (len(g.pods)+63)/64)
	key := map[apiv1.ResourceName]int{}
	for b, n := range podNodes {
		if d, _ := parseProgress(n.Progress); d > 0 {
			g.done[b/64] |= 1 << (uint(b) % 64)
		}
		if n.Type != v1alpha1.NodeTypePod {
			continue
		}
		for k := range n.ResourcesDuration {
			if _, ok := key[k]; !ok {
				key[k] = len(g.keys)
				g.keys = append(g.keys, k)
			}
		}
	}
	g.rd = make([]int64, len(g.pods)*len(g.keys))
	g.has = make([]bool, len(g.pods)*len(g.keys))
	g.withRD = make([]uint64, len(g.done))
	g.full = true
	for b, n := range podNodes {
		if n.Type != v1alpha1.NodeTypePod {
			continue
		}
		for k, v := range n.ResourcesDuration {
			g.rd[b*len(g.keys)+key[k]] = int64(v)
			g.has[b*len(g.keys)+key[k]] = true
		}
		if len(n.ResourcesDuration) > 0 {
			g.withRD[b/64] |= 1 << (uint(b) % 64)
			g.full = g.full && len(n.ResourcesDuration) == len(g.keys)
		}
	}
	return g
}

// sumNodes computes the sums of SumNodes and hands every node whose sums
// moved to set. Bit sets are used when they fit in maxWords words.
func sumNodes(nodes v1alpha1.Nodes, set func(v1alpha1.NodeStatus), maxWords int) {
	if len(nodes) == 0 {
		return
	}
	g := newSumGraph(nodes)
	w := (len(g.pods) + 63) / 64
	var reach func(i int, withRD bool) (done, total int64, rd v1alpha1.ResourcesDuration)
	if w*len(g.ids) <= maxWords {
		sets := g.reachSets(w)
		reach = func(i int, withRD bool) (int64, int64, v1alpha1.ResourcesDuration) {
			return g.fromSet(sets[i*w:(i+1)*w], withRD)
		}
	} else {
		stamp := make([]int32, len(g.ids))
		for i := range stamp {
			stamp[i] = -1
		}
		reach = func(i int, withRD bool) (int64, int64, v1alpha1.ResourcesDuration) { return g.walk(i, stamp, withRD) }
	}
	var moved []v1alpha1.NodeStatus
	for i, id := range g.ids {
		if g.exec[i] {
			continue
		}
		n := nodes[id]
		done, total, rd := reach(i, fulfilled(n))
		changed := false
		if p := formatProgress(done, total); p != n.Progress && (p != "" || n.Progress != "") {
			n.Progress = p
			changed = true
		}
		if fulfilled(n) && !sameDurations(rd, n.ResourcesDuration) {
			n.ResourcesDuration = rd
			changed = true
		}
		if changed {
			moved = append(moved, n)
		}
	}
	sort.Slice(moved, func(a, b int) bool { return moved[a].ID < moved[b].ID })
	for _, n := range moved {
		set(n)
	}
}

// reachSets returns, for every node, the bit set of the executable nodes
// it reaches, w words each. Nodes are done children first; a cycle (which
// a valid status never has) is cut where it closes.
func (g *sumGraph) reachSets(w int) []uint64 {
	sets := make([]uint64, w*len(g.ids))
	state := make([]uint8, len(g.ids)) // 0 new, 1 on the stack, 2 done
	type frame struct{ i, next int32 }
	var stack []frame
	for root := range g.ids {
		if state[root] != 0 {
			continue
		}
		stack = append(stack[:0], frame{int32(root), 0})
		state[root] = 1
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if int(f.next) < len(g.children[f.i]) {
				c := g.children[f.i][f.next]
				f.next++
				if state[c] == 0 {
					state[c] = 1
					stack = append(stack, frame{c, 0})
				}
				continue
			}
			i := f.i
			stack = stack[:len(stack)-1]
			state[i] = 2
			s := sets[int(i)*w : int(i+1)*w]
			for _, c := range g.children[i] {
				if state[c] != 2 {
					continue // a back edge
				}
				for k, v := range sets[int(c)*w : int(c+1)*w] {
					s[k] |= v
				}
				if b := g.bit[c]; b >= 0 {
					s[b/64] |= 1 << (uint(b) % 64)
				}
			}
		}
	}
	return sets
}

// fromSet sums the executable nodes of one bit set; the resources only
// when withRD.
func (g *sumGraph) fromSet(s []uint64, withRD bool) (int64, int64, v1alpha1.ResourcesDuration) {
	var done, total int64
	acc := g.newAcc()
	for k, v := range s {
		total += int64(bits.OnesCount64(v))
		done += int64(bits.OnesCount64(v & g.done[k]))
		if !withRD || len(g.keys) == 0 {
			continue
		}
		for v &= g.withRD[k]; v != 0; v &= v - 1 {
			acc.add(g, k*64+bits.TrailingZeros64(v))
		}
	}
	return done, total, acc.durations(g)
}

// rdAcc sums resource durations by key.
type rdAcc struct {
	sum []int64
	has []bool
}

func (g *sumGraph) newAcc() rdAcc {
	return rdAcc{sum: make([]int64, len(g.keys)), has: make([]bool, len(g.keys))}
}

func (a rdAcc) add(g *sumGraph, b int) {
	n := len(g.keys)
	row := g.rd[b*n : (b+1)*n]
	if g.full {
		for j, x := range row {
			a.sum[j] += x
		}
		a.has[0] = true
		return
	}
	for j, x := range row {
		if g.has[b*n+j] {
			a.sum[j] += x
			a.has[j] = true
		}
	}
}

// durations returns the keys some Pod node contributed (nil when none).
func (a rdAcc) durations(g *sumGraph) v1alpha1.ResourcesDuration {
	var rd v1alpha1.ResourcesDuration
	for j, k := range g.keys {
		if !a.has[j] && !(g.full && a.has[0]) {
			continue
		}
		if rd == nil {
			rd = make(v1alpha1.ResourcesDuration, len(g.keys))
		}
		rd[k] = v1alpha1.ResourceDuration(a.sum[j])
	}
	return rd
}

// walk sums what node i reaches with a fresh walk (Argo's way), marking the
// nodes it visits with i in stamp.
func (g *sumGraph) walk(i int, stamp []int32, withRD bool) (int64, int64, v1alpha1.ResourcesDuration) {
	var done, total int64
	acc := g.newAcc()
	stack := append([]int32(nil), g.children[i]...)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if stamp[c] == int32(i) {
			continue
		}
		stamp[c] = int32(i)
		stack = append(stack, g.children[c]...)
		b := int(g.bit[c])
		if b < 0 {
			continue
		}
		total++
		if g.done[b/64]&(1<<(uint(b)%64)) != 0 {
			done++
		}
		if withRD && g.withRD[b/64]&(1<<(uint(b)%64)) != 0 {
			acc.add(g, b)
		}
	}
	return done, total, acc.durations(g)
}
