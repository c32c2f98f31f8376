package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// dagInfo is what a pass needs to know about a DAG template's shape; it is
// computed once per template per pass, or kept in a Prepared.
type dagInfo struct {
	tasks  []v1alpha1.DAGTask
	index  map[string]int
	deps   [][]string // the task names each task depends on
	depIdx [][]int    // the same, as task indices (-1: no such task)
	leaves []int      // the tasks no task depends on, sorted by name
	parsed []*expr.Depends
	ids    map[string][]string // DAG node name -> node IDs of the tasks
}

// nodeIDs returns the node IDs of the tasks of the DAG node dagName.
func (info *dagInfo) nodeIDs(dagName string) []string {
	if ids, ok := info.ids[dagName]; ok {
		return ids
	}
	ids := make([]string, len(info.tasks)) // filled on first use (taskID)
	if info.ids == nil {
		info.ids = map[string][]string{}
	}
	if len(info.ids) < maxCachedDAGNodes {
		info.ids[dagName] = ids
	}
	return ids
}

// maxCachedDAGNodes bounds the IDs a Prepared keeps per DAG template (a DAG
// called in a large loop has one set per iteration).
const maxCachedDAGNodes = 64

func (f *facts) dagInfo(t *v1alpha1.Template) *dagInfo {
	if info, ok := f.dags[t]; ok {
		return info
	}
	tasks := t.DAG.Tasks
	info := &dagInfo{tasks: tasks, index: make(map[string]int, len(tasks)), deps: make([][]string, len(tasks)),
		depIdx: make([][]int, len(tasks)), parsed: make([]*expr.Depends, len(tasks))}
	for i := range tasks {
		if _, dup := info.index[tasks[i].Name]; !dup {
			info.index[tasks[i].Name] = i
		}
	}
	var names []string // one backing array for all the lists
	var idx []int
	for i := range tasks {
		start := len(names)
		if len(tasks[i].Dependencies) > 0 {
			names = append(names, tasks[i].Dependencies...)
		} else {
			names = appendDependsTasks(names, tasks[i].Depends)
		}
		info.deps[i] = names[start:len(names):len(names)]
		for _, dep := range info.deps[i] {
			j, ok := info.index[dep]
			if !ok {
				j = -1
			}
			idx = append(idx, j)
		}
		info.depIdx[i] = idx[len(idx)-len(info.deps[i]) : len(idx) : len(idx)]
	}
	info.leaves = dagLeaves(info)
	if f.dags == nil {
		f.dags = map[*v1alpha1.Template]*dagInfo{}
	}
	f.dags[t] = info
	return info
}

// dagLeaves lists the tasks no other task depends on, sorted by name: the
// default targets (rule 2.5).
func dagLeaves(info *dagInfo) []int {
	depended := make([]bool, len(info.tasks))
	for _, deps := range info.deps {
		for _, d := range deps {
			if j, ok := info.index[d]; ok {
				depended[j] = true
			}
		}
	}
	var out []int
	for i := range info.tasks {
		if !depended[i] && info.index[info.tasks[i].Name] == i {
			out = append(out, i)
		}
	}
	sort.Slice(out, func(a, b int) bool { return info.tasks[out[a]].Name < info.tasks[out[b]].Name })
	return out
}

// dagTargets are dag.target (which may use tags) split on spaces, or the
// leaves.
func dagTargets(dag *v1alpha1.DAGTemplate, info *dagInfo, v *vars) ([]int, error) {
	if dag.Target == "" {
		return info.leaves, nil
	}
	target, err := v.replace(dag.Target, expr.Lenient)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, n := range strings.Split(target, " ") {
		if n == "" {
			continue
		}
		i, ok := info.index[n]
		if !ok {
			return nil, fmt.Errorf("target %s does not exist", n)
		}
		out = append(out, i)
	}
	return out, nil
}

// dependsTasks lists the task names a depends expression mentions, each
// once, without parsing it fully: operands are names, optionally followed by
// ".Result" (rule 3.1).
func dependsTasks(s string) []string { return appendDependsTasks(nil, s) }

