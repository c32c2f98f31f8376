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

func (c *counters) count(old v1alpha1.NodeStatus, existed bool, n v1alpha1.NodeStatus) {
	if c.activePods >= 0 {
		if existed && podActive(old) {
			c.activePods--
		}
		if podActive(n) {
			c.activePods++
		}
	}
	if c.bcounts != nil {
		if existed {
			c.addBoundary(old, -1)
		}
		c.addBoundary(n, 1)
	}
}

func (c *counters) addBoundary(n v1alpha1.NodeStatus, d int) {
	switch n.Type {
	case v1alpha1.NodeTypePod, v1alpha1.NodeTypeSteps, v1alpha1.NodeTypeDAG:
	default:
		return
	}
	if n.BoundaryID == "" {
		return
	}
	b := c.bcounts[n.BoundaryID]
	if b == nil {
		b = &boundaryCount{}
		c.bcounts[n.BoundaryID] = b
	}
	switch n.Phase {
	case v1alpha1.NodePending, v1alpha1.NodeRunning:
		b.activeChildren += d
		if n.Type == v1alpha1.NodeTypePod {
			b.activePods += d
		}
	case v1alpha1.NodeFailed, v1alpha1.NodeError:
		b.unsuccessful += d
	}
}

// workflowActivePods counts the Pod nodes of nodes that count against the
// workflow's parallelism, scanning them the first time.
func (c *counters) workflowActivePods(nodes v1alpha1.Nodes) int {
	if c.activePods < 0 {
		c.activePods = 0
		for _, n := range nodes {
			if podActive(n) {
				c.activePods++
			}
		}
	}
	return c.activePods
}

// boundary returns the counts of the boundary id, scanning nodes the first
// time.
func (c *counters) boundary(nodes v1alpha1.Nodes, id string) boundaryCount {
	if c.bcounts == nil {
		c.bcounts = map[string]*boundaryCount{}
		for _, n := range nodes {
			c.addBoundary(n, 1)
		}
	}
	if b := c.bcounts[id]; b != nil {
		return *b
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

// checkParallelism reports whether parallelism or failFast holds a node
// back: it may not be created or advanced now (ctl/operator.go
// checkParallelism).
func (r *pass) checkParallelism(t *v1alpha1.Template, existing *v1alpha1.NodeStatus, opts execOpts) bool {
	if limit, ok := limitValue(r.spec.Parallelism); ok && existing == nil && r.workflowActivePods(r.nodes) >= limit {
		return true
	}
	isGroup := t.Type() == v1alpha1.TemplateTypeSteps || t.Type() == v1alpha1.TemplateTypeDAG
	if existing != nil && isGroup && r.holdBoundary(existing.ID, existing.Name, t, false) {
		return true
	}
	if opts.boundaryID != "" && opts.boundaryTmpl != nil &&
		(existing == nil || (existing.Phase != v1alpha1.NodePending && existing.Phase != v1alpha1.NodeRunning)) {
		if b, ok := r.nodes[opts.boundaryID]; ok {
			return r.holdBoundary(b.ID, b.Name, opts.boundaryTmpl, true)
		}
	}
	return false
}

// holdBoundary applies a Steps or DAG template's failFast and parallelism to
// its boundary: once a child failed no new child starts, and when none is
// active the template fails (rule 10.3). It reports whether the node is held.
func (r *pass) holdBoundary(id, name string, t *v1alpha1.Template, forChild bool) bool {
	limit, hasLimit := limitValue(t.Parallelism)
	if !failFast(t) && !hasLimit {
		return false
	}
	c := r.boundary(r.nodes, id)
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
		return true
	}
	active := c.activePods
	if forChild {
		active = c.activeChildren
	}
	return hasLimit && active >= limit
}

// applyExecutionControl applies a shutdown or a passed workflow deadline to
// the nodes that are still active (rules 8.1, 10.4).
func (r *pass) applyExecutionControl() {
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
func (f *facts) exitNodeNames() []string {
	var names []string
	for _, n := range f.nodes {
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
func (f *facts) activePodsRemain() bool {
	for _, n := range f.nodes {
		if isLeafType(n.Type) && !n.Phase.Fulfilled() && !isDaemoned(n) {
			return true
		}
	}
	return false
}
