package spec

import (
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// validateEventBinding checks a WorkflowEventBinding: the selector compiles,
// and the submitted template exists when it is among the loaded documents.
func validateEventBinding(r *reporter, cat *Catalog, b *v1alpha1.WorkflowEventBinding) {
	sel := b.Spec.Event.Selector
	if strings.TrimSpace(sel) == "" {
		r.add("spec.event.selector", "a WorkflowEventBinding needs an event selector")
	} else {
		checkExprSyntax(r, "spec.event.selector", sel)
	}
	sub := b.Spec.Submit
	if sub == nil {
		return
	}
	ref := sub.WorkflowTemplateRef
	if ref.Name == "" {
		r.add("spec.submit.workflowTemplateRef.name", "submit needs a workflowTemplateRef name")
	} else if ts, kind := cat.Spec(ref.Name, ref.ClusterScope); ts == nil {
		r.add("spec.submit.workflowTemplateRef.name", "%s %q not found", kind, ref.Name)
	}
	if sub.Arguments == nil {
		return
	}
	for i, p := range sub.Arguments.Parameters {
		pp := idx("spec.submit.arguments.parameters", i)
		if p.ValueFrom != nil && p.ValueFrom.Event != "" {
			checkExprSyntax(r, pp+".valueFrom.event", p.ValueFrom.Event)
		}
		if p.Value == nil && p.ValueFrom == nil {
			r.add(pp, "parameter %q needs a value or valueFrom.event", p.Name)
		}
	}
}
