package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// dag checks a DAG template: task names, dependencies and their grammar,
// cycles, targets, and that each task refers only to its ancestors.
func (v *specValidator) dag(t *v1alpha1.Template, path string, base *scope) {
	d := t.DAG
	dp := path + ".dag"
	if len(d.Tasks) == 0 {
		v.r.add(dp+".tasks", "a dag template needs at least one task")
		return
	}
	tasks := map[string]*v1alpha1.DAGTask{}
	usesDepends, usesDependencies := false, false
	seen := map[string]bool{}
	for i := range d.Tasks {
		task := &d.Tasks[i]
		v.checkStepName(idx(dp+".tasks", i)+".name", task.Name, seen)
		tasks[task.Name] = task
		usesDepends = usesDepends || task.Depends != ""
		usesDependencies = usesDependencies || len(task.Dependencies) > 0
	}
	if usesDepends && usesDependencies {
		v.r.add(dp+".tasks", "cannot use both 'depends' and 'dependencies' in the same DAG template")
	}
	deps := map[string][]string{}
	callees := map[string]*v1alpha1.Template{}
	for i := range d.Tasks {
		task := &d.Tasks[i]
		tp := idx(dp+".tasks", i)
		deps[task.Name] = v.taskDependencies(tp, task, tasks, usesDepends || usesDependencies)
		callees[task.Name] = v.resolveCall(tp, task.Template, task.TemplateRef, task.Inline)
		if task.Inline != nil {
			v.template(task.Inline, tp+".inline")
		}
	}
	if cycle := findCycle(deps); cycle != nil {
		v.r.add(dp+".tasks", "dependency cycle: %s", strings.Join(cycle, " -> "))
		return
	}
	v.checkTargets(dp+".target", d.Target, tasks)
	refs := newNodeRefs("tasks.", "this DAG has no such task")
	for i := range d.Tasks {
		task := &d.Tasks[i]
		refs.declare(task.Name, callees[task.Name], loopOf(task.WithItems, task.WithParam, task.WithSequence).any())
	}
	anc := newAncestry(deps)
	for i := range d.Tasks {
		v.checkTask(idx(dp+".tasks", i), &d.Tasks[i], refs, anc, base)
	}
	all := base.withView(&view{refs: refs, visible: func(string) (bool, string) { return true, "" }})
	v.checkTemplateOutputs(t, path, all)
}

// checkTask checks one task's body against the scope of its ancestors.
func (v *specValidator) checkTask(tp string, task *v1alpha1.DAGTask, refs *nodeRefs, anc *ancestry, base *scope) {
	visible := func(name string) (bool, string) {
		if anc.of(task.Name)[name] {
			return true, ""
		}
		return false, fmt.Sprintf("task %q is not an ancestor of %q: add it to depends", name, task.Name)
	}
	l := loopOf(task.WithItems, task.WithParam, task.WithSequence)
	v.checkLoop(tp, l)
	sc := base.withView(&view{refs: refs, visible: visible, self: task.Name})
	if l.any() {
		sc = sc.clone()
		addItemScope(sc, l)
	}
	sc.checkValue(v.r, task, tp, skipCallFields)
	callee := refs.callees[task.Name]
	v.checkArgumentsOf(tp+".arguments", task.Arguments, callee, nil)
	self := sc.withView(&view{refs: refs, visible: visible, self: task.Name, selfOutputs: true})
	v.checkStepExits(tp, task.OnExit, task.Hooks, self)
}

// taskDependencies returns the names a task depends on, reporting unknown
// names, bad depends expressions and misuse of results.
func (v *specValidator) taskDependencies(tp string, task *v1alpha1.DAGTask, tasks map[string]*v1alpha1.DAGTask, named bool) []string {
	if named && task.Name != "" && task.Name[0] >= '0' && task.Name[0] <= '9' {
		v.r.add(tp+".name", "task name %q cannot begin with a digit when using 'depends' or 'dependencies'", task.Name)
	}
	if task.Depends != "" && task.ContinueOn != nil {
		v.r.add(tp+".continueOn", "cannot use 'continueOn' with 'depends': use '<task>.Failed' or '<task>.Errored' in depends instead")
	}
	var names []string
	for j, dep := range task.Dependencies {
		if _, ok := tasks[dep]; !ok {
			v.r.add(idx(tp+".dependencies", j), "dependency %q not found", dep)
			continue
		}
		names = append(names, dep)
	}
	if task.Depends == "" {
		return names
	}
	d, err := expr.ParseDepends(task.Depends)
	if err != nil {
		v.r.add(tp+".depends", "%v", err)
		return names
	}
	for _, op := range d.Operands() {
		other, ok := tasks[op.Task]
		if !ok {
			v.r.add(tp+".depends", "dependency %q not found", op.Task)
			continue
		}
		if (op.Result == "AnySucceeded" || op.Result == "AllFailed") && !loopOf(other.WithItems, other.WithParam, other.WithSequence).any() {
			v.r.add(tp+".depends", "%s.%s is only valid for a task with withItems, withParam or withSequence", op.Task, op.Result)
		}
		if !slices.Contains(names, op.Task) {
			names = append(names, op.Task)
		}
	}
	return names
}

func (v *specValidator) checkTargets(path, target string, tasks map[string]*v1alpha1.DAGTask) {
	if target == "" || strings.Contains(target, "{{") {
		return
	}
	for _, name := range strings.Fields(target) {
		if _, ok := tasks[name]; !ok {
			v.r.add(path, "target task %q not found", name)
		}
	}
}

// ancestry answers "is X an ancestor of T", computing each task's
// ancestors only when first asked.
type ancestry struct {
	deps map[string][]string
	memo map[string]map[string]bool
}

func newAncestry(deps map[string][]string) *ancestry {
	return &ancestry{deps: deps, memo: map[string]map[string]bool{}}
}

func (a *ancestry) of(task string) map[string]bool {
	if m, ok := a.memo[task]; ok {
		return m
	}
	m := ancestors(task, a.deps)
	a.memo[task] = m
	return m
}

// ancestors returns every task that name depends on, directly or not.
func ancestors(name string, deps map[string][]string) map[string]bool {
	out := map[string]bool{}
	stack := append([]string(nil), deps[name]...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if out[n] {
			continue
		}
		out[n] = true
		stack = append(stack, deps[n]...)
	}
	return out
}

// findCycle returns a dependency cycle as a path of names, or nil.
func findCycle(deps map[string][]string) []string {
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		switch state[n] {
		case active:
			i := slices.Index(stack, n)
			return append(append([]string(nil), stack[i:]...), n)
		case done:
			return nil
		}
		state[n] = active
		stack = append(stack, n)
		for _, d := range deps[n] {
			if c := visit(d); c != nil {
				return c
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, n := range sortedKeys(deps) {
		if c := visit(n); c != nil {
			return c
		}
	}
	return nil
}
