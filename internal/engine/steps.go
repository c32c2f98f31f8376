package engine

import (
	"strconv"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// executeSteps runs a steps template: its groups strictly one after another
// (rules 1.7, 2.3, 2.4). Groups that already succeeded are found by a binary
// search, so a long chain costs O(log n) per pass for the finished part.
func (r *pass) executeSteps(in invocation, opts execOpts) (outcome, error) {
	node, ok := r.byName(in.name)
	if !ok {
		if node, ok = r.newNode(nodeInit{name: in.name, typ: v1alpha1.NodeTypeSteps, h: in.h, scope: in.scope,
			boundaryID: opts.boundaryID, phase: v1alpha1.NodeRunning, flag: opts.flag, inputs: in.inputs}); !ok {
			return outcome{hold: holdNodeLimit}, nil
		}
	}
	refs := &stepRefs{r: r, stepsName: in.name, tmpl: in.tmpl, tc: in.tc}
	sv := r.newVars(in.v)
	sv.refs = refs
	copts := execOpts{boundaryID: node.ID, boundaryTmpl: in.tmpl, onExit: opts.onExit, depth: opts.depth}
	groups := in.tmpl.Steps
	start := r.succeededGroups(in.name, len(groups))
	refs.upTo = start
	for i := start; i < len(groups); i++ {
		g, ok := r.ensureGroup(in, node.ID, i)
		if !ok {
			return outcome{node: node, hold: holdNodeLimit}, nil
		}
		g, err := r.executeStepGroup(g, groups[i], sv, in.tc, copts)
		if err != nil {
			r.markError(g.ID, err)
			g = r.nodes[g.ID]
		}
		if !fulfilled(g) {
			return outcome{node: r.nodes[node.ID]}, nil
		}
		if g.Phase.FailedOrError() {
			r.updateStepsOutbound(in.name, node.ID, len(groups))
			n := r.setPhase(node.ID, v1alpha1.NodeFailed, g.Message)
			r.killStepsDaemons(in.name, len(groups))
			return outcome{node: n}, nil
		}
		if err := refs.checkGroup(i); err != nil {
			return outcome{node: r.nodes[node.ID]}, err
		}
		refs.upTo = i + 1
	}
	n, err := r.finishSteps(in, node.ID, sv)
	return outcome{node: n}, err
}

// finishSteps computes the outputs of a steps template whose groups all
// succeeded (§12) and marks it Succeeded.
func (r *pass) finishSteps(in invocation, id string, sv *vars) (v1alpha1.NodeStatus, error) {
	r.updateStepsOutbound(in.name, id, len(in.tmpl.Steps))
	outputs, err := templateOutputs(in.tmpl, sv)
	if err != nil {
		n := r.nodes[id]
		return n, err
	}
	if outputs != nil {
		n := r.nodes[id]
		n.Outputs = outputs
		r.put(n)
		r.exportOutputs(outputs)
	}
	n := r.setPhase(id, v1alpha1.NodeSucceeded)
	r.killStepsDaemons(in.name, len(in.tmpl.Steps))
	return n, nil
}

func groupName(stepsName string, i int) string { return stepsName + "[" + strconv.Itoa(i) + "]" }

// succeededGroups returns how many leading groups exist and Succeeded. A
// group is created only after the one before it succeeded, so the predicate
// is monotone and a binary search finds the first group to look at.
func (f *facts) succeededGroups(stepsName string, count int) int {
	var num [24]byte
	done := func(i int) bool {
		idx := strconv.AppendInt(num[:0], int64(i), 10)
		g, ok := f.byParts(stepsName, "[", string(idx)+"]")
		return ok && g.Phase == v1alpha1.NodeSucceeded
	}
	lo, hi := 0, count
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if done(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// ensureGroup returns step group i, creating it and linking it to the
// outbound nodes of the group before (rule 1.7). False: the node limit was
// reached (newNode).
func (r *pass) ensureGroup(in invocation, stepsID string, i int) (v1alpha1.NodeStatus, bool) {
	name := groupName(in.name, i)
	if g, ok := r.byName(name); ok {
		return g, true
	}
	g, ok := r.newNode(nodeInit{name: name, typ: v1alpha1.NodeTypeStepGroup, scope: in.tc.scope,
		boundaryID: stepsID, phase: v1alpha1.NodeRunning, flag: &v1alpha1.NodeFlag{}})
	if !ok {
		return g, false
	}
	if i == 0 {
		r.addChild(stepsID, g.ID)
		return r.nodes[g.ID], true
	}
	prev, _ := r.byName(groupName(in.name, i-1))
	if len(prev.Children) == 0 {
		r.addChild(prev.ID, g.ID)
	}
	for _, c := range prev.Children {
		for _, o := range r.outbound(c) {
			r.addChild(o, g.ID)
		}
	}
	return r.nodes[g.ID], true
}

// updateStepsOutbound sets a Steps node's outboundNodes from the children of
// its last created group (rule 1.8).
func (r *pass) updateStepsOutbound(stepsName, id string, count int) {
	g, ok := r.lastStepGroup(stepsName, count)
	if !ok {
		return
	}
	out := []string{}
	for _, c := range g.Children {
		out = append(out, r.outbound(c)...)
	}
	n := r.nodes[id]
	n.OutboundNodes = out
	r.put(n)
}

func (f *facts) lastStepGroup(stepsName string, count int) (v1alpha1.NodeStatus, bool) {
	for i := count - 1; i >= 0; i-- {
		if g, ok := f.byName(groupName(stepsName, i)); ok {
			return g, true
		}
	}
	return v1alpha1.NodeStatus{}, false
}

// killStepsDaemons stops the daemons among a finished Steps node's children.
func (r *pass) killStepsDaemons(stepsName string, count int) {
	for i := 0; i < count; i++ {
		g, ok := r.byName(groupName(stepsName, i))
		if !ok {
			return
		}
		r.killDaemons(g.Children)
	}
}

func continuesOn(s *v1alpha1.WorkflowStep, phase v1alpha1.NodePhase) bool {
	if s == nil || s.ContinueOn == nil {
		return false
	}
	return continueOnPhase(*s.ContinueOn, phase)
}

func continueOnPhase(c v1alpha1.ContinueOn, phase v1alpha1.NodePhase) bool {
	return (phase == v1alpha1.NodeError && c.Error) || (phase == v1alpha1.NodeFailed && c.Failed)
}

// resolveStep substitutes a step's references (rule 4.1).
func resolveStep(s *v1alpha1.WorkflowStep, v *vars) (*v1alpha1.WorkflowStep, error) {
	return resolveCall(s, func(x *v1alpha1.WorkflowStep) callFields {
		return callFields{when: &x.When, args: &x.Arguments, hooks: &x.Hooks, items: &x.WithItems, loop: isLoopStep(x)}
	}, v)
}

// callFields points into a step or a task at what reference resolution touches.
type callFields struct {
	when  *string
	args  *v1alpha1.Arguments
	hooks *v1alpha1.LifecycleHooks
	items *[]v1alpha1.Item
	loop  bool
}

// resolveCall substitutes the references of a step or a task (rule 4.1):
// the when first, strictly for steps./tasks.; when it is already false the
// rest is left alone. Otherwise the whole call, then its artifact arguments.
// Hooks are resolved when they run (rule 9.2), and a literal withItems list
// is not marshalled on every pass.
func resolveCall[T any](orig *T, fields func(*T) callFields, v *vars) (*T, error) {
	of := fields(orig)
	if *of.when != "" {
		w, err := v.replace(*of.when, expr.StrictRefs)
		if err != nil {
			return nil, err
		}
		ok, werr := v.r.lim.Expression.EvalWhen(w)
		if werr == nil && !ok {
			c := *orig
			*fields(&c).when = w
			return &c, nil
		}
		if werr != nil && !of.loop {
			return nil, werr
		}
	}
	c := *orig
	cf := fields(&c)
	*cf.args = markAbsentArguments(*cf.args, v)
	*cf.hooks = nil
	plainItems := !itemsHaveTags(*of.items)
	if plainItems {
		*cf.items = nil
	}
	out, err := substitute(v, &c, expr.StrictRefs)
	if err != nil {
		return nil, err
	}
	if out == &c {
		cp := c
		out = &cp
	}
	outf := fields(out)
	*outf.hooks = *of.hooks
	if plainItems {
		*outf.items = *of.items
	}
	if err := resolveArtifactArgs(outf.args, v); err != nil {
		return nil, err
	}
	return out, nil
}

func isLoopStep(s *v1alpha1.WorkflowStep) bool {
	return len(s.WithItems) > 0 || s.WithParam != "" || s.WithSequence != nil
}
