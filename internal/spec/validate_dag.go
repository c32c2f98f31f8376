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
	all := base.clone()
	all.hints["tasks"] = "this DAG has no such task"
	for i := range d.Tasks {
		task := &d.Tasks[i]
		v.checkTask(idx(dp+".tasks", i), task, tasks, callees, deps, all)
	}
	for i := range d.Tasks {
		task := &d.Tasks[i]
		addNodeScope(all, "tasks."+task.Name, callees[task.Name], loopOf(task.WithItems, task.WithParam, task.WithSequence).any())
	}
	v.checkTemplateOutputs(t, path, all)
}

// checkTask checks one task's body against the scope of its ancestors.
func (v *specValidator) checkTask(tp string, task *v1alpha1.DAGTask, tasks map[string]*v1alpha1.DAGTask, callees map[string]*v1alpha1.Template, deps map[string][]string, base *scope) {
	sc := base.clone()
	anc := ancestors(task.Name, deps)
	for _, other := range sortedKeys(callees) {
		if other != task.Name && !anc[other] {
			sc.hints["tasks."+other] = fmt.Sprintf("task %q is not an ancestor of %q: add it to depends", other, task.Name)
		}
	}
	for a := range anc {
		at := tasks[a]
		addNodeScope(sc, "tasks."+a, callees[a], loopOf(at.WithItems, at.WithParam, at.WithSequence).any())
	}
	l := loopOf(task.WithItems, task.WithParam, task.WithSequence)
	v.checkLoop(tp, l)
	addItemScope(sc, l)
	sc.add("tasks." + task.Name + ".status")
	sc.checkValue(v.r, task, tp, skipCallFields(tp))
	v.checkArgumentsOf(tp+".arguments", task.Arguments, callees[task.Name], nil)
	self := sc.clone()
	addNodeScope(self, "tasks."+task.Name, callees[task.Name], l.any())
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
