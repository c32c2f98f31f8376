package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// stepChild is one child of a step group: a step, or one loop iteration.
type stepChild struct {
	name   string // node name
	short  string // the step's (expanded) name, when it differs from step.Name
	id     string // node ID, when known
	step   *v1alpha1.WorkflowStep
	exists bool
}

func (c *stepChild) site() callSite {
	h := stepSite(c.step)
	if c.short != "" {
		h.name = c.short
	}
	return h
}

func (c *stepChild) node(r *pass) (v1alpha1.NodeStatus, bool) {
	if c.id != "" {
		n, ok := r.nodes[c.id]
		return n, ok
	}
	return r.byName(c.name)
}

// groupEntry is one step of a group: a plain step, or a loop whose
// iterations are reached one by one.
type groupEntry struct {
	child stepChild
	loop  *stepLoop
}

// step is the entry's step; for a loop, the step without its loop fields.
func (e *groupEntry) step() *v1alpha1.WorkflowStep {
	if e.loop != nil {
		return &e.loop.base
	}
	return e.child.step
}

// stepLoop is a resolved loop step of a group.
type stepLoop struct {
	e         *loopEntry
	base      v1alpha1.WorkflowStep // the resolved step without its loop fields
	template  string                // the step's template, as written
	needsItem bool                  // its hooks or onExit may use the item
}

// iteration returns the child of iteration k (e.at(k) was called). Its step
// is substituted with the item only when it is to be created, or when its
// hooks need the item (rule 5.1).
func (l *stepLoop) iteration(k int, exists bool, sv *vars) (stepChild, error) {
	c := stepChild{name: l.e.full[k], short: l.e.short[k], id: l.e.ids[k], step: &l.base, exists: exists}
	if exists && !l.needsItem {
		return c, nil
	}
	item, err := l.e.src.item(k)
	if err != nil {
		return c, err
	}
	c.step, err = expandItem(&l.base, c.short, l.template, item, sv)
	return c, err
}

// groupWalk is one pass over the children of a step group.
type groupWalk struct {
	g       v1alpha1.NodeStatus
	sv      *vars
	tc      tmplCtx
	opts    execOpts
	held    bool // a new child was not created: no later new child is tried
	yielded bool // ... because the pass created its share of nodes
}

func (w *groupWalk) hold(h hold) {
	w.held = true
	w.yielded = w.yielded || h == holdYield || h == holdNotLoaded
}

// executeStepGroup runs the steps of one group in parallel (ctl/steps.go
// executeStepGroup): resolve references, expand loops, evaluate when, run,
// then settle the group once every child and its exit handler is done.
//
// Children are created in order. Once one may not be created (parallelism,
// the pass's share of nodes), no later new child is tried in this pass: the
// same hold would stop it, and trying costs a substitution each.
func (r *pass) executeStepGroup(g v1alpha1.NodeStatus, steps v1alpha1.ParallelSteps, sv *vars, tc tmplCtx, opts execOpts) (v1alpha1.NodeStatus, error) {
	if fulfilled(g) {
		return g, nil
	}
	entries, h, err := r.planGroup(g, steps, sv, tc)
	if h == holdReference {
		return r.nodes[g.ID], nil
	}
	if err != nil {
		return r.markError(g.ID, err), nil
	}
	w := &groupWalk{g: g, sv: sv, tc: tc, opts: opts}
	for i := range entries {
		settled := false
		if l := entries[i].loop; l != nil {
			settled, err = r.runStepLoop(w, l)
		} else if !entries[i].child.exists && w.held {
			continue
		} else {
			settled = r.runStepChild(w, entries[i].child)
		}
		if err != nil {
			return r.markError(g.ID, err), nil
		}
		if settled {
			return r.nodes[g.ID], nil
		}
	}
	if w.yielded {
		return r.nodes[g.ID], nil // some children are still to be created
	}
	return r.settleGroup(g.ID, entries, sv, tc, opts)
}

