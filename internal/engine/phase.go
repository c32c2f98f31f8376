package engine

import (
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

// completeWorkflow ends the workflow (rule 2.8a): phase, message,
// finishedAt and the Completed condition. An Error workflow whose root is
// still Running gets the root Error "Workflow operation error". Daemons
// still up are stopped.
func (r *run) completeWorkflow(phase v1alpha1.WorkflowPhase, message string) {
	st := &r.wf.Status
	st.Phase = phase
	st.Message = message
	if phase == v1alpha1.WorkflowError {
		if root, ok := r.nodes[r.wf.Name]; ok && root.Phase == v1alpha1.NodeRunning {
			r.setPhase(root.ID, v1alpha1.NodeError, "Workflow operation error")
		}
	}
	st.FinishedAt = metav1.NewTime(r.now)
	upsertCondition(&st.Conditions, v1alpha1.Condition{Type: v1alpha1.ConditionTypeCompleted, Status: metav1.ConditionTrue})
	var daemons []string
	for _, id := range sortedIDs(r.nodes) {
		if isDaemoned(r.nodes[id]) {
			daemons = append(daemons, id)
		}
	}
	r.killDaemons(daemons)
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
func (r *run) setPodRunning() {
	st := &r.wf.Status
	had := -1
	for i, c := range st.Conditions {
		if c.Type == v1alpha1.ConditionTypePodRunning {
			had = i
		}
	}
	running := r.sawRunning
	for _, id := range r.changedIDs {
		if running {
			break
		}
		running = podRunning(r.nodes[id])
	}
	if !running && had >= 0 && r.suspended() {
		return
	}
	if !running && had >= 0 && st.Conditions[had].Status == metav1.ConditionTrue && len(r.plan.Launch) == 0 {
		for _, n := range r.nodes {
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
