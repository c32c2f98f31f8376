package wfops

import (
	"sort"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Labels and annotations the operations read or write.
const (
	labelPhase           = "workflows.argoproj.io/phase"
	labelCompleted       = "workflows.argoproj.io/completed"
	labelWorkflow        = "workflows.argoproj.io/workflow"
	labelArchiving       = "workflows.argoproj.io/workflow-archiving-status"
	labelResubmittedFrom = "workflows.argoproj.io/resubmitted-from-workflow"
	braidPrefix          = "braid.dev/"
	// AnnotationRetryGeneration counts the manual retries of a workflow
	// (v1alpha1.AnnotationRetryGeneration).
	AnnotationRetryGeneration = v1alpha1.AnnotationRetryGeneration
)

// completed reports whether the workflow has ended, by its phase or by the
// completed label the controller sets.
func completed(wf *v1alpha1.Workflow) bool {
	return wf.Status.Phase.Completed() || wf.Labels[labelCompleted] == "true"
}

func sortedIDs(nodes v1alpha1.Nodes) []string {
	ids := make([]string, 0, len(nodes))
	for id := range nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isHooked(n v1alpha1.NodeStatus) bool { return n.NodeFlag != nil && n.NodeFlag.Hooked }

// isGroupType reports whether nodes of type t only aggregate their children.
func isGroupType(t v1alpha1.NodeType) bool {
	switch t {
	case v1alpha1.NodeTypeSteps, v1alpha1.NodeTypeDAG, v1alpha1.NodeTypeStepGroup, v1alpha1.NodeTypeTaskGroup:
		return true
	}
	return false
}

// reopenable reports whether a node of type t is reset to Running, not
// deleted, when something inside it must run again.
func reopenable(t v1alpha1.NodeType) bool {
	return isGroupType(t) || t == v1alpha1.NodeTypeRetry
}

func isActiveSuspend(n v1alpha1.NodeStatus) bool {
	return n.Type == v1alpha1.NodeTypeSuspend && n.Phase == v1alpha1.NodeRunning
}

// tree indexes a node map for walks up and down.
type tree struct {
	nodes   v1alpha1.Nodes
	parents map[string][]string // child ID -> IDs of the nodes listing it
}

func newTree(nodes v1alpha1.Nodes) *tree {
	t := &tree{nodes: nodes, parents: map[string][]string{}}
	for _, id := range sortedIDs(nodes) {
		for _, c := range nodes[id].Children {
			t.parents[c] = append(t.parents[c], id)
		}
	}
	return t
}

// containers returns the nodes that structurally hold the node: its boundary
// (the enclosing Steps or DAG node) and each node that lists it as a child
// and whose name its own name extends (a step group, a TaskGroup, a Retry
// node, or the node a hook hangs from). A node that lists it only because it
// runs after it (a DAG dependency, the previous step group) is not one.
func (t *tree) containers(id string) []string {
	n, ok := t.nodes[id]
	if !ok {
		return nil
	}
	var out []string
	if _, ok := t.nodes[n.BoundaryID]; ok && n.BoundaryID != id {
		out = append(out, n.BoundaryID)
	}
	for _, p := range t.parents[id] {
		pn := t.nodes[p]
		if p != n.BoundaryID && extendsName(n.Name, pn.Name) {
			out = append(out, p)
		}
	}
	return out
}

// extendsName reports whether child is parent followed by ".", "(" or "[".
func extendsName(child, parent string) bool {
	rest, ok := strings.CutPrefix(child, parent)
	return ok && rest != "" && strings.ContainsRune(".([", rune(rest[0]))
}

// ancestors returns every node above id through containers, nearest first.
func (t *tree) ancestors(id string) []string {
	seen := map[string]bool{id: true}
	var out []string
	queue := []string{id}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, c := range t.containers(cur) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// subtree adds id and every node reachable from it through children to set.
func (t *tree) subtree(id string, set map[string]bool) {
	queue := []string{id}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if set[cur] {
			continue
		}
		if _, ok := t.nodes[cur]; !ok {
			continue
		}
		set[cur] = true
		queue = append(queue, t.nodes[cur].Children...)
	}
}

// templateOf finds the local template a node runs: by templateName in
// spec.templates, then in the stored spec of a workflowTemplateRef. A node
// that runs a templateRef or an inline template gives nil.
func templateOf(wf *v1alpha1.Workflow, n v1alpha1.NodeStatus) *v1alpha1.Template {
	if n.TemplateRef != nil || n.TemplateName == "" {
		return nil
	}
	specs := []*v1alpha1.WorkflowSpec{&wf.Spec}
	if wf.Status.StoredWorkflowSpec != nil {
		specs = append(specs, wf.Status.StoredWorkflowSpec)
	}
	for _, s := range specs {
		for i := range s.Templates {
			if s.Templates[i].Name == n.TemplateName {
				return &s.Templates[i]
			}
		}
	}
	return nil
}
