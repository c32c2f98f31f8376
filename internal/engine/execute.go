package engine

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// execOpts carries what a template invocation inherits from its caller
// (ctl/operator.go executeTemplateOpts).
type execOpts struct {
	boundaryID   string
	boundaryTmpl *v1alpha1.Template // template of the boundary node, for parallelism and failFast
	onExit       bool               // part of an exit handler (shutdown and deadline spare it)
	flag         *v1alpha1.NodeFlag
	depth        int
	execDeadline time.Time // retry maxDuration deadline handed to pods
}

// executeTemplate runs the template a call site names as the node called name
// (ctl/operator.go executeTemplate). A fulfilled node returns at once, which
// keeps a pass O(nodes) with a small constant (rule 0.1). It returns the
// outcome: the node (the zero NodeStatus when none was created this pass),
// or why it was held back or that it timed out, and a user error on the
// node, which the caller turns into a group or task outcome (rules 2.4, 2.9).
func (r *pass) executeTemplate(name string, h callSite, tc tmplCtx, args *v1alpha1.Arguments, opts execOpts) (outcome, error) {
	node, exists := r.byName(name)
	if exists && fulfilled(node) {
		r.sawPod(node) // a daemon
		return outcome{node: node}, nil
	}
	if exists && isLeafType(node.Type) && !r.relaunch[node.ID] {
		return r.revisitExisting(node, h, tc), nil
	}
	if !exists && r.yield() {
		return outcome{hold: holdYield}, nil
	}
	var existing *v1alpha1.NodeStatus
	if exists {
		existing = &node
	}
	opts.depth++
	in, err := r.prepare(name, h, tc, args, existing, opts)
	if err != nil {
		return outcome{node: r.errorNode(existing, name, h, tc, opts, err)}, err
	}
	r.lockStateLoaded(in.tmpl) // a missing lock state is asked for with the memo entry, in one pass
	memo, err := r.memoize(in, existing, opts)
	if err != nil {
		return outcome{node: r.errorNode(existing, name, h, tc, opts, err)}, err
	}
	if memo.hold != holdNone { // the cache entry is not loaded yet, or the node limit
		return outcome{node: node, hold: memo.hold}, nil
	}
	if memo.hit.ID != "" {
		return outcome{node: memo.hit}, nil
	}
	if r.checkParallelism(in.tmpl, existing, opts) {
		return outcome{node: node, hold: holdParallelism}, nil
	}
	if o, wait := r.acquireLocks(in, existing, opts); wait {
		return o, nil
	}
	var o outcome
	if rs := r.retryStrategy(in.tmpl); rs != nil {
		o, err = r.executeRetry(in, existing, rs, opts)
	} else {
		if isLeafTemplate(in.tmpl) {
			in.v.set("pod.name", podName(r.wf.Name, name, in.tmpl.Name))
		}
		o, err = r.dispatch(in, opts)
	}
	o.node = r.recordMemoMiss(o.node, memo.miss)
	if existing == nil && o.node.ID != "" && err == nil && o.plain() {
		if derr := r.applyDisplayName(&o.node, in.tmpl, in.v); derr != nil {
			return outcome{node: r.errorNode(&o.node, name, h, tc, opts, derr)}, derr
		}
	}
	return o, err
}

// prepare resolves the template of an invocation, binds its inputs and
// builds its variables (rule 6.1). Its errors are user errors for the node.
func (r *pass) prepare(name string, h callSite, tc tmplCtx, args *v1alpha1.Arguments, existing *v1alpha1.NodeStatus, opts execOpts) (invocation, error) {
	if opts.depth >= r.lim.MaxDepth {
		e := &limitError{node: name, what: fmt.Sprintf("templates nest %d deep", opts.depth), key: "maxDepth", limit: r.lim.MaxDepth}
		r.stopFor(e)
		return invocation{}, e
	}
	tmpl, inner, err := r.resolve(h, tc)
	if err == nil && tmpl.Type() == v1alpha1.TemplateTypeUnknown {
		err = fmt.Errorf("Template '%s' missing specification", tmpl.Name)
	}
	if err != nil {
		return invocation{}, err
	}
	v := r.newVars(nil)
	v.set("node.name", name)
	switch h.kind {
	case siteStep:
		v.set("steps.name", h.name)
	case siteTask:
		v.set("tasks.name", h.name)
	}
	inputs, err := nodeInputs(existing, tmpl, args, v)
	if err != nil {
		return invocation{}, err
	}
	if existing == nil {
		if err := r.checkInputs(name, inputs); err != nil {
			return invocation{}, err
		}
	}
	addTemplateVars(v, tmpl, inputs)
	if err := r.applyDisplayName(existing, tmpl, v); err != nil {
		return invocation{}, err
	}
	return invocation{name: name, h: h, tc: inner, scope: tc.scope, tmpl: tmpl, inputs: inputs, v: v}, nil
}

// checkInputs refuses a bound input parameter longer than
// Limits.MaxParameterBytes.
func (f *facts) checkInputs(node string, in *v1alpha1.Inputs) error {
	for _, p := range in.Parameters {
		if p.Value != nil && len(*p.Value) > f.lim.MaxParameterBytes {
			return &limitError{node: node, what: fmt.Sprintf("input parameter %q has %d bytes", p.Name, len(*p.Value)),
				key: "maxParameterBytes", limit: f.lim.MaxParameterBytes}
		}
	}
	return nil
}

