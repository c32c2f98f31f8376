package engine

import (
	"fmt"
	"maps"
	"slices"

	"github.com/braidwf/braid/internal/expr"
)

// applyWorkflowMetadata decides the labels and annotations of the spec's
// workflowMetadata for the Workflow itself when it starts, as Argo does, so
// that workflows can be listed by them (Result.Metadata; the snapshot's
// object is not changed). Each labelsFrom expression is
// evaluated over the global variables (workflow.parameters.*, ...) and
// must give a string; one that does not ends the workflow Error.
func (r *pass) applyWorkflowMetadata() error {
	md := r.spec.WorkflowMetadata
	if md == nil {
		return nil
	}
	m := &Metadata{Labels: maps.Clone(r.wf.Labels), Annotations: maps.Clone(r.wf.Annotations)}
	for _, k := range slices.Sorted(maps.Keys(md.Labels)) {
		setMeta(&m.Labels, k, md.Labels[k])
	}
	for _, k := range slices.Sorted(maps.Keys(md.Annotations)) {
		setMeta(&m.Annotations, k, md.Annotations[k])
	}
	r.setMetadata(m) // the labelsFrom expressions see it (globalMap)
	r.globals = nil
	for _, k := range slices.Sorted(maps.Keys(md.LabelsFrom)) {
		text := md.LabelsFrom[k].Expression
		v, err := r.lim.Expression.Eval(text, expr.Expand(r.globalMap()))
		if err != nil {
			return fmt.Errorf("failed to evaluate label %q expression %q: %w", k, text, err)
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("failed to evaluate label %q expression %q: it gave %T, but a label must be a string", k, text, v)
		}
		setMeta(&m.Labels, k, s)
	}
	r.globals = nil
	if maps.Equal(m.Labels, r.wf.Labels) && maps.Equal(m.Annotations, r.wf.Annotations) {
		r.setMetadata(nil)
	}
	return nil
}

func setMeta(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
}
