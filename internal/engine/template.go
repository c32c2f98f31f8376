package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// siteKind says what called a template: the entrypoint, a step, a DAG
// task or a hook (exit handlers included).
type siteKind uint8

const (
	siteEntry siteKind = iota
	siteStep
	siteTask
	siteHook
)

// callSite is what names a template to run (Argo's TemplateReferenceHolder):
// a template name, a templateRef or an inline template.
type callSite struct {
	kind     siteKind
	name     string // the step's or task's (expanded) name
	template string
	ref      *v1alpha1.TemplateRef
	inline   *v1alpha1.Template
}

func stepSite(s *v1alpha1.WorkflowStep) callSite {
	return callSite{kind: siteStep, name: s.Name, template: s.Template, ref: s.TemplateRef, inline: s.Inline}
}

func taskSite(t *v1alpha1.DAGTask) callSite {
	return callSite{kind: siteTask, name: t.Name, template: t.Template, ref: t.TemplateRef, inline: t.Inline}
}

func hookSite(h *v1alpha1.LifecycleHook) callSite {
	return callSite{kind: siteHook, template: h.Template, ref: h.TemplateRef}
}

// tmplCtx is where template names resolve: the workflow itself, or the
// WorkflowTemplate / ClusterWorkflowTemplate a templateRef led into.
type tmplCtx struct {
	scope string                // templateScope recorded on nodes: local/<wf>, namespaced/<n>, cluster/<n>
	owner *v1alpha1.TemplateRef // Name and ClusterScope of the owning template object; nil for local
}

func (f *facts) rootContext() tmplCtx { return tmplCtx{scope: "local/" + f.wf.Name} }

// resolve returns the template a call site names, with templateDefaults merged
// in, and the context its own steps resolve in. The returned template is
// shared: callers must not modify it.
func (f *facts) resolve(h callSite, tc tmplCtx) (*v1alpha1.Template, tmplCtx, error) {
	var (
		t   *v1alpha1.Template
		err error
		out = tc
	)
	switch {
	case h.inline != nil:
		t = h.inline
	case h.ref != nil:
		t, err = f.refTemplate(*h.ref)
		out = refContext(h.ref.Name, h.ref.ClusterScope)
	case h.template != "":
		t, err = f.named(h.template, tc)
	default:
		err = errors.New("template name cannot be empty")
	}
	if err != nil {
		return nil, tc, err
	}
	t, err = f.withDefaults(t)
	return t, out, err
}

func refContext(name string, cluster bool) tmplCtx {
	scope := "namespaced/" + name
	if cluster {
		scope = "cluster/" + name
	}
	return tmplCtx{scope: scope, owner: &v1alpha1.TemplateRef{Name: name, ClusterScope: cluster}}
}

