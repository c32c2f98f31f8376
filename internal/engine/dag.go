package engine

import (
	"fmt"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// dagRun is one pass over one DAG node (ctl/dag.go dagContext).
type dagRun struct {
	r       *pass
	in      invocation
	id      string // the DAG node's ID
	info    *dagInfo
	targets []int
	ids     []string // node IDs of the tasks
	opts    execOpts // for the tasks: boundary is this DAG
	visited []bool
	ok      []bool // task i's node, its hooks and its exit handler are fulfilled
	done    bool   // every visited task, its hooks and exit handler are fulfilled
	exitsOK bool   // every target's exit handler is fulfilled
	cache   map[string]expr.Scope
	errs    error // a hook error: the DAG node errors
	timeout bool  // ... or a hook's leaf timed out first: the DAG times out
	refErr  error // an aggregate that could not be computed
}

// executeDAG runs a DAG template: each target with its dependencies first,
// then the phase from the target branches (rules 1.7, 2.5, 3).
func (r *pass) executeDAG(in invocation, opts execOpts) (outcome, error) {
	node, ok := r.byName(in.name)
	if !ok {
		if node, ok = r.newNode(nodeInit{name: in.name, typ: v1alpha1.NodeTypeDAG, h: in.h, scope: in.scope,
			boundaryID: opts.boundaryID, phase: v1alpha1.NodeRunning, flag: opts.flag, inputs: in.inputs}); !ok {
			return outcome{hold: holdNodeLimit}, nil
		}
	}
	info := r.dagInfo(in.tmpl)
	targets, err := dagTargets(in.tmpl.DAG, info, in.v)
	if err != nil {
		return outcome{node: node}, err
	}
	d := &dagRun{r: r, in: in, id: node.ID, info: info, targets: targets, visited: make([]bool, len(info.tasks)),
		ok: make([]bool, len(info.tasks)), done: true,
		exitsOK: true, opts: execOpts{boundaryID: node.ID, boundaryTmpl: in.tmpl, onExit: opts.onExit, depth: opts.depth}}
	for _, t := range targets {
		d.executeTask(t, true)
	}
	if d.errs != nil || d.timeout {
		return outcome{node: r.nodes[node.ID], timeout: d.timeout}, d.errs
	}
	switch phase := d.assess(); phase {
	case v1alpha1.NodeRunning:
		return outcome{node: r.nodes[node.ID]}, nil
	case v1alpha1.NodeFailed, v1alpha1.NodeError:
		d.updateOutbound()
		n := r.setPhase(node.ID, phase)
		d.killDaemons()
		return outcome{node: n}, nil
	}
	n, err := d.finish()
	return outcome{node: n}, err
}

// finish computes a succeeded DAG's outputs from all its tasks (rule 12.3),
// exports every task's outputs (rule 12.4) and marks it Succeeded.
func (d *dagRun) finish() (v1alpha1.NodeStatus, error) {
	r := d.r
	for _, t := range d.info.tasks {
		if n, ok := r.byName(d.taskNodeName(t.Name)); ok {
			r.exportOutputs(n.Outputs)
		}
	}
	v := r.newVars(d.in.v)
	v.refs = &taskRefs{d: d, task: -1}
	outputs, err := templateOutputs(d.in.tmpl, v)
	if err != nil {
		n := r.nodes[d.id]
		return n, err
	}
	if outputs != nil {
		n := r.nodes[d.id]
		n.Outputs = outputs
		r.put(n)
	}
	d.updateOutbound()
	n := r.setPhase(d.id, v1alpha1.NodeSucceeded)
	d.killDaemons()
	return n, nil
}

func (d *dagRun) taskNodeName(task string) string { return d.in.name + "." + task }

func (d *dagRun) taskNode(task string) (v1alpha1.NodeStatus, bool) {
	if i, ok := d.info.index[task]; ok {
		return d.taskNodeAt(i)
	}
	return d.r.byParts(d.in.name, ".", task)
}

// taskNodeAt returns the node of task i by its ID, computed once per DAG
// node name (and kept in a Prepared).
func (d *dagRun) taskNodeAt(i int) (v1alpha1.NodeStatus, bool) {
	n, ok := d.r.nodes[d.taskID(i)]
	return n, ok
}

// taskID returns the node ID of task i, computing it on first use.
func (d *dagRun) taskID(i int) string {
	if d.ids == nil {
		d.ids = d.info.nodeIDs(d.in.name)
	}
	if d.ids[i] == "" {
		d.ids[i] = d.r.id(d.in.name + "." + d.info.tasks[i].Name)
	}
	return d.ids[i]
}

// updateOutbound sets the DAG's outboundNodes from its targets (rule 1.8).
func (d *dagRun) updateOutbound() {
	out := []string{}
	for _, t := range d.targets {
		if n, ok := d.taskNode(d.info.tasks[t].Name); ok {
			out = append(out, d.r.outbound(n.ID)...)
		}
	}
	n := d.r.nodes[d.id]
	n.OutboundNodes = out
	d.r.put(n)
}

func (d *dagRun) killDaemons() {
	var ids []string
	for _, t := range d.info.tasks {
		if n, ok := d.taskNode(t.Name); ok {
			ids = append(ids, n.ID)
			if n.Type == v1alpha1.NodeTypeTaskGroup {
				ids = append(ids, n.Children...)
			}
		}
	}
	d.r.killDaemons(ids)
}

// executeTask runs task i after its dependencies (ctl/dag.go
// executeDAGTask). Argo recurses into the dependencies; this walks them with
// an explicit stack, so a chain of thousands of tasks does not grow the
// goroutine's stack on every pass.
func (d *dagRun) executeTask(root int, target bool) {
	type frame struct {
		i      int
		target bool
		next   int // next dependency to visit
	}
	stack := []frame{{i: root, target: target}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next == 0 && !d.enter(f.i, f.target) {
			stack = stack[:len(stack)-1]
			continue
		}
		deps := d.info.depIdx[f.i]
		if f.next < len(deps) {
			j := deps[f.next]
			f.next++
			if j < 0 {
				d.unknownDependency(f.i, f.next-1)
				stack = stack[:len(stack)-1]
				continue
			}
			stack = append(stack, frame{i: j})
			continue
		}
		i, tgt := f.i, f.target
		stack = stack[:len(stack)-1]
		if d.ready(i) {
			task := &d.info.tasks[i]
			d.startTask(i, d.taskNodeName(task.Name), task, false, tgt)
			d.markOK(i)
		}
	}
}

// enter visits task i for the first time: an existing node is handled at
// once; true means its dependencies must be visited before deciding it.
func (d *dagRun) enter(i int, target bool) bool {
	if d.visited[i] {
		return false
	}
	d.visited[i] = true
	if d.taskExists(i) {
		d.existingTask(i, target)
		return false
	}
	d.done = false
	// a frame with no dependencies still needs its decision: return true and
	// let the caller find next == len(deps) at once.
	return true
}

// unknownDependency errors task i, whose k-th dependency names no task.
func (d *dagRun) unknownDependency(i, k int) {
	d.placeholder(i, d.taskNodeName(d.info.tasks[i].Name), v1alpha1.NodeError,
		fmt.Sprintf("task '%s' depends on '%s', which does not exist", d.info.tasks[i].Name, d.info.deps[i][k]))
}

func (d *dagRun) taskExists(i int) bool {
	if d.r.prepared || (d.ids != nil && d.ids[i] != "") {
		_, ok := d.r.nodes[d.taskID(i)] // the ID is kept for the next pass
		return ok
	}
	_, ok := d.r.byParts(d.in.name, ".", d.info.tasks[i].Name) // no ID string built
	return ok
}

// existingTask revisits a task whose node exists.
func (d *dagRun) existingTask(i int, target bool) {
	task := &d.info.tasks[i]
	node, _ := d.taskNodeAt(i)
	if handled, done := d.settled(i, node, target); handled {
		d.ok[i] = done
		return
	}
	d.done = false
	if isLeafType(node.Type) && taskCall(task) == nil && !d.r.relaunch[node.ID] {
		d.r.revisitExisting(node, taskSite(task), d.in.tc) // running: nothing else to do
		return
	}
	name := d.taskNodeName(task.Name)
	if node.Type != v1alpha1.NodeTypeTaskGroup {
		d.runTask(i, name, task, "", true, target)
	} else {
		d.startTask(i, name, task, true, target)
	}
	d.markOK(i)
}

// markOK records whether task i, its hooks and its exit handler are done
// after this pass worked on it (a placeholder made now, a node that just
// ended), so that its dependents can go on in the same pass.
func (d *dagRun) markOK(i int) {
	n, ok := d.taskNodeAt(i)
	d.ok[i] = ok && fulfilled(n) && d.r.hooksFulfilled(n) && d.exitDone(d.info.tasks[i].Name, n)
}

// settled handles a task whose node exists and is fulfilled: its hooks and
// exit handler. handled is true when there is nothing else to do; done when
// the node, its hooks and its exit handler are all fulfilled.
func (d *dagRun) settled(i int, node v1alpha1.NodeStatus, target bool) (handled, done bool) {
	task := &d.info.tasks[i]
	call := taskCall(task)
	if !fulfilled(node) {
		if call != nil && hasLifecycleHooks(task.Hooks) && node.Phase == v1alpha1.NodeRunning {
			_, timedOut, err := d.r.hooksAndExit(node, call, d.taskVars(i), d.in.tc, d.opts)
			d.fail(err, timedOut)
		}
		return false, false
	}
	if call == nil {
		done := d.r.hooksFulfilled(node)
		if !done {
			d.done = false
		}
		return true, done
	}
	done, timedOut, err := d.r.hooksAndExit(node, call, d.taskVars(i), d.in.tc, d.opts)
	d.fail(err, timedOut)
	if !done {
		d.done = false
		if target {
			d.exitsOK = false
		}
	}
	return true, done
}

// fail records what a task's hooks ended with, when it is the first
// failure of the pass: an error, which the DAG node errors with (ctl/dag.go),
// or a hook's leaf that timed out, which times the DAG out.
func (d *dagRun) fail(err error, timedOut bool) {
	if d.errs != nil || d.timeout {
		return
	}
	d.errs = err
	d.timeout = err == nil && timedOut
}

// ready decides task i once its dependencies were visited (rule 3.5): false
// when it must wait, or when it became a placeholder (Omitted, Error). A
// dependency that is not done stops it without any look-up, which keeps the
// unstarted tail of a long chain cheap.
func (d *dagRun) ready(i int) bool {
	deps := d.info.depIdx[i]
	if len(deps) == 0 {
		return true
	}
	for _, j := range deps {
		if !d.ok[j] {
			return false
		}
	}
	name := d.taskNodeName(d.info.tasks[i].Name)
	proceed, execute, err := d.evalDepends(i)
	switch {
	case err != nil:
		d.placeholder(i, name, v1alpha1.NodeError, err.Error())
		return false
	case !proceed:
		return false
	case !execute:
		d.placeholder(i, name, v1alpha1.NodeOmitted, "omitted: depends condition not met")
		return false
	}
	return true
}

func (d *dagRun) placeholder(i int, name string, phase v1alpha1.NodePhase, msg string) {
	if d.r.yield() {
		return // created on the next pass
	}
	task := &d.info.tasks[i]
	d.connect(i, name)
	if _, ok := d.r.placeholder(name, taskSite(task), d.in.tc.scope, d.id, phase, msg); ok {
		d.ok[i] = true // a placeholder is done, and has no hooks
	}
}

// connect links a new task node under its dependencies' outbound nodes, or
// under the DAG node for a root task (rule 1.7).
func (d *dagRun) connect(i int, name string) {
	id := d.r.id(name)
	deps := d.info.deps[i]
	if len(deps) == 0 {
		d.r.addChild(d.id, id)
		return
	}
	for _, dep := range deps {
		n, ok := d.taskNode(dep)
		if !ok {
			continue
		}
		for _, o := range d.r.outbound(n.ID) {
			d.r.addChild(o, id)
		}
	}
}

// startTask resolves a task that may run, expands its loop into a TaskGroup,
// and runs each instance.
func (d *dagRun) startTask(i int, name string, task *v1alpha1.DAGTask, exists, target bool) {
	tv := d.taskVars(i)
	resolved, err := resolveTask(task, tv)
	if err != nil {
		if !expr.IsMissingVariable(err) && !exists {
			d.placeholder(i, name, v1alpha1.NodeError, err.Error())
		}
		return
	}
	if !isLoopTask(task) {
		d.runTask(i, name, resolved, "", false, target)
		return
	}
	e, err := d.r.expandLoop(d.in.name, task.Name, resolved.WithItems, resolved.WithParam, resolved.WithSequence, resolved.When)
	if err != nil {
		if !exists {
			d.placeholder(i, name, v1alpha1.NodeError, err.Error())
		}
		return
	}
	if e.len() == 0 {
		if !exists {
			d.placeholder(i, name, v1alpha1.NodeSkipped, "Skipped, empty params")
		}
		return
	}
	d.runLoop(i, name, resolved, e, exists, target)
}

// runLoop runs the iterations of a fanned-out task under its TaskGroup and
// settles the TaskGroup's phase (rule 2.6). Iterations are reached in order
// and the walk stops at the first one not created (see runStepLoop); an
// iteration's item is substituted only to create it, or for its hooks.
func (d *dagRun) runLoop(i int, name string, resolved *v1alpha1.DAGTask, e *loopEntry, exists, target bool) {
	r := d.r
	task := &d.info.tasks[i]
	if !exists {
		if r.yield() {
			return
		}
		d.connect(i, name)
		if _, ok := r.newNode(nodeInit{name: name, typ: v1alpha1.NodeTypeTaskGroup, h: taskSite(task), scope: d.in.tc.scope,
			boundaryID: d.id, phase: v1alpha1.NodeRunning, flag: &v1alpha1.NodeFlag{}}); !ok {
			return
		}
	}
	groupID := r.id(name)
	base := *resolved
	base.WithItems, base.WithParam, base.WithSequence = nil, "", nil
	plain := base.OnExit == "" && len(base.Hooks) == 0 // iterations need their item only to be created
	for k := 0; k < e.len(); k++ {
		if err := e.at(&r.facts, k); err != nil {
			r.markError(groupID, err)
			return
		}
		n, ex := r.nodes[e.ids[k]]
		switch {
		case ex && plain && fulfilled(n):
			continue
		case ex && plain && isLeafType(n.Type) && !r.relaunch[n.ID]:
			if r.revisitExisting(n, taskSite(task), d.in.tc).timeout {
				return
			}
			continue
		case !ex && k > 0 && r.stopsNew(d.opts):
			d.settleTaskGroup(groupID, e)
			return
		}
		t, err := d.iterationTask(i, &base, e, k, ex && plain)
		if err != nil {
			if !ex && !r.yield() {
				_, _ = r.placeholder(e.full[k], taskSite(task), d.in.tc.scope, d.id, v1alpha1.NodeError, err.Error())
				r.addChild(groupID, e.ids[k])
			}
			continue
		}
		if stop := d.runTask(i, e.full[k], t, groupID, ex, target); stop {
			return
		}
	}
	d.settleTaskGroup(groupID, e)
	if g := r.nodes[groupID]; fulfilled(g) {
		d.settled(i, g, target)
	}
}

// iterationTask is the task of iteration k: base renamed when its node
// exists and its item is not needed, else base substituted with the item.
func (d *dagRun) iterationTask(i int, base *v1alpha1.DAGTask, e *loopEntry, k int, named bool) (*v1alpha1.DAGTask, error) {
	if named {
		c := *base
		c.Name = e.short[k]
		return &c, nil
	}
	item, err := e.src.item(k)
	if err != nil {
		return nil, err
	}
	return expandItem(base, e.short[k], d.info.tasks[i].Template, item, d.taskVars(i))
}

// settleTaskGroup sets a TaskGroup's phase once every iteration is
// fulfilled: the last Failed or Error iteration's phase, else Succeeded.
// Under a shutdown, the iterations never created do not count.
func (d *dagRun) settleTaskGroup(groupID string, e *loopEntry) {
	stopped := d.r.stopsNew(d.opts)
	if len(e.ids) < e.len() && !stopped {
		return
	}
	phase := v1alpha1.NodeSucceeded
	for _, id := range e.ids {
		n, ok := d.r.nodes[id]
		if !ok && stopped {
			continue
		}
		if !ok || !fulfilled(n) {
			return
		}
		if n.Phase.FailedOrError() {
			phase = n.Phase
		}
	}
	d.r.setPhase(groupID, phase)
}

// runTask evaluates a new instance's when and runs it. It returns true when
// the task must stop for this pass (an error, a timeout, an exit handler
// still running).
func (d *dagRun) runTask(i int, full string, t *v1alpha1.DAGTask, groupID string, exists, target bool) bool {
	r := d.r
	task := &d.info.tasks[i]
	if !exists {
		if r.yield() {
			return true
		}
		if groupID != "" {
			r.addChild(groupID, r.id(full))
		} else {
			d.connect(i, full)
		}
		ok, err := d.r.lim.Expression.EvalWhen(t.When)
		if err != nil {
			_, _ = r.placeholder(full, taskSite(task), d.in.tc.scope, d.id, v1alpha1.NodeError, err.Error())
			return false
		}
		if !ok {
			_, _ = r.placeholder(full, taskSite(task), d.in.tc.scope, d.id, v1alpha1.NodeSkipped,
				fmt.Sprintf("when '%s' evaluated false", t.When))
			return false
		}
	}
	o, err := r.executeTemplate(full, taskSite(t), d.in.tc, &t.Arguments, d.opts)
	switch {
	case err != nil && endsWorkflow(err):
	case err != nil:
		r.setPhase(r.id(full), v1alpha1.NodeError, fmt.Sprintf("task '%s' errored: %v", full, err))
		return true
	case o.timeout:
		r.setPhase(r.id(full), v1alpha1.NodeFailed, timeoutMessage)
		return true
	}
	n := o.node
	if n.ID == "" {
		return true
	}
	if n.Phase.Completed() && taskCall(t) != nil {
		done, timedOut, herr := r.hooksAndExit(n, taskCall(t), d.taskVars(i), d.in.tc, d.opts)
		d.fail(herr, timedOut)
		if !done {
			if target {
				d.exitsOK = false
			}
			return true
		}
	}
	return false
}

// resolveTask substitutes a task's references, as resolveStep does for a
// step (rule 4.1).
func resolveTask(t *v1alpha1.DAGTask, v *vars) (*v1alpha1.DAGTask, error) {
	return resolveCall(t, func(x *v1alpha1.DAGTask) callFields {
		return callFields{when: &x.When, args: &x.Arguments, hooks: &x.Hooks, items: &x.WithItems, loop: isLoopTask(x)}
	}, v)
}

func isLoopTask(t *v1alpha1.DAGTask) bool {
	return len(t.WithItems) > 0 || t.WithParam != "" || t.WithSequence != nil
}
