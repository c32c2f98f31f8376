package engine

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/synclock"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// recorder builds the Result of one pass. Every change the pass decides
// goes through it: the nodes it writes (put, and setPhase, addChild and
// killNode on top of put), the launches, kills and memoization saves of the
// Plan, the lock decisions, what the snapshot lacks, the workflow's new
// metadata, when to be called again, and the bound that ends the
// workflow. It reads nothing but what it records and the node tree it
// writes.
type recorder struct {
	status  *v1alpha1.WorkflowStatus // the status being built; its Nodes are facts.nodes
	rootID  string                   // the root node's ID: the workflow's name
	at      time.Time                // the pass's now, for finishedAt and wake-ups
	perPass int                      // Limits.MaxNodesPerPass

	changed    map[string]prevNode // what each node changed in this pass was before it
	changedIDs []string
	plan       Plan
	wakeAt     time.Time
	lockOps    []synclock.Decision // Result.Locks
	needs      Need                // Result.Need
	meta       *Metadata           // Result.Metadata

	stop       *limitError // a bound that ends the workflow Error (maxNodes, maxDepth)
	created    int         // nodes created in this pass (Limits.MaxNodesPerPass)
	sawActive  bool        // a leaf node still running, or waiting for a lock, was seen this pass
	sawRunning bool        // a Pod node Running was seen this pass (PodRunning)

	counters
	childSets map[string]map[string]struct{} // children of big nodes (addChild)
}

func newRecorder(wf *v1alpha1.Workflow, now time.Time, lim Limits) recorder {
	return recorder{status: &wf.Status, rootID: wf.Name, at: now, perPass: lim.MaxNodesPerPass,
		changed: map[string]prevNode{}, counters: counters{activePods: -1}}
}

// put stores n and records it as changed. Every write of a node goes through
// put, so Result.Changed is exact and the parallelism counters stay right.
func (rec *recorder) put(n v1alpha1.NodeStatus) {
	_, seen := rec.changed[n.ID]
	if !seen || rec.activePods >= 0 || rec.bcounts != nil {
		old, existed := rec.status.Nodes[n.ID]
		if rec.activePods >= 0 || rec.bcounts != nil {
			rec.count(old, existed, n)
		}
		if !seen {
			rec.changed[n.ID] = prevNode{existed: existed, progress: old.Progress, rd: old.ResourcesDuration}
			rec.changedIDs = append(rec.changedIDs, n.ID)
		}
	}
	rec.status.Nodes[n.ID] = n
}

// create stores a node the pass creates, and counts it against
// Limits.MaxNodesPerPass (yield).
func (rec *recorder) create(n v1alpha1.NodeStatus) {
	rec.created++
	rec.put(n)
}

// setPhase changes a node's phase, and its message when one is given, and
// sets finishedAt when the node becomes fulfilled (ctl/operator.go
// markNodePhase). It returns the stored node.
func (rec *recorder) setPhase(id string, phase v1alpha1.NodePhase, message ...string) v1alpha1.NodeStatus {
	n, ok := rec.status.Nodes[id]
	if !ok {
		return n
	}
	changed := false
	if n.Phase != phase {
		n.Phase = phase
		changed = true
	}
	if len(message) > 0 && n.Message != message[0] {
		n.Message = message[0]
		changed = true
	}
	if fulfilled(n) && n.FinishedAt.IsZero() {
		n.FinishedAt = metav1.NewTime(rec.at)
		changed = true
	}
	if changed {
		rec.put(n)
	}
	return n
}

// markError sets a node Error with the error's text.
func (rec *recorder) markError(id string, err error) v1alpha1.NodeStatus {
	return rec.setPhase(id, v1alpha1.NodeError, err.Error())
}

// addChild appends childID to the parent's children once (rule 1.7).
func (rec *recorder) addChild(parentID, childID string) {
	p, ok := rec.status.Nodes[parentID]
	if !ok {
		return
	}
	if len(p.Children) < childSetMin {
		if slices.Contains(p.Children, childID) {
			return
		}
	} else {
		set := rec.childSet(p)
		if _, dup := set[childID]; dup {
			return
		}
		set[childID] = struct{}{}
	}
	p.Children = append(p.Children, childID)
	rec.put(p)
}

// childSetMin is how many children a node has before addChild looks them up
// in a set: a loop of 100,000 iterations would otherwise cost a scan of
// its children for every iteration it adds.
const childSetMin = 64

// childSet returns the set of p's children, built once per pass (only
// addChild appends to Children).
func (rec *recorder) childSet(p v1alpha1.NodeStatus) map[string]struct{} {
	if rec.childSets == nil {
		rec.childSets = map[string]map[string]struct{}{}
	}
	set, ok := rec.childSets[p.ID]
	if !ok {
		set = make(map[string]struct{}, len(p.Children)+1)
		for _, c := range p.Children {
			set[c] = struct{}{}
		}
		rec.childSets[p.ID] = set
	}
	return set
}

