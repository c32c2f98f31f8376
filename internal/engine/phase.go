package engine

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// workflowPhaseOf maps the root node's phase to a workflow phase (rule 2.2).
func workflowPhaseOf(p v1alpha1.NodePhase) v1alpha1.WorkflowPhase {
	switch p {
	case v1alpha1.NodePending:
		return v1alpha1.WorkflowPending
	case v1alpha1.NodeSucceeded, v1alpha1.NodeSkipped, v1alpha1.NodeOmitted:
		return v1alpha1.WorkflowSucceeded
	case v1alpha1.NodeFailed:
		return v1alpha1.WorkflowFailed
	case v1alpha1.NodeError:
		return v1alpha1.WorkflowError
	}
	return v1alpha1.WorkflowRunning
}

// failureMessage is the message of a workflow that a Failed or Error node
// (its root, or its exit handler) ended: the node's own message or, when it
// has none (a DAG or a TaskGroup, rule 2.5), "child '<id>' failed: <msg>"
// for the deepest failed child that has one. Argo leaves a failed DAG
// workflow's message empty; braid gives every Failed or Error workflow a
// message.
func (f *facts) failureMessage(n v1alpha1.NodeStatus) string {
	for depth := 0; n.Message == "" && depth <= f.lim.MaxDepth*2; depth++ {
		c, ok := f.failedChild(n)
		if !ok {
			break
		}
		if c.Message != "" {
			return fmt.Sprintf("child '%s' failed: %s", c.ID, c.Message)
		}
		n = c
	}
	if n.Message == "" {
		return fmt.Sprintf("%s node '%s' ended %s", n.Type, n.Name, n.Phase)
	}
	return n.Message
}

// failedChild finds the Failed or Error node that made n fail: among its
// children and the nodes of its boundary, one with n's phase if any, the
// one that finished last (then by name).
func (f *facts) failedChild(n v1alpha1.NodeStatus) (v1alpha1.NodeStatus, bool) {
	var best v1alpha1.NodeStatus
	found := false
	better := func(c v1alpha1.NodeStatus) bool {
		switch {
		case !found:
			return true
		case (c.Phase == n.Phase) != (best.Phase == n.Phase):
			return c.Phase == n.Phase
		case !c.FinishedAt.Equal(&best.FinishedAt):
			return best.FinishedAt.Before(&c.FinishedAt)
		}
		return c.Name < best.Name
	}
	consider := func(c v1alpha1.NodeStatus) {
		if c.ID != n.ID && c.Phase.FailedOrError() && !isHooked(c) && better(c) {
			best, found = c, true
		}
	}
	for _, id := range n.Children {
		consider(f.nodes[id])
	}
	if n.Type == v1alpha1.NodeTypeSteps || n.Type == v1alpha1.NodeTypeDAG {
		for _, c := range f.nodes {
			if c.BoundaryID == n.ID {
				consider(c)
			}
		}
	}
	return best, found
}

// completeWorkflow ends the workflow (rule 2.8a): phase, message,
// finishedAt and the Completed condition. An Error workflow whose root is
// still Running gets the root Error "Workflow operation error". Daemons
// still up are stopped.
func (rec *recorder) completeWorkflow(phase v1alpha1.WorkflowPhase, message string) {
	st := rec.status
	st.Phase = phase
	st.Message = message
	if phase == v1alpha1.WorkflowError {
		if root, ok := st.Nodes[rec.rootID]; ok && root.Phase == v1alpha1.NodeRunning {
			rec.setPhase(root.ID, v1alpha1.NodeError, "Workflow operation error")
		}
	}
	st.FinishedAt = metav1.NewTime(rec.at)
	upsertCondition(&st.Conditions, v1alpha1.Condition{Type: v1alpha1.ConditionTypeCompleted, Status: metav1.ConditionTrue})
	var daemons []string
	for _, id := range sortedIDs(st.Nodes) {
		if isDaemoned(st.Nodes[id]) {
			daemons = append(daemons, id)
		}
	}
	rec.killDaemons(daemons)
}

func upsertCondition(conds *v1alpha1.Conditions, c v1alpha1.Condition) {
	for i := range *conds {
		if (*conds)[i].Type == c.Type {
			(*conds)[i] = c
			return
		}
	}
	*conds = append(*conds, c)
}

// setPodRunning sets the PodRunning condition: True while a Pod node is
// Running, else False (ctl/operator.go podReconciliation; Argo's is looser:
// True only in a pass that changed a running pod). A running Pod node the
// pass walked past or changed makes it True at once. When it was True and
// the pass saw none, the nodes are scanned, unless the pass launched a step:
// such a pass walked the whole active tree (a failFast or parallelism hold,
// which can pass running pods by, launches nothing; sums_test.go checks
// this after every pass of every engine test). A suspended workflow is not
// walked and keeps its condition.
func (rec *recorder) setPodRunning(suspended bool) {
	st := rec.status
	had := -1
	for i, c := range st.Conditions {
		if c.Type == v1alpha1.ConditionTypePodRunning {
			had = i
		}
	}
	running := rec.sawRunning
	for _, id := range rec.changedIDs {
		if running {
			break
		}
		running = podRunning(st.Nodes[id])
	}
	if !running && had >= 0 && suspended {
		return
	}
	if !running && had >= 0 && st.Conditions[had].Status == metav1.ConditionTrue && len(rec.plan.Launch) == 0 {
		for _, n := range st.Nodes {
			if podRunning(n) {
				running = true
				break
			}
		}
	}
	c := v1alpha1.Condition{Type: v1alpha1.ConditionTypePodRunning, Status: metav1.ConditionFalse}
	if running {
		c.Status = metav1.ConditionTrue
	}
	if had >= 0 {
		st.Conditions[had] = c
		return
	}
	// Argo adds PodRunning on its first pass, before Completed.
	for i, x := range st.Conditions {
		if x.Type == v1alpha1.ConditionTypeCompleted {
			st.Conditions = append(st.Conditions[:i], append(v1alpha1.Conditions{c}, st.Conditions[i:]...)...)
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

func podRunning(n v1alpha1.NodeStatus) bool {
	return n.Type == v1alpha1.NodeTypePod && n.Phase == v1alpha1.NodeRunning
}
