package engine

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// counters track active and failed nodes for parallelism and failFast
// (rules 10.1-10.3). They are built by one scan the first time they are
// needed in a pass and kept up to date by put.
type counters struct {
	activePods int // Pod nodes Pending or Running; -1 when not tracked
	bcounts    map[string]*boundaryCount
}

type boundaryCount struct {
	activePods     int // Pod nodes Pending or Running in this boundary
	activeChildren int // Pod, Steps or DAG nodes Pending or Running
	unsuccessful   int // Pod, Steps or DAG nodes Failed or Error
}

// podActive says whether a node counts against parallelism: a Pod node
// Pending or Running, but not one waiting for a lock (as in Argo).
func podActive(n v1alpha1.NodeStatus) bool {
	return n.Type == v1alpha1.NodeTypePod && (n.Phase == v1alpha1.NodePending || n.Phase == v1alpha1.NodeRunning) &&
		!waitingForLock(n)
}

func (r *run) count(old v1alpha1.NodeStatus, existed bool, n v1alpha1.NodeStatus) {
	if r.activePods >= 0 {
		if existed && podActive(old) {
			r.activePods--
		}
		if podActive(n) {
			r.activePods++
		}
	}
	if r.bcounts != nil {
		if existed {
			r.addBoundary(old, -1)
		}
		r.addBoundary(n, 1)
	}
}

func (r *run) addBoundary(n v1alpha1.NodeStatus, d int) {
	switch n.Type {
	case v1alpha1.NodeTypePod, v1alpha1.NodeTypeSteps, v1alpha1.NodeTypeDAG:
	default:
		return
	}
	if n.BoundaryID == "" {
		return
	}
	c := r.bcounts[n.BoundaryID]
	if c == nil {
		c = &boundaryCount{}
		r.bcounts[n.BoundaryID] = c
	}
	switch n.Phase {
	case v1alpha1.NodePending, v1alpha1.NodeRunning:
		c.activeChildren += d
		if n.Type == v1alpha1.NodeTypePod {
			c.activePods += d
		}
	case v1alpha1.NodeFailed, v1alpha1.NodeError:
		c.unsuccessful += d
	}
}

func (r *run) workflowActivePods() int {
	if r.activePods < 0 {
		r.activePods = 0
		for _, n := range r.nodes {
			if podActive(n) {
				r.activePods++
			}
		}
	}
	return r.activePods
}

func (r *run) boundary(id string) boundaryCount {
	if r.bcounts == nil {
		r.bcounts = map[string]*boundaryCount{}
		for _, n := range r.nodes {
			r.addBoundary(n, 1)
		}
	}
	if c := r.bcounts[id]; c != nil {
		return *c
	}
	return boundaryCount{}
}

// limitValue reads a parallelism value; ok is false when it is unset or not
// a number.
func limitValue(v *intstr.IntOrString) (int, bool) {
	if v == nil {
		return 0, false
	}
	if v.Type == intstr.String {
		n, err := strconv.Atoi(strings.TrimSpace(v.StrVal))
		return n, err == nil
	}
	return v.IntValue(), true
}

func failFast(t *v1alpha1.Template) bool { return t != nil && t.FailFast != nil && *t.FailFast }

const failFastMessage = "template has failed or errored children and failFast enabled"

// checkParallelism decides whether a node may be created or advanced now
// (ctl/operator.go checkParallelism).
func (r *run) checkParallelism(t *v1alpha1.Template, existing *v1alpha1.NodeStatus, opts execOpts) error {
	if limit, ok := limitValue(r.spec.Parallelism); ok && existing == nil && r.workflowActivePods() >= limit {
		return errParallelism
	}
	isGroup := t.Type() == v1alpha1.TemplateTypeSteps || t.Type() == v1alpha1.TemplateTypeDAG
	if existing != nil && isGroup {
		if err := r.holdBoundary(existing.ID, existing.Name, t, false); err != nil {
			return err
		}
	}
	if opts.boundaryID != "" && opts.boundaryTmpl != nil &&
		(existing == nil || (existing.Phase != v1alpha1.NodePending && existing.Phase != v1alpha1.NodeRunning)) {
		if b, ok := r.nodes[opts.boundaryID]; ok {
			return r.holdBoundary(b.ID, b.Name, opts.boundaryTmpl, true)
		}
	}
	return nil
}

