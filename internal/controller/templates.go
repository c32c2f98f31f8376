package controller

import (
	"context"
	"fmt"

	"github.com/braidwf/braid/internal/engine"
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
	kind, ns := store.KindWorkflowTemplate, r.namespace
	if ref.ClusterScope {
		kind, ns = store.KindClusterWorkflowTemplate, ""
	}
	obj, err := r.st.Get(context.Background(), kind, ns, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", kind, ref.Name, err)
	}
	var spec *v1alpha1.WorkflowSpec
	switch o := obj.(type) {
	case *v1alpha1.WorkflowTemplate:
		spec = &o.Spec
	case *v1alpha1.ClusterWorkflowTemplate:
		spec = &o.Spec
	default:
		return nil, fmt.Errorf("%s %q: the store returned a %T", kind, ref.Name, obj)
	}
	for i := range spec.Templates {
		if spec.Templates[i].Name == ref.Template {
			return &spec.Templates[i], nil
		}
	}
	return nil, fmt.Errorf("template %q not found in %s %q", ref.Template, kind, ref.Name)
}
