package engine

import (
	"fmt"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// hookCall is what a step or task declares about hooks (§9).
type hookCall struct {
	kind   string // "steps" or "tasks"
	name   string // the step's or task's name (expanded for a loop)
	hooks  v1alpha1.LifecycleHooks
	onExit string
}

func stepCall(s *v1alpha1.WorkflowStep) *hookCall {
	if s == nil || (s.OnExit == "" && len(s.Hooks) == 0) {
		return nil
	}
	return &hookCall{kind: "steps", name: s.Name, hooks: s.Hooks, onExit: s.OnExit}
}

func taskCall(t *v1alpha1.DAGTask) *hookCall {
	if t == nil || (t.OnExit == "" && len(t.Hooks) == 0) {
		return nil
	}
	return &hookCall{kind: "tasks", name: t.Name, hooks: t.Hooks, onExit: t.OnExit}
}

// exitHook is the call's exit handler: onExit: T or hooks.exit, receiving
// spec.arguments unless hooks.exit has its own (rule 9.2, trap 14).
func (c *hookCall) exitHook(spec *v1alpha1.WorkflowSpec) *v1alpha1.LifecycleHook {
	if c.onExit != "" {
		return &v1alpha1.LifecycleHook{Template: c.onExit, Arguments: spec.Arguments}
	}
	h, ok := c.hooks[v1alpha1.ExitLifecycleEvent]
	if !ok {
		return nil
	}
	if argumentsEmpty(h.Arguments) {
		h.Arguments = spec.Arguments
	}
	return &h
}

// hooksAndExit runs a child's lifecycle hooks and, once the child completed,
// its exit handler. done is true when the child, its hooks and its exit
// handler are all fulfilled: only then may its group or dependents move on.
// timedOut is true when a hook's leaf passed its template timeout (the
// caller fails with it); it is false when err is set.
func (r *pass) hooksAndExit(child v1alpha1.NodeStatus, c *hookCall, sv *vars, tc tmplCtx, opts execOpts) (done, timedOut bool, err error) {
	if c == nil {
		return fulfilled(child), false, nil
	}
	hv := r.newVars(sv)
	hv.set(c.kind+"."+statusName(child, c)+".status", string(child.Phase))
	if hasLifecycleHooks(c.hooks) {
		done, timedOut, err := r.lifecycleHooks(child, c, hv, tc, opts)
		if err != nil || timedOut || !done {
			return false, timedOut, err
		}
	}
	if !fulfilled(child) {
		return false, false, nil
	}
	if !child.Phase.Completed() {
		return true, false, nil
	}
	has, exit, err := r.runExitHook(child, c, hv, tc, opts)
	if err != nil || exit.timeout {
		return false, exit.timeout, err
	}
	return !has || (exit.node.ID != "" && fulfilled(exit.node)), false, nil
}

// statusName is the name under which a hook sees its node's status: the
// display name for steps (ctl/steps.go), the task name for tasks.
func statusName(child v1alpha1.NodeStatus, c *hookCall) string {
	if c.kind == "steps" {
		return child.DisplayName
	}
	return c.name
}

func hasLifecycleHooks(h v1alpha1.LifecycleHooks) bool {
	for name := range h {
		if name != v1alpha1.ExitLifecycleEvent {
			return true
		}
	}
	return false
}

// runExitHook runs <node>.onExit for a completed step or task (rule 9.2).
// has is false when there is no exit handler to wait for. A hold is no
// failure: the exit handler is not done yet.
func (r *pass) runExitHook(parent v1alpha1.NodeStatus, c *hookCall, hv *vars, tc tmplCtx, opts execOpts) (bool, outcome, error) {
	hook := c.exitHook(r.spec)
	if hook == nil || r.shutdown == v1alpha1.ShutdownTerminate {
		return false, outcome{}, nil
	}
	name := parent.Name + ".onExit"
	if hook.Expression != "" {
		if _, exists := r.byName(name); !exists {
			ok, err := r.lim.Expression.EvalBool(hook.Expression, hv.env())
			if err != nil {
				return true, outcome{}, r.errorHookNode(name, hook, parent, tc, opts, err)
			}
			if !ok {
				return false, outcome{}, nil
			}
		}
	}
	args := hook.Arguments
	if !argumentsEmpty(args) {
		resolved, err := r.resolveHookArgs(args, parent, c, hv)
		if err != nil {
			return true, outcome{}, r.errorHookNode(name, hook, parent, tc, opts, err)
		}
		args = resolved
	}
	o, err := r.executeTemplate(name, hookSite(hook), tc, &args, hookOpts(opts, true))
	r.linkHook(parent, name)
	return true, o, err
}

func hookOpts(opts execOpts, onExit bool) execOpts {
	return execOpts{boundaryID: opts.boundaryID, boundaryTmpl: opts.boundaryTmpl, onExit: onExit || opts.onExit,
		flag: &v1alpha1.NodeFlag{Hooked: true}, depth: opts.depth}
}

// linkHook makes an existing hook node a child of its parent (rule 1.7).
func (r *pass) linkHook(parent v1alpha1.NodeStatus, name string) {
	if _, ok := r.byName(name); ok {
		r.addChild(parent.ID, r.id(name))
	}
}

// errorHookNode records a hook's error on its node and returns the error.
func (r *pass) errorHookNode(name string, hook *v1alpha1.LifecycleHook, parent v1alpha1.NodeStatus, tc tmplCtx, opts execOpts, err error) error {
	n, ok := r.byName(name)
	if !ok || !fulfilled(n) {
		var existing *v1alpha1.NodeStatus
		if ok {
			existing = &n
		}
		r.errorNode(existing, name, hookSite(hook), tc, hookOpts(opts, false), err)
		r.linkHook(parent, name)
	}
	return err
}

// resolveHookArgs substitutes an exit or hook's arguments leniently, with
// <kind>.<name>.outputs.* naming the parent's own outputs (those of the last
// attempt of a Retry node) (ctl/exit_handler.go resolveExitTmplArgument).
func (r *pass) resolveHookArgs(args v1alpha1.Arguments, parent v1alpha1.NodeStatus, c *hookCall, hv *vars) (v1alpha1.Arguments, error) {
	av := r.newVars(hv)
	prefix := c.kind + "." + c.name
	if out := r.lastAttemptOf(parent).Outputs; out != nil {
		for _, p := range out.Parameters {
			val := ""
			if p.Value != nil {
				val = p.Value.String()
			}
			av.set(prefix+".outputs.parameters."+p.Name, val)
		}
		for _, a := range out.Artifacts {
			av.set(prefix+".outputs.artifacts."+a.Name, a)
		}
	}
	marked := markAbsentArguments(args, av)
	out, err := substitute(av, &marked, expr.Lenient)
	if err != nil {
		return args, err
	}
	res := *out
	if err := resolveArtifactArgs(&res, av); err != nil {
		return args, err
	}
	return res, nil
}

// lifecycleHooks runs a node's expression hooks (rule 9.3): each fires once,
// the first time its expression is true, as <node>.hooks.<name>. done is
// true when every hook that fired has finished; timedOut as hooksAndExit.
func (r *pass) lifecycleHooks(parent v1alpha1.NodeStatus, c *hookCall, hv *vars, tc tmplCtx, opts execOpts) (done, timedOut bool, err error) {
	done = true
	for _, hn := range sortedKeys(hookNames(c.hooks)) {
		hook := c.hooks[v1alpha1.LifecycleEvent(hn)]
		name := parent.Name + ".hooks." + hn
		if hook.Expression == "" {
			return false, false, r.errorHookNode(name, &hook, parent, tc, opts, fmt.Errorf("Expression required for hook %s", name))
		}
		if _, exists := r.byName(name); !exists {
			ok, err := r.lim.Expression.EvalBool(hook.Expression, hv.env())
			if err != nil {
				return false, false, r.errorHookNode(name, &hook, parent, tc, opts, err)
			}
			if !ok {
				continue
			}
		}
		args := hook.Arguments
		if !argumentsEmpty(args) && parent.Outputs != nil {
			resolved, err := r.resolveHookArgs(args, parent, c, hv)
			if err != nil {
				return false, false, r.errorHookNode(name, &hook, parent, tc, opts, err)
			}
			args = resolved
		}
		o, err := r.executeTemplate(name, hookSite(&hook), tc, &args, hookOpts(opts, false))
		r.linkHook(parent, name)
		if err != nil || o.timeout {
			return false, o.timeout, err
		}
		if o.node.ID == "" || !fulfilled(o.node) {
			done = false
		}
	}
	return done, false, nil
}

func hookNames(h v1alpha1.LifecycleHooks) map[string]struct{} {
	out := make(map[string]struct{}, len(h))
	for name := range h {
		if name != v1alpha1.ExitLifecycleEvent {
			out[string(name)] = struct{}{}
		}
	}
	return out
}

// workflowHooks runs the workflow-level expression hooks (rule 9.3): they
// see the global scope only, and become children of the root. It returns
// true when every hook that fired has finished.
func (r *pass) workflowHooks() bool {
	if !hasLifecycleHooks(r.spec.Hooks) {
		return true
	}
	root, ok := r.byName(r.wf.Name)
	if !ok {
		return true
	}
	done := true
	for _, hn := range sortedKeys(hookNames(r.spec.Hooks)) {
		hook := r.spec.Hooks[v1alpha1.LifecycleEvent(hn)]
		name := r.wf.Name + ".hooks." + hn
		_, exists := r.byName(name)
		if !exists {
			if hook.Expression == "" {
				r.errorHookNode(name, &hook, root, r.rootContext(), execOpts{}, fmt.Errorf("Expression required for hook %s", name))
				continue
			}
			fire, err := r.lim.Expression.EvalBool(hook.Expression, r.newVars(nil).env())
			if err != nil {
				r.errorHookNode(name, &hook, root, r.rootContext(), execOpts{}, err)
				continue
			}
			if !fire {
				continue
			}
		}
		args := hook.Arguments
		o, _ := r.executeTemplate(name, hookSite(&hook), r.rootContext(), &args,
			execOpts{flag: &v1alpha1.NodeFlag{Hooked: true}})
		r.linkHook(root, name)
		if node := o.node; node.ID == "" || !fulfilled(node) {
			done = false
		}
	}
	return done
}
