package spec

import (
	"encoding/json"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// JoinWorkflowSpec is the spec a workflow that references a
// (Cluster)WorkflowTemplate runs: its own spec over the template's, over
// the controller's workflow defaults (tmpl and defaults may be nil). It is
// a strategic merge, as Argo's: a field the upper spec sets wins, maps
// (nodeSelector, podMetadata, ...) and hooks merge key by key, and templates,
// arguments, volumes and imagePullSecrets merge element by element by name
// (hostAliases by ip). suspend is always the workflow's own, so that a
// template which suspends does not suspend every workflow made from it.
func JoinWorkflowSpec(wf, tmpl, defaults *v1alpha1.WorkflowSpec) (*v1alpha1.WorkflowSpec, error) {
	joined, err := json.Marshal(withoutHooks(wf))
	if err != nil {
		return nil, err
	}
	hooks := maps.Clone(wf.Hooks)
	for _, under := range []*v1alpha1.WorkflowSpec{tmpl, defaults} {
		if under == nil {
			continue
		}
		for event, h := range under.Hooks {
			if _, ok := hooks[event]; !ok {
				if hooks == nil {
					hooks = v1alpha1.LifecycleHooks{}
				}
				hooks[event] = h
			}
		}
		base, err := json.Marshal(withoutHooks(under))
		if err != nil {
			return nil, err
		}
		if joined, err = strategicpatch.StrategicMergePatch(base, joined, v1alpha1.WorkflowSpec{}); err != nil {
			return nil, fmt.Errorf("merge the specs: %w", err)
		}
	}
	out := &v1alpha1.WorkflowSpec{}
	if err := json.Unmarshal(joined, out); err != nil {
		return nil, fmt.Errorf("merge the specs: %w", err)
	}
	out.Hooks = hooks
	out.Suspend = nil
	if wf.Suspend != nil {
		s := *wf.Suspend
		out.Suspend = &s
	}
	return out, nil
}

// withoutHooks is s without its hooks, which JoinWorkflowSpec merges event
// by event itself: the strategic merge cannot look into a map of structs.
func withoutHooks(s *v1alpha1.WorkflowSpec) *v1alpha1.WorkflowSpec {
	c := *s
	c.Hooks = nil
	return &c
}