// appendDependsTasks appends the task names of s to out, each once.
func appendDependsTasks(out []string, s string) []string {
	base := len(out)
	for i := 0; i < len(s); {
		c := s[i]
		if !isAlnum(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && (isAlnum(s[j]) || s[j] == '-' || s[j] == '_') {
			j++
		}
		name := s[i:j]
		if j < len(s) && s[j] == '.' {
			j++
			for j < len(s) && isAlnum(s[j]) {
				j++
			}
		}
		if !contains(out[base:], name) {
			out = append(out, name)
		}
		i = j
	}
	return out
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// evalDepends decides task i (rule 3.5): proceed is false until every
// dependency, its hooks and its exit handler are fulfilled; execute is the
// value of the depends expression.
func (d *dagRun) evalDepends(i int) (proceed, execute bool, err error) {
	for _, dep := range d.info.deps[i] {
		n, ok := d.taskNode(dep)
		if !ok || !fulfilled(n) || !d.r.hooksFulfilled(n) || !d.exitDone(dep, n) {
			return false, false, nil
		}
	}
	dp, err := d.depends(i)
	if err != nil {
		return true, false, err
	}
	ok, err := dp.Eval(d.taskState)
	return true, ok, err
}

// exitDone reports whether a completed dependency's exit handler, if it has
// one, exists and is fulfilled.
func (d *dagRun) exitDone(task string, n v1alpha1.NodeStatus) bool {
	j, ok := d.info.index[task]
	if !ok || !n.Phase.Completed() || d.r.shutdown == v1alpha1.ShutdownTerminate {
		return true
	}
	call := taskCall(&d.info.tasks[j])
	if call == nil || call.exitHook(d.r.spec) == nil {
		return true
	}
	e, ok := d.r.byName(n.Name + ".onExit")
	return ok && fulfilled(e) || (!ok && call.exitHook(d.r.spec).Expression != "")
}

// depends parses task i's depends (or dependencies) with the continueOn
// meaning of bare names (rules 3.2, 3.3).
func (d *dagRun) depends(i int) (*expr.Depends, error) {
	if p := d.info.parsed[i]; p != nil {
		return p, nil
	}
	t := &d.info.tasks[i]
	var (
		dp  *expr.Depends
		err error
	)
	if t.Depends != "" {
		dp, err = expr.ParseDepends(t.Depends)
	} else {
		dp, err = expr.DependenciesToDepends(t.Dependencies)
	}
	if err != nil {
		return nil, err
	}
	dp = dp.Rewrite(func(name string) expr.ContinueOn {
		j, ok := d.info.index[name]
		if !ok || d.info.tasks[j].ContinueOn == nil {
			return expr.ContinueOn{}
		}
		c := d.info.tasks[j].ContinueOn
		return expr.ContinueOn{Error: c.Error, Failed: c.Failed}
	})
	d.info.parsed[i] = dp
	return dp, nil
}

// taskState is what a depends expression sees of a task (rule 3.4).
func (d *dagRun) taskState(task string) expr.TaskState {
	n, ok := d.taskNode(task)
	if !ok {
		return expr.TaskState{}
	}
	if n.Type != v1alpha1.NodeTypeTaskGroup {
		return expr.TaskState{Phase: string(n.Phase), Daemoned: isDaemoned(n)}
	}
	phases := make([]string, 0, len(n.Children))
	for _, c := range n.Children {
		if cn, ok := d.r.nodes[c]; ok && !isHooked(cn) {
			phases = append(phases, string(cn.Phase))
		}
	}
	return expr.TaskGroupState(string(n.Phase), phases)
}

type phaseNode struct {
	id    string
	phase v1alpha1.NodePhase
}

// assess decides the DAG's phase from its target branches (rule 2.5, traps 2
// and 3). When a task of this pass is not done the DAG is still Running,
// which spares the walk on every pass but the last.
func (d *dagRun) assess() v1alpha1.NodePhase {
	if d.r.shutdown != "" && !d.opts.onExit && d.exitsOK {
		return v1alpha1.NodeFailed
	}
	if !d.done {
		return v1alpha1.NodeRunning
	}
	r := d.r
	targets := make(map[string]v1alpha1.NodePhase, len(d.targets))
	for _, t := range d.targets {
		targets[r.id(d.taskNodeName(d.info.tasks[t].Name))] = ""
	}
	dag := r.nodes[d.id]
	seen := map[phaseNode]bool{}
	var queue []phaseNode
	push := func(ids []string, phase v1alpha1.NodePhase) {
		for _, id := range ids {
			k := phaseNode{id, phase}
			if !seen[k] {
				seen[k] = true
				queue = append(queue, k)
			}
		}
	}
	push(dag.Children, v1alpha1.NodeSucceeded)
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		n, ok := r.nodes[cur.id]
		if !ok || !fulfilled(n) {
			return v1alpha1.NodeRunning
		}
		branch := cur.phase
		if n.Phase.Completed() {
			branch = n.Phase
		}
		if prev, isTarget := targets[n.ID]; isTarget && !prev.FailedOrError() {
			targets[n.ID] = branch
		}
		if n.Type == v1alpha1.NodeTypeRetry {
			push(r.retryWalkChildren(n), branch)
		} else {
			push(n.Children, branch)
		}
	}
	return d.targetsPhase(targets)
}

// targetsPhase scans the targets in order (rule 2.5 step 4).
func (d *dagRun) targetsPhase(targets map[string]v1alpha1.NodePhase) v1alpha1.NodePhase {
	ff := d.in.tmpl.DAG.FailFast == nil || *d.in.tmpl.DAG.FailFast
	result := v1alpha1.NodeSucceeded
	for _, t := range d.targets {
		task := &d.info.tasks[t]
		phase := targets[d.r.id(d.taskNodeName(task.Name))]
		switch {
		case phase == "":
			result = v1alpha1.NodeRunning
			if !ff {
				return result
			}
		case phase.FailedOrError():
			if task.ContinueOn != nil && continueOnPhase(*task.ContinueOn, phase) {
				continue
			}
			result = phase
			if ff {
				return result
			}
		}
	}
	return result
}

// retryWalkChildren continues a DAG walk past a Retry node: the children of
// its attempts and its hook nodes (ctl/operator.go getRetryNodeChildrenIds).
func (f *facts) retryWalkChildren(n v1alpha1.NodeStatus) []string {
	var ids []string
	for i := len(n.Children) - 1; i >= 0; i-- {
		c, ok := f.nodes[n.Children[i]]
		if !ok {
			continue
		}
		if isHooked(c) {
			ids = append(ids, c.ID)
		} else {
			ids = append(ids, c.Children...)
		}
	}
	return ids
}

// taskVars is the scope in which task i is resolved: the DAG template's
// variables and the tasks it depends on, transitively (rule 6.1).
func (d *dagRun) taskVars(i int) *vars {
	v := d.r.newVars(d.in.v)
	v.refs = &taskRefs{d: d, task: i}
	return v
}

// taskRefs resolves tasks.<name>.* for one task (its ancestors) or, with
// task -1, for the DAG's outputs (every task that has a node).
type taskRefs struct {
	d         *dagRun
	task      int
	ancestors map[string]bool
}

func (t *taskRefs) err() error { return t.d.errsOfRefs() }

func (t *taskRefs) allowed(name string) bool {
	if t.task < 0 {
		return true
	}
	if t.ancestors == nil {
		t.ancestors = map[string]bool{}
		stack := append([]string(nil), t.d.info.deps[t.task]...)
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if t.ancestors[n] {
				continue
			}
			t.ancestors[n] = true
			if j, ok := t.d.info.index[n]; ok {
				stack = append(stack, t.d.info.deps[j]...)
			}
		}
	}
	return t.ancestors[name]
}

