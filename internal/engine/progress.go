package engine

import (
	"strconv"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Progress and resource durations (Argo's workflow/progress and
// util/resource updaters):
//
//   - An executable node (Pod, Container, HTTP, Plugin, Suspend) has
//     progress "0/1", and "1/1" once Succeeded: a Failed or Error node
//     stays "0/1".
//   - A Pod node gets its resourcesDuration when it completes (resources.go).
//   - The workflow sums its executable nodes' progress and its Pod nodes'
//     resourcesDuration. Both are kept by delta: each executable node
//     changed in the pass adds its change, so a pass costs O(changed nodes).
//   - Any other node has the sums of what it reaches through children
//     (nodesums.go). Those move on every node before the one that changed
//     (in a chain of steps, every earlier group), so they are written once,
//     when the workflow completes, and not on every pass: SumNodes fills
//     them in for a running workflow when it is read.

// prevNode is what a node was before the pass first changed it.
type prevNode struct {
	existed  bool
	progress v1alpha1.Progress
	rd       v1alpha1.ResourcesDuration
}

// isExecutable reports whether a node's progress is its own (Argo's
// progress.executable) rather than a sum.
func isExecutable(t v1alpha1.NodeType) bool {
	switch t {
	case v1alpha1.NodeTypePod, v1alpha1.NodeTypeContainer, v1alpha1.NodeTypeHTTP,
		v1alpha1.NodeTypePlugin, v1alpha1.NodeTypeSuspend:
		return true
	}
	return false
}

// ownProgress is an executable node's progress in its phase: done only
// when it succeeded (a container a containerSet skipped did not).
func ownProgress(p v1alpha1.NodePhase) v1alpha1.Progress {
	if p == v1alpha1.NodeSucceeded {
		return "1/1"
	}
	return "0/1"
}

// parseProgress reads "N/M"; anything else is 0/0.
func parseProgress(p v1alpha1.Progress) (int64, int64) {
	s := string(p)
	i := strings.IndexByte(s, '/')
	if i < 0 {
		return 0, 0
	}
	n, err1 := strconv.ParseInt(s[:i], 10, 64)
	m, err2 := strconv.ParseInt(s[i+1:], 10, 64)
	if err1 != nil || err2 != nil || n < 0 || m < 0 || n > m {
		return 0, 0
	}
	return n, m
}

// formatProgress writes "N/M", or "" when the total is 0 (Argo leaves such
// a node's progress unset).
func formatProgress(n, m int64) v1alpha1.Progress {
	if m <= 0 || n < 0 || n > m {
		return ""
	}
	b := make([]byte, 0, 16)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, m, 10)
	return v1alpha1.Progress(b)
}

// updateSums brings progress and resourcesDuration up to date after a pass:
// own values and workflow totals always, other nodes' sums once the
// workflow has completed.
func (rec *recorder) updateSums() {
	switch {
	case rec.status.Progress == "" && rec.hadExecutable():
		rec.recomputeTotals() // a status written before braid kept progress
	case len(rec.changedIDs) > 0:
		rec.addOwnDeltas()
	}
	if rec.status.Phase.Completed() {
		sumNodes(rec.status.Nodes, rec.put, maxSumWords)
	}
}

// hadExecutable reports whether an executable node existed before the pass.
func (rec *recorder) hadExecutable() bool {
	for id, n := range rec.status.Nodes {
		if prev, ok := rec.changed[id]; isExecutable(n.Type) && (!ok || prev.existed) {
			return true
		}
	}
	return false
}

// addOwnDeltas sets the own progress of every changed executable node and
// adds each one's change to the workflow's totals.
func (rec *recorder) addOwnDeltas() {
	st := rec.status
	var dn, dm int64
	var rd v1alpha1.ResourcesDuration
	for _, id := range rec.changedIDs {
		n := rec.status.Nodes[id]
		if !isExecutable(n.Type) {
			continue
		}
		if own := ownProgress(n.Phase); n.Progress != own {
			n.Progress = own
			rec.put(n)
		}
		prev := rec.changed[id]
		on, om := parseProgress(prev.progress)
		nn, nm := parseProgress(n.Progress)
		dn, dm = dn+nn-on, dm+nm-om
		if n.Type == v1alpha1.NodeTypePod && !sameDurations(prev.rd, n.ResourcesDuration) {
			rd = addDurations(addDurations(rd, n.ResourcesDuration, 1), prev.rd, -1)
		}
	}
	if dn != 0 || dm != 0 {
		n, m := parseProgress(st.Progress)
		if p := formatProgress(n+dn, m+dm); p != "" {
			st.Progress = p
		}
	}
	if rd != nil {
		st.ResourcesDuration = nonEmpty(addDurations(st.ResourcesDuration, rd, 1))
	}
}

// recomputeTotals sets every executable node's own progress and the
// workflow's totals from scratch.
func (rec *recorder) recomputeTotals() {
	var done, total int64
	rd := v1alpha1.ResourcesDuration{}
	for _, id := range sortedIDs(rec.status.Nodes) {
		n := rec.status.Nodes[id]
		if !isExecutable(n.Type) {
			continue
		}
		if own := ownProgress(n.Phase); n.Progress != own {
			n.Progress = own
			rec.put(n)
		}
		total++
		if n.Progress == "1/1" {
			done++
		}
		if n.Type == v1alpha1.NodeTypePod {
			for k, v := range n.ResourcesDuration {
				rd[k] += v
			}
		}
	}
	if p := formatProgress(done, total); p != "" {
		rec.status.Progress = p
	}
	rec.status.ResourcesDuration = nonEmpty(rd)
}

func nonEmpty(rd v1alpha1.ResourcesDuration) v1alpha1.ResourcesDuration {
	if len(rd) == 0 {
		return nil
	}
	return rd
}