// holdBoundary applies a Steps or DAG template's failFast and parallelism to
// its boundary: once a child failed no new child starts, and when none is
// active the template fails (rule 10.3).
func (r *run) holdBoundary(id, name string, t *v1alpha1.Template, forChild bool) error {
	limit, hasLimit := limitValue(t.Parallelism)
	if !failFast(t) && !hasLimit {
		return nil
	}
	c := r.boundary(id)
	if failFast(t) && c.unsuccessful > 0 {
		if c.activePods == 0 {
			if t.Type() == v1alpha1.TemplateTypeSteps {
				if g, ok := r.lastStepGroup(name, len(t.Steps)); ok {
					r.setPhase(g.ID, v1alpha1.NodeFailed, failFastMessage)
				}
			}
			r.setPhase(id, v1alpha1.NodeFailed, failFastMessage)
			r.again()
		}
		return errParallelism
	}
	active := c.activePods
	if forChild {
		active = c.activeChildren
	}
	if hasLimit && active >= limit {
		return errParallelism
	}
	return nil
}

// again asks for another pass as soon as possible: this pass changed
// something that nothing else will report.
func (r *run) again() { r.wake(r.now) }

// killNode sets a running node's final phase and asks the runtime to stop it.
func (r *run) killNode(n v1alpha1.NodeStatus, phase v1alpha1.NodePhase, msg string) v1alpha1.NodeStatus {
	n.Daemoned = nil
	r.put(n)
	out := r.setPhase(n.ID, phase, msg)
	if isLeafType(n.Type) {
		r.plan.Kill = append(r.plan.Kill, Kill{NodeID: n.ID, Reason: msg})
	}
	r.again() // nothing will report on a killed node: look again
	return out
}

// applyExecutionControl applies a shutdown or a passed workflow deadline to
// the nodes that are still active (rules 8.1, 10.4).
func (r *run) applyExecutionControl() {
	if r.shutdown == "" && !r.pastDeadline {
		return
	}
	exits := r.exitNodeNames()
	stopped := fmt.Sprintf("Stopped with strategy '%s'", r.shutdown)
	for _, id := range sortedIDs(r.nodes) {
		n := r.nodes[id]
		if n.Phase.Fulfilled() {
			continue
		}
		spare := inExitHandler(n.Name, exits)
		stopIt := r.shutdown != "" && !(r.shutdown == v1alpha1.ShutdownStop && spare)
		switch {
		case isLeafType(n.Type) && isDaemoned(n) && r.shutdown != "":
			r.killNode(n, v1alpha1.NodeSucceeded, "")
		case isLeafType(n.Type) && stopIt:
			r.killNode(n, v1alpha1.NodeFailed, fmt.Sprintf("workflow shutdown with strategy:  %s", r.shutdown))
		case isLeafType(n.Type) && r.pastDeadline && !spare:
			r.killNode(n, v1alpha1.NodeFailed, "Step exceeded its deadline")
		case n.Type == v1alpha1.NodeTypeSuspend && stopIt:
			r.setPhase(n.ID, v1alpha1.NodeFailed, stopped)
		case n.Type == v1alpha1.NodeTypeSuspend && r.pastDeadline && !spare:
			r.setPhase(n.ID, v1alpha1.NodeFailed, "Step exceeded its deadline")
		}
	}
}

// exitNodeNames lists the names of the exit-handler and hook nodes.
func (r *run) exitNodeNames() []string {
	var names []string
	for _, n := range r.nodes {
		if isHooked(n) {
			names = append(names, n.Name)
		}
	}
	return names
}

// inExitHandler reports whether a node belongs to the subtree of one of the
// hook nodes: node names are tree paths (rule 1.4).
func inExitHandler(name string, exits []string) bool {
	for _, e := range exits {
		if name == e {
			return true
		}
		if strings.HasPrefix(name, e) {
			switch name[len(e)] {
			case '(', '[', '.':
				return true
			}
		}
	}
	return false
}

// activePodsRemain reports whether a leaf node still waits for a report; the
// workflow does not complete before they all reported (rule 2.8a).
func (r *run) activePodsRemain() bool {
	for _, n := range r.nodes {
		if isLeafType(n.Type) && !n.Phase.Fulfilled() && !isDaemoned(n) {
			return true
		}
	}
	return false
}

// killDaemons stops the daemoned nodes among ids and marks them Succeeded
// (rule 10.5).
func (r *run) killDaemons(ids []string) {
	for _, id := range ids {
		if n, ok := r.nodes[id]; ok && isDaemoned(n) && !n.Phase.Fulfilled() {
			r.killNode(n, v1alpha1.NodeSucceeded, "")
		}
	}
}
