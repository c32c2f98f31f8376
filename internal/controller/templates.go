package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Getter reads one object from a store.
type Getter interface {
	Get(ctx context.Context, kind store.Kind, namespace, name string) (store.Object, error)
}

// StoreTemplates resolves templateRefs from the WorkflowTemplates of the
// workflow's namespace and the ClusterWorkflowTemplates in a store, read
// when the engine asks (it keeps what it resolved for the workflow's run).
func StoreTemplates(st Getter) Templates {
	return func(namespace string) engine.TemplateResolver {
		return storeResolver{st: st, namespace: namespace}
	}
}

type storeResolver struct {
	st        Getter
	namespace string
}

func (r storeResolver) Template(ref v1alpha1.TemplateRef) (*v1alpha1.Template, error) {
	ts, kind, err := r.WorkflowSpec(v1alpha1.WorkflowTemplateRef{Name: ref.Name, ClusterScope: ref.ClusterScope})
	if err != nil {
		return nil, err
	}
	for i := range ts.Templates {
		if ts.Templates[i].Name == ref.Template {
			return &ts.Templates[i], nil
		}
	}
	return nil, fmt.Errorf("template %q not found in %s %q", ref.Template, kind, ref.Name)
}

// WorkflowSpec reads the spec of the (Cluster)WorkflowTemplate ref names;
// kind says which of the two it is.
func (r storeResolver) WorkflowSpec(ref v1alpha1.WorkflowTemplateRef) (*v1alpha1.WorkflowSpec, string, error) {
	k, ns := store.KindWorkflowTemplate, r.namespace
	if ref.ClusterScope {
		k, ns = store.KindClusterWorkflowTemplate, ""
	}
	obj, err := r.st.Get(context.Background(), k, ns, ref.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, string(k), fmt.Errorf("%s %q not found", k, ref.Name)
	}
	if err != nil {
		return nil, string(k), fmt.Errorf("%s %q: %w", k, ref.Name, err)
	}
	switch o := obj.(type) {
	case *v1alpha1.WorkflowTemplate:
		return &o.Spec, string(k), nil
	case *v1alpha1.ClusterWorkflowTemplate:
		return &o.Spec, string(k), nil
	}
	return nil, string(k), fmt.Errorf("%s %q: the store returned a %T", k, ref.Name, obj)
}

// specSource is a template resolver that also gives whole templates, for
// workflowTemplateRef (storeResolver is one).
type specSource interface {
	WorkflowSpec(ref v1alpha1.WorkflowTemplateRef) (*v1alpha1.WorkflowSpec, string, error)
}

// storeTemplateSpec gives a workflow that names a (Cluster)WorkflowTemplate
// and has no status.storedWorkflowTemplateSpec yet (one created straight in
// the store, as kubectl creates it) the spec it runs, as Argo's controller
// does on its first pass. A template that cannot be read ends the workflow
// Error with the reason. It reports whether the workflow can go on.
func (d *driver) storeTemplateSpec(ctx context.Context) (bool, error) {
	wf := d.wf
	ref := wf.Spec.WorkflowTemplateRef
	if ref == nil || wf.Status.StoredWorkflowSpec != nil || wf.Status.Phase.Completed() {
		return true, nil
	}
	src, ok := d.req.Templates.(specSource)
	if !ok {
		return false, d.failStart(ctx, fmt.Sprintf("workflowTemplateRef %q: no WorkflowTemplates are known here", ref.Name))
	}
	ts, kind, err := src.WorkflowSpec(*ref)
	if err == nil {
		err = spec.StoreWorkflowTemplateSpec(wf, ts, kind)
	}
	if err != nil {
		return false, d.failStart(ctx, err.Error())
	}
	d.specChanged = true // the labels
	return true, nil
}