// killNode sets a running node's final phase and asks the runtime to stop it.
func (rec *recorder) killNode(n v1alpha1.NodeStatus, phase v1alpha1.NodePhase, msg string) v1alpha1.NodeStatus {
	n.Daemoned = nil
	rec.put(n)
	out := rec.setPhase(n.ID, phase, msg)
	if isLeafType(n.Type) {
		rec.plan.Kill = append(rec.plan.Kill, Kill{NodeID: n.ID, Reason: msg})
	}
	rec.again() // nothing will report on a killed node: look again
	return out
}

// killDaemons stops the daemoned nodes among ids and marks them Succeeded
// (rule 10.5).
func (rec *recorder) killDaemons(ids []string) {
	for _, id := range ids {
		if n, ok := rec.status.Nodes[id]; ok && isDaemoned(n) && !n.Phase.Fulfilled() {
			rec.killNode(n, v1alpha1.NodeSucceeded, "")
		}
	}
}

// addLaunch plans the Launch of a leaf node that Status holds Pending.
func (rec *recorder) addLaunch(l Launch) { rec.plan.Launch = append(rec.plan.Launch, l) }

// addMemoSave plans a memoization cache write.
func (rec *recorder) addMemoSave(s MemoSave) { rec.plan.Memoize = append(rec.plan.Memoize, s) }

// addLockOp records a decision on a template-level lock.
func (rec *recorder) addLockOp(d synclock.Decision) { rec.lockOps = append(rec.lockOps, d) }

// setMetadata records the workflow's new labels and annotations (nil: no change).
func (rec *recorder) setMetadata(m *Metadata) { rec.meta = m }

// sawPod records a node the walk passed by: a Pod node Running makes the
// PodRunning condition True.
func (rec *recorder) sawPod(n v1alpha1.NodeStatus) {
	rec.sawRunning = rec.sawRunning || podRunning(n)
}

// sawWaiting records a leaf that still waits for a report or a lock: a
// report will follow, so keepGoing need not ask for a pass.
func (rec *recorder) sawWaiting() { rec.sawActive = true }

// need records something the snapshot lacks and asks for a pass at once,
// in which the caller has loaded it.
func (rec *recorder) need(add func(*Need)) {
	add(&rec.needs)
	rec.again()
}

// stopFor records a bound that ends the workflow Error at the end of the
// pass; the first one is kept.
func (rec *recorder) stopFor(e *limitError) {
	if rec.stop == nil {
		rec.stop = e
	}
}

// yield reports whether this pass has created Limits.MaxNodesPerPass nodes.
// The caller then creates no more, and Reconcile asks to be called again at
// once: a pass stays short however big the workflow, so a shutdown or a new
// result is seen soon.
func (rec *recorder) yield() bool {
	if rec.created < rec.perPass {
		return false
	}
	rec.again()
	return true
}

// wake asks to be called again at t (the earliest such time wins).
func (rec *recorder) wake(t time.Time) {
	if rec.wakeAt.IsZero() || t.Before(rec.wakeAt) {
		rec.wakeAt = t
	}
}

// again asks for another pass as soon as possible: this pass changed
// something that nothing else will report.
func (rec *recorder) again() { rec.wake(rec.at) }

// keepGoing asks for another pass when this one changed nodes but left
// nothing that will report back (no active step, no timer): a later part of
// the tree may now be able to move, as Argo's controller would notice from
// its own update.
func (rec *recorder) keepGoing() {
	if len(rec.changedIDs) == 0 || !rec.wakeAt.IsZero() || rec.status.Phase.Completed() ||
		len(rec.plan.Launch) > 0 || rec.sawActive {
		return
	}
	rec.again()
}

// endForLimit ends a workflow that crossed Limits.MaxNodes or
// Limits.MaxDepth in this pass (stopFor): running steps are killed and the
// workflow is Error with the bound's message.
func (rec *recorder) endForLimit() {
	if rec.stop == nil {
		return
	}
	msg := rec.stop.Error()
	for _, id := range sortedIDs(rec.status.Nodes) {
		n := rec.status.Nodes[id]
		if isLeafType(n.Type) && !n.Phase.Fulfilled() {
			rec.killNode(n, v1alpha1.NodeFailed, msg)
		}
	}
	rec.completeWorkflow(v1alpha1.WorkflowError, msg)
}

// result assembles the Result of the pass.
func (rec *recorder) result() Result {
	res := Result{Status: *rec.status, Changed: rec.changedIDs, Plan: rec.plan, Locks: rec.lockOps, Need: rec.needs, Metadata: rec.meta}
	if !rec.wakeAt.IsZero() && !rec.status.Phase.Completed() {
		d := rec.wakeAt.Sub(rec.at)
		if d < time.Millisecond {
			d = time.Millisecond
		}
		res.RequeueAfter = d
	}
	return res
}
