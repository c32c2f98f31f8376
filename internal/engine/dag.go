package engine

import (
	"errors"
	"fmt"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// dagRun is one pass over one DAG node (ctl/dag.go dagContext).
type dagRun struct {
	r       *run
	in      invocation
	id      string // the DAG node's ID
	info    *dagInfo
	targets []int
	opts    execOpts // for the tasks: boundary is this DAG
	visited []bool
	done    bool // every visited task, its hooks and exit handler are fulfilled
	exitsOK bool // every target's exit handler is fulfilled
	cache   map[string]expr.Scope
	errs    error // a hook error: the DAG node errors
	refErr  error // an aggregate that could not be computed
}

// executeDAG runs a DAG template: each target with its dependencies first,
// then the phase from the target branches (rules 1.7, 2.5, 3).
func (r *run) executeDAG(in invocation, opts execOpts) (v1alpha1.NodeStatus, error) {
	node, ok := r.byName(in.name)
	if !ok {
		n, err := r.newNode(nodeInit{name: in.name, typ: v1alpha1.NodeTypeDAG, h: in.h, scope: in.scope,
			boundaryID: opts.boundaryID, phase: v1alpha1.NodeRunning, flag: opts.flag, inputs: in.inputs})
		if err != nil {
			return v1alpha1.NodeStatus{}, err
		}
		node = n
	}
	info := r.dagInfo(in.tmpl)
	targets, err := r.dagTargets(in.tmpl.DAG, info, in.v)
	if err != nil {
		return node, err
	}
	d := &dagRun{r: r, in: in, id: node.ID, info: info, targets: targets, visited: make([]bool, len(info.tasks)), done: true,
		exitsOK: true, opts: execOpts{boundaryID: node.ID, boundaryTmpl: in.tmpl, onExit: opts.onExit, depth: opts.depth}}
	for _, t := range targets {
		d.executeTask(t, true)
	}
	if d.errs != nil {
		n := r.nodes[node.ID]
		return n, d.errs
	}
	switch phase := d.assess(); phase {
	case v1alpha1.NodeRunning:
		n := r.nodes[node.ID]
		return n, nil
	case v1alpha1.NodeFailed, v1alpha1.NodeError:
		d.updateOutbound()
		n := r.setPhase(node.ID, phase)
		d.killDaemons()
		return n, nil
	}
	return d.finish()
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
	outputs, err := r.templateOutputs(d.in.tmpl, v)
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
	return d.r.byParts(d.in.name, ".", task)
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
// executeDAGTask).
func (d *dagRun) executeTask(i int, target bool) {
	if d.visited[i] {
		return
	}
	d.visited[i] = true
	task := &d.info.tasks[i]
	node, exists := d.taskNode(task.Name)
	if exists && d.settled(i, node, target) {
		return
	}
	d.done = false
	if exists && isLeafType(node.Type) && taskCall(task) == nil {
		_, _ = d.r.revisitExisting(node, taskHolder(task), d.in.tc) // running: nothing else to do
		return
	}
	name := d.taskNodeName(task.Name)
	if !exists {
		if !d.ready(i, name) {
			return
		}
	} else if node.Type != v1alpha1.NodeTypeTaskGroup {
		d.runTask(i, name, task, "", true, target)
		return
	}
	d.startTask(i, name, task, exists, target)
}

// settled handles a task whose node exists and is fulfilled: its hooks and
// exit handler. It returns true when there is nothing else to do.
func (d *dagRun) settled(i int, node v1alpha1.NodeStatus, target bool) bool {
	task := &d.info.tasks[i]
	call := taskCall(task)
	if !fulfilled(node) {
		if call != nil && hasLifecycleHooks(task.Hooks) && node.Phase == v1alpha1.NodeRunning {
			if _, err := d.r.hooksAndExit(node, call, d.taskVars(i), d.in.tc, d.opts); err != nil {
				d.fail(err)
			}
		}
		return false
	}
	if call == nil {
		return true
	}
	done, err := d.r.hooksAndExit(node, call, d.taskVars(i), d.in.tc, d.opts)
	if err != nil {
		d.fail(err)
	}
	if !done {
		d.done = false
		if target {
			d.exitsOK = false
		}
	}
	return true
}

// fail records a hook error: the DAG node errors (ctl/dag.go).
func (d *dagRun) fail(err error) {
	if d.errs == nil {
		d.errs = err
	}
}

// ready runs task i's dependencies and decides its depends (rule 3.5): false
// when it must wait, or when it became a placeholder (Omitted, Error).
func (d *dagRun) ready(i int, name string) bool {
	for _, dep := range d.info.deps[i] {
		j, ok := d.info.index[dep]
		if !ok {
			d.placeholder(i, name, v1alpha1.NodeError, fmt.Sprintf("task '%s' depends on '%s', which does not exist", d.info.tasks[i].Name, dep))
			return false
		}
		d.executeTask(j, false)
	}
	if len(d.info.deps[i]) == 0 {
		return true
	}
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
	task := &d.info.tasks[i]
	d.connect(i, name)
	_, _ = d.r.placeholder(name, taskHolder(task), d.in.tc.scope, d.id, phase, msg)
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
	items, err := loopItems(resolved.WithItems, resolved.WithParam, resolved.WithSequence, resolved.When)
	if err != nil {
		if !exists {
			d.placeholder(i, name, v1alpha1.NodeError, err.Error())
		}
		return
	}
	if len(items) == 0 {
		if !exists {
			d.placeholder(i, name, v1alpha1.NodeSkipped, "Skipped, empty params")
		}
		return
	}
	d.runLoop(i, name, resolved, items, exists, target)
}

// runLoop runs the iterations of a fanned-out task under its TaskGroup and
// settles the TaskGroup's phase (rule 2.6).
func (d *dagRun) runLoop(i int, name string, resolved *v1alpha1.DAGTask, items []v1alpha1.Item, exists, target bool) {
	r := d.r
	task := &d.info.tasks[i]
	if !exists {
		d.connect(i, name)
		if _, err := r.newNode(nodeInit{name: name, typ: v1alpha1.NodeTypeTaskGroup, h: taskHolder(task), scope: d.in.tc.scope,
			boundaryID: d.id, phase: v1alpha1.NodeRunning, flag: &v1alpha1.NodeFlag{}}); err != nil {
			return
		}
	}
	groupID := r.id(name)
	base := *resolved
	base.WithItems, base.WithParam, base.WithSequence = nil, "", nil
	needsItem := base.OnExit != "" || len(base.Hooks) > 0
	iterIDs := make([]string, 0, len(items))
	for k, item := range items {
		iname := iterationName(task.Name, k, item)
		full := d.taskNodeName(iname)
		iterIDs = append(iterIDs, r.id(full))
		_, ex := r.byName(full)
		var t *v1alpha1.DAGTask
		if ex && !needsItem {
			c := base
			c.Name = iname
			t = &c
		} else {
			et, err := expandItem(&base, iname, task.Template, item, d.taskVars(i))
			if err != nil {
				if !ex {
					_, _ = r.placeholder(full, taskHolder(task), d.in.tc.scope, d.id, v1alpha1.NodeError, err.Error())
					r.addChild(groupID, r.id(full))
				}
				continue
			}
			t = et
		}
		if stop := d.runTask(i, full, t, groupID, ex, target); stop {
			return
		}
	}
	d.settleTaskGroup(groupID, iterIDs)
	if g := r.nodes[groupID]; fulfilled(g) {
		d.settled(i, g, target)
	}
}

// settleTaskGroup sets a TaskGroup's phase once every iteration is
// fulfilled: the last Failed or Error iteration's phase, else Succeeded.
func (d *dagRun) settleTaskGroup(groupID string, iterIDs []string) {
	phase := v1alpha1.NodeSucceeded
	for _, id := range iterIDs {
		n, ok := d.r.nodes[id]
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
		if groupID != "" {
			r.addChild(groupID, r.id(full))
		} else {
			d.connect(i, full)
		}
		ok, err := expr.EvalWhen(t.When)
		if err != nil {
			_, _ = r.placeholder(full, taskHolder(task), d.in.tc.scope, d.id, v1alpha1.NodeError, err.Error())
			return false
		}
		if !ok {
			_, _ = r.placeholder(full, taskHolder(task), d.in.tc.scope, d.id, v1alpha1.NodeSkipped,
				fmt.Sprintf("when '%s' evaluated false", t.When))
			return false
		}
	}
	n, err := r.executeTemplate(full, taskHolder(t), d.in.tc, &t.Arguments, d.opts)
	var depth *depthError
	switch {
	case err == nil, isSignal(err), errors.As(err, &depth):
	case errors.Is(err, errTimeout):
		r.setPhase(r.id(full), v1alpha1.NodeFailed, errTimeout.Error())
		return true
	default:
		r.setPhase(r.id(full), v1alpha1.NodeError, fmt.Sprintf("task '%s' errored: %v", full, err))
		return true
	}
	if n.ID == "" {
		return true
	}
	if n.Phase.Completed() && taskCall(t) != nil {
		done, herr := r.hooksAndExit(n, taskCall(t), d.taskVars(i), d.in.tc, d.opts)
		if herr != nil {
			d.fail(herr)
		}
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
	if t.When != "" {
		w, err := v.replace(t.When, expr.StrictRefs)
		if err != nil {
			return nil, err
		}
		ok, werr := expr.EvalWhen(w)
		if werr == nil && !ok {
			c := *t
			c.When = w
			return &c, nil
		}
		if werr != nil && !isLoopTask(t) {
			return nil, werr
		}
	}
	c := *t
	c.Arguments = markAbsentArguments(c.Arguments, v)
	c.Hooks = nil // hook arguments are resolved when the hook runs (rule 9.2)
	out, err := substitute(v, &c, expr.StrictRefs)
	if err != nil {
		return nil, err
	}
	if out == &c {
		cp := c
		out = &cp
	}
	out.Hooks = t.Hooks
	if err := resolveArtifactArgs(&out.Arguments, v); err != nil {
		return nil, err
	}
	return out, nil
}

func isLoopTask(t *v1alpha1.DAGTask) bool {
	return len(t.WithItems) > 0 || t.WithParam != "" || t.WithSequence != nil
}
