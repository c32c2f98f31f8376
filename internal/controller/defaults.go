package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/braidwf/braid/internal/spec"
)

// applyWorkflowDefaults merges the controller's workflowDefaults under a
// workflow that is starting, as Argo's controller does: under the spec it
// runs (its own, or the stored spec of one that names a template), where
// the workflow's own fields win, and its labels and annotations where the
// workflow has none of that key. A merge that fails ends the workflow
// Error. It reports whether the workflow can go on.
func (d *driver) applyWorkflowDefaults(ctx context.Context) (bool, error) {
	def, wf := d.c.defaults, d.wf
	if def == nil || !starting(wf) {
		return true, nil
	}
	target := wf.ExecSpec()
	joined, err := spec.JoinWorkflowSpec(target, nil, &def.Spec)
	if err != nil {
		return false, d.failStart(ctx, fmt.Sprintf("workflowDefaults: %v", err))
	}
	changed := !equality.Semantic.DeepEqual(target, joined)
	*target = *joined
	changed = addMissing(&wf.Labels, def.Labels) || changed
	changed = addMissing(&wf.Annotations, def.Annotations) || changed
	d.specChanged = d.specChanged || changed
	return true, nil
}

// addMissing adds the keys of from that m lacks, and reports whether it
// added any.
func addMissing(m *map[string]string, from map[string]string) bool {
	added := false
	for k, v := range from {
		if _, ok := (*m)[k]; ok {
			continue
		}
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[k] = v
		added = true
	}
	return added
}
