package wfops

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// SetOptions are the options of argo node set.
type SetOptions struct {
	// NodeFieldSelector selects the nodes to set; required.
	NodeFieldSelector string
	// Phase is the new phase: Succeeded, Failed, Error, or empty to keep it.
	Phase string
	// Message is the new message; empty keeps it.
	Message string
	// OutputParameters supplies output parameters (valueFrom.supplied) by name.
	OutputParameters map[string]string
}

// Set returns a copy of the workflow with the Running Suspend nodes the
// selector matches changed as argo node set does: each named output
// parameter gets its value (it must be declared, with valueFrom.supplied,
// by the node's template or on the node), then the message, then the phase
// with finishedAt now. When the phase is Succeeded, supplied outputs still
// unset take their valueFrom.default if they have one.
//
// A missing or bad selector, a selector that matches no Running Suspend
// node, a phase other than Succeeded, Failed or Error, nothing to set, or an
// output parameter the node does not expect is an ErrBadRequest; a
// completed workflow or an output parameter already set is an ErrState.
func Set(wf *v1alpha1.Workflow, opts SetOptions, now time.Time) (*v1alpha1.Workflow, error) {
	if err := checkSet(wf, opts); err != nil {
		return nil, err
	}
	out := wf.DeepCopy()
	targets, err := suspendTargets(out, opts.NodeFieldSelector)
	if err != nil {
		return nil, err
	}
	for _, id := range targets {
		n, err := setNode(out, out.Status.Nodes[id], opts, now)
		if err != nil {
			return nil, err
		}
		out.Status.Nodes[id] = n
	}
	return out, nil
}

func checkSet(wf *v1alpha1.Workflow, opts SetOptions) error {
	if wf == nil {
		return badRequest("no workflow to set")
	}
	if opts.NodeFieldSelector == "" {
		return badRequest("a node field selector is required to set nodes")
	}
	switch v1alpha1.NodePhase(opts.Phase) {
	case "", v1alpha1.NodeSucceeded, v1alpha1.NodeFailed, v1alpha1.NodeError:
	default:
		return badRequest("cannot set a node's phase to %q: the phase must be Succeeded, Failed or Error", opts.Phase)
	}
	if opts.Phase == "" && opts.Message == "" && len(opts.OutputParameters) == 0 {
		return badRequest("nothing to set: give a phase, a message or output parameters")
	}
	if completed(wf) {
		return badState("cannot set nodes of a completed workflow")
	}
	return nil
}

// setNode applies the options to one node.
func setNode(wf *v1alpha1.Workflow, n v1alpha1.NodeStatus, opts SetOptions, now time.Time) (v1alpha1.NodeStatus, error) {
	keys := make([]string, 0, len(opts.OutputParameters))
	for k := range opts.OutputParameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		if err := supplyOutput(wf, &n, name, opts.OutputParameters[name]); err != nil {
			return n, err
		}
	}
	if opts.Message != "" {
		n.Message = opts.Message
	}
	if opts.Phase != "" {
		n.Phase = v1alpha1.NodePhase(opts.Phase)
		n.FinishedAt = metav1.NewTime(now)
		if n.Phase == v1alpha1.NodeSucceeded {
			applySuppliedDefaults(n.Outputs)
		}
	}
	return n, nil
}

// supplyOutput sets the value of the node's supplied output parameter name.
func supplyOutput(wf *v1alpha1.Workflow, n *v1alpha1.NodeStatus, name, value string) error {
	if n.Outputs == nil {
		n.Outputs = &v1alpha1.Outputs{}
	}
	for i, p := range n.Outputs.Parameters {
		if p.Name != name {
			continue
		}
		if p.ValueFrom == nil || p.ValueFrom.Supplied == nil {
			return badState("cannot set output parameter '%s' of node %s: it does not use valueFrom.supplied or it was already set", name, n.Name)
		}
		n.Outputs.Parameters[i].Value = v1alpha1.AnyStringPtr(value)
		n.Outputs.Parameters[i].ValueFrom = nil
		return nil
	}
	decl, ok := declaredOutput(wf, *n, name)
	if !ok {
		return badRequest("node %s is not expecting output parameter '%s'", n.Name, name)
	}
	n.Outputs.Parameters = append(n.Outputs.Parameters, v1alpha1.Parameter{
		Name: name, Value: v1alpha1.AnyStringPtr(value), GlobalName: decl.GlobalName})
	return nil
}

// declaredOutput finds a supplied output parameter in the node's template.
func declaredOutput(wf *v1alpha1.Workflow, n v1alpha1.NodeStatus, name string) (v1alpha1.Parameter, bool) {
	t := templateOf(wf, n)
	if t == nil {
		return v1alpha1.Parameter{}, false
	}
	for _, p := range t.Outputs.Parameters {
		if p.Name == name && p.ValueFrom != nil && p.ValueFrom.Supplied != nil {
			return p, true
		}
	}
	return v1alpha1.Parameter{}, false
}

// applySuppliedDefaults gives each supplied output still unset its default.
func applySuppliedDefaults(o *v1alpha1.Outputs) {
	if o == nil {
		return
	}
	for i, p := range o.Parameters {
		if p.ValueFrom != nil && p.ValueFrom.Supplied != nil && p.ValueFrom.Default != nil {
			o.Parameters[i].Value = p.ValueFrom.Default
			o.Parameters[i].ValueFrom = nil
		}
	}
}