// planGroup resolves each step's references and prepares loops. A missing
// steps./tasks. variable holds the group (holdReference: it waits, rule
// 0.2); any other failure is the group's error.
func (r *pass) planGroup(g v1alpha1.NodeStatus, steps v1alpha1.ParallelSteps, sv *vars, tc tmplCtx) ([]groupEntry, hold, error) {
	resolved := make([]*v1alpha1.WorkflowStep, len(steps))
	for i := range steps {
		s := &steps[i]
		childName := g.Name + "." + s.Name
		if _, ok := r.byName(childName); ok && !isLoopStep(s) {
			resolved[i] = s
			continue
		}
		rs, err := resolveStep(s, sv)
		if err != nil {
			if expr.IsMissingVariable(err) {
				return nil, holdReference, nil
			}
			return nil, holdNone, fmt.Errorf("failed to resolve references: %w", err)
		}
		resolved[i] = rs
	}
	entries := make([]groupEntry, 0, len(resolved))
	for i, s := range resolved {
		childName := g.Name + "." + s.Name
		if !isLoopStep(s) {
			_, ok := r.byName(childName)
			entries = append(entries, groupEntry{child: stepChild{name: childName, step: s, exists: ok}})
			continue
		}
		l, err := r.planStepLoop(g, childName, s, tc, steps[i].Template)
		if err != nil {
			return nil, holdNone, err
		}
		if l != nil {
			entries = append(entries, groupEntry{loop: l})
		}
	}
	return entries, holdNone, nil
}

// planStepLoop prepares a resolved loop step of a group. An empty loop
// becomes a Skipped placeholder, and nil is returned.
func (r *pass) planStepLoop(g v1alpha1.NodeStatus, childName string, s *v1alpha1.WorkflowStep, tc tmplCtx, template string) (*stepLoop, error) {
	e, err := r.expandLoop(g.Name, s.Name, s.WithItems, s.WithParam, s.WithSequence, s.When)
	if err != nil {
		return nil, err
	}
	if e.len() == 0 {
		if _, ok := r.byName(childName); !ok {
			n, made := r.placeholder(childName, stepSite(s), tc.scope, g.BoundaryID, v1alpha1.NodeSkipped, "Skipped, empty params")
			if !made {
				return nil, errors.New(nodeLimitMessage) // the group errors; the workflow ends Error (stopFor)
			}
			r.addChild(g.ID, n.ID)
		}
		return nil, nil
	}
	l := &stepLoop{e: e, base: *s, template: template, needsItem: s.OnExit != "" || len(s.Hooks) > 0}
	l.base.WithItems, l.base.WithParam, l.base.WithSequence = nil, "", nil
	return l, nil
}

// runStepLoop walks a loop's iterations in order: each one that exists, then
// the new ones until one may not be created. Under a shutdown a loop creates
// no new iteration once one exists: the group fails through the iterations
// that ran, and the rest are never created.
func (r *pass) runStepLoop(w *groupWalk, l *stepLoop) (bool, error) {
	for k := 0; k < l.e.len(); k++ {
		if err := l.e.at(&r.facts, k); err != nil {
			return false, err
		}
		_, exists := r.nodes[l.e.ids[k]]
		if !exists && (w.held || (k > 0 && r.stopsNew(w.opts))) {
			return false, nil
		}
		c, err := l.iteration(k, exists, w.sv)
		if err != nil {
			return false, err
		}
		if r.runStepChild(w, c) {
			return true, nil
		}
		if !exists && w.held {
			return false, nil
		}
	}
	return false, nil
}

// runStepChild evaluates a new child's when and runs it. It returns true
// when the group was settled on the spot (an error, a timeout). A new child
// that is not created holds the walk (w.hold).
func (r *pass) runStepChild(w *groupWalk, c stepChild) bool {
	g, tc, opts := w.g, w.tc, w.opts
	if c.exists {
		n, ok := c.node(r)
		if ok && fulfilled(n) {
			return false
		}
		if ok && isLeafType(n.Type) && !r.relaunch[n.ID] {
			if r.revisitExisting(n, c.site(), tc).timeout {
				r.setPhase(g.ID, v1alpha1.NodeFailed, timeoutMessage)
				return true
			}
			return false
		}
	}
	if !c.exists {
		if r.yield() {
			w.hold(holdYield)
			return false
		}
		ok, err := r.lim.Expression.EvalWhen(c.step.When)
		if err != nil {
			if n, made := r.placeholder(c.name, c.site(), tc.scope, opts.boundaryID, v1alpha1.NodeError, err.Error()); made {
				r.addChild(g.ID, n.ID)
			}
			r.markError(g.ID, err)
			return true
		}
		if !ok {
			if n, made := r.placeholder(c.name, c.site(), tc.scope, opts.boundaryID, v1alpha1.NodeSkipped,
				fmt.Sprintf("when '%s' evaluated false", c.step.When)); made {
				r.addChild(g.ID, n.ID)
			}
			return false
		}
	}
	o, err := r.executeTemplate(c.name, c.site(), tc, &c.step.Arguments, opts)
	if o.node.ID != "" && !c.exists {
		r.addChild(g.ID, o.node.ID)
	}
	switch {
	case err != nil && endsWorkflow(err):
		return false
	case err != nil:
		r.addChild(g.ID, r.id(c.name))
		r.setPhase(g.ID, v1alpha1.NodeError, fmt.Sprintf("step group deemed errored due to child %s error: %s", c.name, err))
		return true
	case o.timeout:
		r.setPhase(g.ID, v1alpha1.NodeFailed, timeoutMessage)
		return true
	case o.hold != holdNone && o.node.ID == "" && !c.exists:
		w.hold(o.hold)
	}
	return false
}