// revisitExisting is the fast path for a leaf node that is still running:
// nothing is substituted again; only a Pending node's timeout is checked.
func (r *pass) revisitExisting(n v1alpha1.NodeStatus, h callSite, tc tmplCtx) outcome {
	r.sawWaiting()
	r.sawPod(n)
	if n.Phase != v1alpha1.NodePending {
		return outcome{node: n}
	}
	tmpl, _, err := r.resolve(h, tc)
	if err != nil || (tmpl.Timeout == "" && tmpl.PendingTimeout == "") {
		return outcome{node: n}
	}
	v := r.newVars(nil)
	in := n.Inputs
	if in == nil {
		in = &v1alpha1.Inputs{}
	}
	addTemplateVars(v, tmpl, in)
	return r.revisitLeaf(n, invocation{name: n.Name, tmpl: tmpl, v: v})
}

// invocation is one call of a template: the node name, who called it, the
// resolved template with its bound inputs, and its variables.
type invocation struct {
	name   string
	h      callSite
	tc     tmplCtx // where the template's own steps resolve templates
	scope  string  // templateScope of the caller, recorded on the node
	tmpl   *v1alpha1.Template
	inputs *v1alpha1.Inputs
	v      *vars
}

// dispatch runs an invocation by template type. A user error marks the node
// Error (creating it as a placeholder if needed) and is returned.
func (r *pass) dispatch(in invocation, opts execOpts) (outcome, error) {
	var (
		o   outcome
		err error
	)
	switch in.tmpl.Type() {
	case v1alpha1.TemplateTypeSteps:
		o, err = r.executeSteps(in, opts)
	case v1alpha1.TemplateTypeDAG:
		o, err = r.executeDAG(in, opts)
	case v1alpha1.TemplateTypeSuspend:
		o, err = r.executeSuspend(in, opts)
	default:
		o, err = r.executeLeaf(in, opts)
	}
	if err != nil {
		var existing *v1alpha1.NodeStatus
		if n, ok := r.byName(in.name); ok {
			existing = &n
		}
		o = outcome{node: r.errorNode(existing, in.name, in.h, tmplCtx{scope: in.scope}, opts, err)}
	}
	return o, err
}

// errorNode marks an existing node Error, or creates an Error placeholder
// (ctl/operator.go initializeNodeOrMarkError, rule 1.10).
func (r *pass) errorNode(existing *v1alpha1.NodeStatus, name string, h callSite, tc tmplCtx, opts execOpts, err error) v1alpha1.NodeStatus {
	if existing != nil {
		return r.markError(existing.ID, err)
	}
	flag := opts.flag
	if flag == nil {
		flag = &v1alpha1.NodeFlag{}
	}
	n, _ := r.newNode(nodeInit{name: name, typ: v1alpha1.NodeTypeSkipped, h: h, scope: tc.scope,
		boundaryID: opts.boundaryID, phase: v1alpha1.NodeError, flag: flag, message: err.Error()})
	return n
}

// nodeInputs returns the node's bound inputs: those recorded on the node when
// it exists, else the template's inputs bound from args (rule 6.5).
func nodeInputs(existing *v1alpha1.NodeStatus, t *v1alpha1.Template, args *v1alpha1.Arguments, v *vars) (*v1alpha1.Inputs, error) {
	if existing != nil {
		if existing.Inputs != nil {
			return existing.Inputs, nil
		}
		return &v1alpha1.Inputs{}, nil
	}
	return processInputs(t, args, v)
}

// addTemplateVars adds the variables a template body sees (rule 6.1):
// inputs.parameters.*, inputs.parameters (JSON), inputs.artifacts.* and the
// paths of inputs and outputs.
func addTemplateVars(v *vars, t *v1alpha1.Template, in *v1alpha1.Inputs) {
	for _, p := range in.Parameters {
		if p.Value != nil {
			v.set("inputs.parameters."+p.Name, p.Value.String())
		}
	}
	if data, err := json.Marshal(in.Parameters); err == nil {
		v.set("inputs.parameters", string(data))
	}
	for _, a := range in.Artifacts {
		v.set("inputs.artifacts."+a.Name, a)
		if a.Path != "" {
			v.set("inputs.artifacts."+a.Name+".path", a.Path)
		}
	}
	for _, a := range t.Outputs.Artifacts {
		if a.Path != "" {
			v.set("outputs.artifacts."+a.Name+".path", a.Path)
		}
	}
	for _, p := range t.Outputs.Parameters {
		if p.ValueFrom != nil && p.ValueFrom.Path != "" {
			v.set("outputs.parameters."+p.Name+".path", p.ValueFrom.Path)
		}
	}
}

const displayNameAnnotation = "workflows.argoproj.io/display-name"

var displayNameRegex = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9-.]{0,61}[a-zA-Z0-9]$`)

// applyDisplayName applies the display-name annotation to an existing node
// (rule 1.5).
func (r *pass) applyDisplayName(existing *v1alpha1.NodeStatus, t *v1alpha1.Template, v *vars) error {
	raw, ok := t.Annotations[displayNameAnnotation]
	if existing == nil || !ok || raw == "" {
		return nil
	}
	name, err := v.replace(raw, expr.Lenient)
	if err != nil {
		return err
	}
	if !displayNameRegex.MatchString(name) {
		return fmt.Errorf("displayName must match the regex %s", displayNameRegex.String())
	}
	if existing.DisplayName != name {
		existing.DisplayName = name
		r.put(*existing)
	}
	return nil
}

// isLeafTemplate reports whether a template runs as one process (a Pod-like
// node with a Launch): everything but steps, dag and suspend.
func isLeafTemplate(t *v1alpha1.Template) bool {
	switch t.Type() {
	case v1alpha1.TemplateTypeSteps, v1alpha1.TemplateTypeDAG, v1alpha1.TemplateTypeSuspend, v1alpha1.TemplateTypeUnknown:
		return false
	}
	return true
}
