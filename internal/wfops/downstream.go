package wfops

import (
	"strconv"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Downstream returns the IDs of the nodes that run after the given nodes
// and may consume their outputs: in the enclosing DAG, the nodes of every
// task that depends on the node's task (through dependencies or depends,
// transitively); in the enclosing Steps node, every later step group. It
// then walks outward: when a node inside a nested Steps or DAG node runs
// again, that node's outputs may change too, so its own downstream counts
// as well. The result leaves out the given nodes and is sorted. Only
// existing nodes are returned; the subtrees of the returned nodes are the
// caller's to add.
//
// A DAG whose template cannot be found (a templateRef, an inline template)
// contributes nothing here; its dependents still hang below the node's
// outbound nodes as children, which a subtree walk reaches.
func Downstream(wf *v1alpha1.Workflow, ids []string) []string {
	nodes := wf.Status.Nodes
	out := map[string]bool{}
	for _, id := range ids {
		cur, ok := nodes[id]
		for ok {
			b, bok := nodes[cur.BoundaryID]
			if !bok || b.ID == cur.ID {
				break
			}
			for _, d := range downstreamIn(wf, b, cur) {
				out[d] = true
			}
			cur = b
		}
	}
	for _, id := range ids {
		delete(out, id)
	}
	return sortedKeys(out)
}

// downstreamIn returns the nodes of boundary that come after n.
func downstreamIn(wf *v1alpha1.Workflow, boundary, n v1alpha1.NodeStatus) []string {
	switch boundary.Type {
	case v1alpha1.NodeTypeDAG:
		return dagDownstream(wf, boundary, n)
	case v1alpha1.NodeTypeSteps:
		return stepsDownstream(wf.Status.Nodes, boundary, n)
	}
	return nil
}

// stepsDownstream returns the nodes of the step groups after n's group.
func stepsDownstream(nodes v1alpha1.Nodes, steps, n v1alpha1.NodeStatus) []string {
	i, ok := groupIndex(steps.Name, n.Name)
	if !ok {
		return nil
	}
	var out []string
	for _, id := range sortedIDs(nodes) {
		m := nodes[id]
		if m.BoundaryID != steps.ID {
			continue
		}
		if j, ok := groupIndex(steps.Name, m.Name); ok && j > i {
			out = append(out, id)
		}
	}
	return out
}

// groupIndex returns i when name is "<steps>[i]" or lies below it.
func groupIndex(steps, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, steps+"[")
	if !ok {
		return 0, false
	}
	end := strings.IndexByte(rest, ']')
	if end <= 0 {
		return 0, false
	}
	i, err := strconv.Atoi(rest[:end])
	return i, err == nil
}

// dagDownstream returns the nodes of the DAG's tasks that depend on n's task.
func dagDownstream(wf *v1alpha1.Workflow, dag, n v1alpha1.NodeStatus) []string {
	t := templateOf(wf, dag)
	if t == nil || t.DAG == nil {
		return nil
	}
	task, ok := taskName(dag.Name, n.Name)
	if !ok {
		return nil
	}
	dependents := DependentTasks(t.DAG.Tasks, task)
	var out []string
	for _, id := range sortedIDs(wf.Status.Nodes) {
		m := wf.Status.Nodes[id]
		if m.BoundaryID != dag.ID {
			continue
		}
		if tn, ok := taskName(dag.Name, m.Name); ok && dependents[tn] {
			out = append(out, id)
		}
	}
	return out
}

// taskName returns t when name is "<dag>.t", or a loop iteration, retry
// attempt or hook below it.
func taskName(dag, name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, dag+".")
	if !ok {
		return "", false
	}
	if i := strings.IndexAny(rest, ".(["); i >= 0 {
		rest = rest[:i]
	}
	return rest, rest != ""
}

// DependentTasks returns the names of the tasks that depend on task,
// directly or through other tasks, by their dependencies or their depends
// expression.
func DependentTasks(tasks []v1alpha1.DAGTask, task string) map[string]bool {
	deps := make(map[string][]string, len(tasks))
	for _, t := range tasks {
		deps[t.Name] = taskDeps(t)
	}
	out := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, t := range tasks {
			if out[t.Name] || t.Name == task {
				continue
			}
			for _, d := range deps[t.Name] {
				if d == task || out[d] {
					out[t.Name] = true
					changed = true
					break
				}
			}
		}
	}
	return out
}

// taskDeps returns the task names a task depends on: its dependencies and
// the names in its depends expression ("B.Succeeded && !C" -> B, C).
func taskDeps(t v1alpha1.DAGTask) []string {
	out := append([]string(nil), t.Dependencies...)
	tokens := strings.FieldsFunc(t.Depends, func(r rune) bool {
		return !(r == '.' || r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	for _, tok := range tokens {
		name, _, _ := strings.Cut(tok, ".")
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}