// settleGroup waits for every child, its hooks and its exit handler, then
// sets the group's phase from the children in order (rule 2.3).
func (r *pass) settleGroup(id string, entries []groupEntry, sv *vars, tc tmplCtx, opts execOpts) (v1alpha1.NodeStatus, error) {
	g := r.nodes[id]
	steps := &groupSteps{r: r, entries: entries, prefix: g.Name + ".", sv: sv}
	hooks := false
	for i := range entries {
		if stepCall(entries[i].step()) != nil {
			hooks = true
			break
		}
	}
	completed := true
	for _, cid := range g.Children {
		child, ok := r.nodes[cid]
		if !ok {
			return g, nil
		}
		if !hooks {
			if !fulfilled(child) {
				return g, nil // nothing else to do for the others
			}
			continue
		}
		step, err := steps.get(child.Name, true)
		if err != nil {
			return r.nodes[id], err
		}
		done, timedOut, err := r.hooksAndExit(child, stepCall(step), sv, tc, opts)
		if err != nil {
			return r.nodes[id], err
		}
		if timedOut { // a hook's leaf passed its timeout: the group errors
			return r.setPhase(id, v1alpha1.NodeError, timeoutMessage), nil
		}
		completed = completed && done
	}
	if !completed {
		return r.nodes[id], nil
	}
	g = r.nodes[id]
	for _, cid := range g.Children {
		child := r.nodes[cid]
		if !child.Phase.FailedOrError() {
			continue
		}
		if step, _ := steps.get(child.Name, false); !continuesOn(step, child.Phase) {
			return r.setPhase(id, v1alpha1.NodeFailed, fmt.Sprintf("child '%s' failed", cid)), nil
		}
	}
	return r.setPhase(id, v1alpha1.NodeSucceeded), nil
}

// groupSteps finds the step of a group's child by node name: a plain step,
// or a loop iteration "<step>(<k>:<item>)".
type groupSteps struct {
	r       *pass
	entries []groupEntry
	prefix  string // the group's name and "."
	sv      *vars
	plain   map[string]*v1alpha1.WorkflowStep
	loops   map[string]*stepLoop
}

// get returns the child's step; with expand, a loop iteration's step is
// substituted with its item when its hooks need it. Nil: no such step.
func (s *groupSteps) get(name string, expand bool) (*v1alpha1.WorkflowStep, error) {
	if s.plain == nil {
		s.plain, s.loops = map[string]*v1alpha1.WorkflowStep{}, map[string]*stepLoop{}
		for _, e := range s.entries {
			if e.loop != nil {
				s.loops[e.loop.base.Name] = e.loop
			} else {
				s.plain[e.child.name] = e.child.step
			}
		}
	}
	if st, ok := s.plain[name]; ok {
		return st, nil
	}
	short, ok := strings.CutPrefix(name, s.prefix)
	open := strings.IndexByte(short, '(')
	if !ok || open < 0 {
		return nil, nil
	}
	l, ok := s.loops[short[:open]]
	if !ok {
		return nil, nil
	}
	k := loopIndex(short)
	if !expand || !l.needsItem || k >= l.e.len() {
		return &l.base, nil
	}
	if err := l.e.at(&s.r.facts, k); err != nil {
		return nil, err
	}
	c, err := l.iteration(k, true, s.sv)
	return c.step, err
}