func (t *taskRefs) lookup(key string) (any, bool) {
	name, ok := refName(key, "tasks.")
	if !ok || !t.allowed(name) {
		return nil, false
	}
	v, ok := t.d.entries(name)[key]
	return v, ok
}

func (t *taskRefs) addAll(dst expr.Scope) {
	for _, task := range t.d.info.tasks {
		if !t.allowed(task.Name) {
			continue
		}
		for k, v := range t.d.entries(task.Name) {
			dst[k] = v
		}
	}
}

func (d *dagRun) errsOfRefs() error { return d.refErr }

// entries computes the variables of one task, once per pass.
func (d *dagRun) entries(name string) expr.Scope {
	if sc, ok := d.cache[name]; ok {
		return sc
	}
	sc := expr.Scope{}
	r := d.r
	prefix := "tasks." + name
	if n, ok := d.taskNode(name); ok {
		if n.Type == v1alpha1.NodeTypeTaskGroup {
			addNodeFields(sc, prefix, n)
			var iters []v1alpha1.NodeStatus
			for _, c := range n.Children {
				if cn, ok := r.nodes[c]; ok {
					iters = append(iters, cn)
				}
			}
			if err := addAggregates(sc, prefix, iters, n.Name, r.lim.MaxParameterBytes); err != nil && d.refErr == nil {
				d.refErr = err
			}
		} else if j, ok := d.info.index[name]; ok {
			r.addNodeEntries(sc, prefix, n, taskSite(&d.info.tasks[j]), d.in.tc)
		}
	}
	if d.cache == nil {
		d.cache = map[string]expr.Scope{}
	}
	d.cache[name] = sc
	return sc
}
