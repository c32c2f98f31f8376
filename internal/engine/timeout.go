package engine

import (
	"fmt"
	"time"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// executeSuspend runs a suspend template (rule 8.5): the node is Running
// until its duration has passed (then Succeeded, supplied outputs taking
// their defaults) or until someone resumes it by setting it Succeeded, which
// the fulfilled check of executeTemplate then sees.
func (r *pass) executeSuspend(in invocation, opts execOpts) (outcome, error) {
	node, ok := r.byName(in.name)
	if !ok {
		n, ok := r.newNode(nodeInit{name: in.name, typ: v1alpha1.NodeTypeSuspend, h: in.h, scope: in.scope,
			boundaryID: opts.boundaryID, phase: v1alpha1.NodeRunning, flag: opts.flag, inputs: in.inputs})
		if !ok {
			return outcome{hold: holdNodeLimit}, nil
		}
		if out := suppliedOutputs(in.tmpl); out != nil {
			n.Outputs = out
			r.put(n)
		}
		node = n
	}
	if in.tmpl.Suspend.Duration == "" {
		return outcome{node: node}, nil
	}
	text, err := in.v.replace(in.tmpl.Suspend.Duration, expr.Lenient)
	if err != nil {
		return outcome{node: node}, err
	}
	d, err := parseStringDuration(text)
	if err != nil {
		return outcome{node: node}, fmt.Errorf("invalid suspend duration %q: %w", text, err)
	}
	until := node.StartedAt.Add(d)
	if r.now.Before(until) {
		r.wake(until)
		return outcome{node: node}, nil
	}
	if node.Outputs != nil {
		out := node.Outputs.DeepCopy()
		if err := outputsWithDefaults(out); err != nil {
			return outcome{node: node}, err
		}
		node.Outputs = out
		r.put(node)
	}
	return outcome{node: r.setPhase(node.ID, v1alpha1.NodeSucceeded)}, nil
}

// suppliedOutputs are the output parameters a suspend node waits to be
// given (valueFrom.supplied), recorded on the node at creation.
func suppliedOutputs(t *v1alpha1.Template) *v1alpha1.Outputs {
	var out *v1alpha1.Outputs
	for _, p := range t.Outputs.Parameters {
		if p.ValueFrom != nil && p.ValueFrom.Supplied != nil {
			if out == nil {
				out = &v1alpha1.Outputs{Parameters: []v1alpha1.Parameter{}}
			}
			out.Parameters = append(out.Parameters, *p.DeepCopy())
		}
	}
	return out
}

// outputsWithDefaults gives each supplied output that was not set its
// valueFrom.default (workflow/util OverrideOutputParametersWithDefault).
func outputsWithDefaults(out *v1alpha1.Outputs) error {
	for i, p := range out.Parameters {
		if p.ValueFrom == nil || p.ValueFrom.Supplied == nil {
			continue
		}
		if p.ValueFrom.Default == nil {
			return fmt.Errorf("raw output parameter '%s' has not been set and does not have a default value", p.Name)
		}
		out.Parameters[i].Value = p.ValueFrom.Default
		out.Parameters[i].ValueFrom = nil
	}
	return nil
}

// revisitLeaf checks the template timeout of a node still Pending (rule
// 8.3): past it, the node fails "timeout" and the caller's group fails
// (outcome.timeout).
func (r *pass) revisitLeaf(n v1alpha1.NodeStatus, in invocation) outcome {
	r.sawWaiting()
	r.sawPod(n)
	if n.Phase != v1alpha1.NodePending {
		return outcome{node: n}
	}
	for _, raw := range []string{in.tmpl.Timeout, in.tmpl.PendingTimeout} {
		if raw == "" {
			continue
		}
		text, err := in.v.replace(raw, expr.Lenient)
		if err != nil {
			continue
		}
		d, err := time.ParseDuration(text)
		if err != nil {
			continue
		}
		deadline := n.StartedAt.Add(d)
		if r.now.After(deadline) {
			return outcome{node: r.killNode(n, v1alpha1.NodeFailed, timeoutMessage), timeout: true}
		}
		r.wake(deadline)
	}
	return outcome{node: n}
}

// leafDeadline computes the absolute deadline of a new leaf: the workflow
// deadline (not for exit handlers), the template timeout from the node's
// start, and a retry maxDuration. One second or less left is an error
// (rule 8.3, ctl/workflowpod.go).
func (r *pass) leafDeadline(n v1alpha1.NodeStatus, t *v1alpha1.Template, opts execOpts) (time.Time, error) {
	var deadline time.Time
	consider := func(at time.Time) error {
		if at.IsZero() {
			return nil
		}
		if at.Sub(r.now) <= time.Second {
			return fmt.Errorf("%s exceeded its deadline", n.Name)
		}
		if deadline.IsZero() || at.Before(deadline) {
			deadline = at
		}
		return nil
	}
	if !opts.onExit {
		if err := consider(r.deadline); err != nil {
			return deadline, err
		}
	}
	if t.Timeout != "" {
		d, err := time.ParseDuration(t.Timeout)
		if err != nil {
			return deadline, fmt.Errorf("invalid timeout format. %v", err)
		}
		if err := consider(n.StartedAt.Add(d)); err != nil {
			return deadline, err
		}
		r.wake(n.StartedAt.Add(d))
	}
	if t.PendingTimeout != "" {
		if d, err := time.ParseDuration(t.PendingTimeout); err == nil {
			r.wake(n.StartedAt.Add(d))
		}
	}
	return deadline, consider(opts.execDeadline)
}
