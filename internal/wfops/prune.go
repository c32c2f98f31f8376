package wfops

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// pruner decides which nodes a retry deletes and which it reopens.
type pruner struct {
	t       *tree
	deleted map[string]bool
	reset   map[string]bool
	queue   []string // nodes whose subtree is still to delete
}

// prune makes the nodes run again. It deletes each node of del with its
// subtree (children, transitively), and the workflow's exit handler
// (<wf>.onExit) with its subtree. It reopens (Running, no message, no
// finishedAt, no outputs; startedAt = now unless now is zero) each node of
// reopen and every Steps, DAG, StepGroup, TaskGroup or Retry node that
// contains a deleted or reopened node, up to the root; a reopened node's
// exit handler and hooks are deleted, so that they run again when it
// completes again. Kept nodes lose deleted IDs from children and
// outboundNodes. It returns the deleted IDs, sorted.
func prune(wf *v1alpha1.Workflow, del, reopen []string, now time.Time) []string {
	p := &pruner{t: newTree(wf.Status.Nodes), deleted: map[string]bool{}, reset: map[string]bool{}}
	p.queue = append(p.queue, del...)
	if exit := wf.NodeID(wf.Name + ".onExit"); exit != wf.Name {
		p.queue = append(p.queue, exit)
	}
	for _, id := range reopen {
		p.reopen(id)
	}
	for len(p.queue) > 0 {
		id := p.queue[0]
		p.queue = p.queue[1:]
		p.deleteSubtree(id)
	}
	p.apply(wf, now)
	return sortedKeys(p.deleted)
}

// deleteSubtree deletes id and what hangs below it, and reopens the
// containers of every node it deletes.
func (p *pruner) deleteSubtree(id string) {
	sub := map[string]bool{}
	p.t.subtree(id, sub)
	for _, d := range sortedKeys(sub) {
		if p.deleted[d] {
			continue
		}
		p.deleted[d] = true
		for _, a := range p.t.ancestors(d) {
			p.reopenOne(a)
		}
	}
}

// reopen reopens id and every node that contains it.
func (p *pruner) reopen(id string) {
	if _, ok := p.t.nodes[id]; !ok {
		return
	}
	p.reopenOne(id)
	for _, a := range p.t.ancestors(id) {
		p.reopenOne(a)
	}
}

// reopenOne marks one node for reopening when its type allows it, and
// queues its hooks and exit handler for deletion.
func (p *pruner) reopenOne(id string) {
	n := p.t.nodes[id]
	if p.reset[id] || !reopenable(n.Type) {
		return
	}
	p.reset[id] = true
	for _, c := range n.Children {
		if cn, ok := p.t.nodes[c]; ok && isHooked(cn) {
			p.queue = append(p.queue, c)
		}
	}
}

// apply writes the decisions into the workflow's status.
func (p *pruner) apply(wf *v1alpha1.Workflow, now time.Time) {
	nodes := wf.Status.Nodes
	dropGlobals(wf, p.deleted)
	for id := range p.deleted {
		delete(nodes, id)
		delete(wf.Status.TaskResultsCompletionStatus, id)
	}
	for id, n := range nodes {
		if p.reset[id] {
			n = reopenNode(n, now)
		}
		n.Children = p.without(n.Children)
		n.OutboundNodes = p.without(n.OutboundNodes)
		nodes[id] = n
	}
}

func (p *pruner) without(ids []string) []string {
	if len(ids) == 0 {
		return ids
	}
	var out []string
	for _, id := range ids {
		if !p.deleted[id] {
			out = append(out, id)
		}
	}
	return out
}

// reopenNode sets a node back to Running so the controller walks it again.
func reopenNode(n v1alpha1.NodeStatus, now time.Time) v1alpha1.NodeStatus {
	n.Phase = v1alpha1.NodeRunning
	n.Message = ""
	n.FinishedAt = metav1.Time{}
	n.Outputs = nil
	if !now.IsZero() {
		n.StartedAt = metav1.NewTime(now)
	}
	return n
}

// dropGlobals removes from status.outputs the global parameters and
// artifacts that only deleted nodes exported (globalName), so that a stale
// value is not read while they run again.
func dropGlobals(wf *v1alpha1.Workflow, deleted map[string]bool) {
	out := wf.Status.Outputs
	if out == nil {
		return
	}
	stale, kept := map[string]bool{}, map[string]bool{}
	for id, n := range wf.Status.Nodes {
		set := kept
		if deleted[id] {
			set = stale
		}
		for _, name := range globalNames(n.Outputs) {
			set[name] = true
		}
	}
	drop := func(name string) bool { return stale[name] && !kept[name] }
	var params []v1alpha1.Parameter
	for _, g := range out.Parameters {
		if !drop(g.Name) {
			params = append(params, g)
		}
	}
	var arts v1alpha1.Artifacts
	for _, g := range out.Artifacts {
		if !drop(g.Name) {
			arts = append(arts, g)
		}
	}
	out.Parameters, out.Artifacts = params, arts
	if len(params) == 0 && len(arts) == 0 && out.Result == nil && out.ExitCode == nil {
		wf.Status.Outputs = nil
	}
}

func globalNames(o *v1alpha1.Outputs) []string {
	if o == nil {
		return nil
	}
	var names []string
	for _, p := range o.Parameters {
		if p.GlobalName != "" {
			names = append(names, p.GlobalName)
		}
	}
	for _, a := range o.Artifacts {
		if a.GlobalName != "" {
			names = append(names, a.GlobalName)
		}
	}
	return names
}
