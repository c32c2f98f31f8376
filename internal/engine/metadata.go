package engine

import (
	"fmt"
	"maps"
	"slices"

	"github.com/braidwf/braid/internal/expr"
)

// applyWorkflowMetadata puts the labels and annotations of the spec's
// workflowMetadata on the Workflow itself when it starts, as Argo does, so
// that workflows can be listed by them. Each labelsFrom expression is
// evaluated over the global variables (workflow.parameters.*, ...) and
// must give a string; one that does not ends the workflow Error.
func (r *run) applyWorkflowMetadata() error {
	md := r.spec.WorkflowMetadata
	if md == nil {
		return nil
	}
	wf := r.wf
	for _, k := range slices.Sorted(maps.Keys(md.Labels)) {
		setMeta(&wf.Labels, k, md.Labels[k])
	}
	for _, k := range slices.Sorted(maps.Keys(md.Annotations)) {
		setMeta(&wf.Annotations, k, md.Annotations[k])
	}
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
		setMeta(&wf.Labels, k, s)
	}
	r.globals = nil
	return nil
}

func setMeta(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
}