// named resolves a template name within a context.
func (f *facts) named(name string, tc tmplCtx) (*v1alpha1.Template, error) {
	if tc.owner != nil {
		return f.refTemplate(v1alpha1.TemplateRef{Name: tc.owner.Name, Template: name, ClusterScope: tc.owner.ClusterScope})
	}
	if f.local == nil {
		f.local = make(map[string]*v1alpha1.Template, len(f.spec.Templates))
		for i := range f.spec.Templates {
			t := &f.spec.Templates[i]
			if _, dup := f.local[t.Name]; !dup {
				f.local[t.Name] = t
			}
		}
	}
	if t, ok := f.local[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("template %s not found", name)
}

// refTemplate resolves a templateRef through the snapshot's resolver, once
// per pass.
func (f *facts) refTemplate(ref v1alpha1.TemplateRef) (*v1alpha1.Template, error) {
	if t, ok := f.refTmpls[ref]; ok {
		return t, nil
	}
	if err, ok := f.refErrs[ref]; ok {
		return nil, err
	}
	var (
		t   *v1alpha1.Template
		err error
	)
	switch {
	case f.resolver == nil:
		err = fmt.Errorf("templateRef %s/%s: no workflow templates are available", ref.Name, ref.Template)
	default:
		t, err = f.resolver.Template(ref)
		if err != nil {
			err = fmt.Errorf("templateRef %s/%s: %w", ref.Name, ref.Template, err)
		} else if t == nil {
			err = fmt.Errorf("templateRef %s/%s: template not found", ref.Name, ref.Template)
		}
	}
	if err != nil {
		if f.refErrs == nil {
			f.refErrs = map[v1alpha1.TemplateRef]error{}
		}
		f.refErrs[ref] = err
		return nil, err
	}
	if f.refTmpls == nil {
		f.refTmpls = map[v1alpha1.TemplateRef]*v1alpha1.Template{}
	}
	f.refTmpls[ref] = t
	return t, nil
}

// withDefaults merges spec.templateDefaults into t (the template's own
// fields win; objects merge, lists are replaced), keeping t's type.
func (f *facts) withDefaults(t *v1alpha1.Template) (*v1alpha1.Template, error) {
	d := f.spec.TemplateDefaults
	if d == nil {
		return t, nil
	}
	if m, ok := f.merged[t]; ok {
		return m, nil
	}
	merged, err := mergeTemplate(d, t)
	if err != nil {
		return nil, fmt.Errorf("cannot apply templateDefaults to template %s: %w", t.Name, err)
	}
	if f.merged == nil {
		f.merged = map[*v1alpha1.Template]*v1alpha1.Template{}
	}
	f.merged[t] = merged
	return merged, nil
}

func mergeTemplate(defaults, t *v1alpha1.Template) (*v1alpha1.Template, error) {
	var base, over map[string]any
	if err := roundTrip(defaults, &base); err != nil {
		return nil, err
	}
	if err := roundTrip(t, &over); err != nil {
		return nil, err
	}
	typ := t.Type()
	mergeMaps(base, over)
	data, err := json.Marshal(base)
	if err != nil {
		return nil, fmt.Errorf("encode merged template: %w", err)
	}
	var out v1alpha1.Template
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decode merged template: %w", err)
	}
	if typ != v1alpha1.TemplateTypeUnknown && out.Type() != typ {
		keepType(&out, t)
	}
	return &out, nil
}

func roundTrip(v any, out *map[string]any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode template: %w", err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode template: %w", err)
	}
	return nil
}

// mergeMaps merges src into dst: nested objects merge, anything else in src
// replaces dst's value.
func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		sm, sok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			mergeMaps(dm, sm)
			continue
		}
		dst[k] = v
	}
}

// keepType clears the type fields that templateDefaults added to a template
// of another type (a default container on a steps template, say).
func keepType(out, orig *v1alpha1.Template) {
	out.Container, out.Script, out.Resource, out.Suspend = orig.Container, orig.Script, orig.Resource, orig.Suspend
	out.HTTP, out.Plugin, out.ContainerSet = orig.HTTP, orig.Plugin, orig.ContainerSet
	out.Steps, out.DAG, out.Data = orig.Steps, orig.DAG, orig.Data
}

// retryStrategy is the template's own strategy or else the workflow's
// (rule 7.1).
func (f *facts) retryStrategy(t *v1alpha1.Template) *v1alpha1.RetryStrategy {
	if t.RetryStrategy != nil {
		return t.RetryStrategy
	}
	return f.spec.RetryStrategy
}

// nodeTemplate finds the template a node was created from, for the rare
// look-ups made outside the tree walk (daemons, global output names). It
// returns nil when it cannot tell (an inline template, say).
func (f *facts) nodeTemplate(n v1alpha1.NodeStatus) *v1alpha1.Template {
	var tc tmplCtx
	switch {
	case len(n.TemplateScope) > len("namespaced/") && n.TemplateScope[:len("namespaced/")] == "namespaced/":
		tc = refContext(n.TemplateScope[len("namespaced/"):], false)
	case len(n.TemplateScope) > len("cluster/") && n.TemplateScope[:len("cluster/")] == "cluster/":
		tc = refContext(n.TemplateScope[len("cluster/"):], true)
	default:
		tc = f.rootContext()
	}
	h := callSite{template: n.TemplateName, ref: n.TemplateRef}
	if h.template == "" && h.ref == nil {
		return nil
	}
	t, _, err := f.resolve(h, tc)
	if err != nil {
		return nil
	}
	return t
}
