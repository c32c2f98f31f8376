package spec

import (
	"fmt"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Catalog resolves WorkflowTemplates and ClusterWorkflowTemplates by name
// for templateRef and workflowTemplateRef. Offline lint builds it from the
// documents given on the command line; the server will build it from its store.
type Catalog struct {
	namespaced map[string]*v1alpha1.WorkflowSpec
	cluster    map[string]*v1alpha1.WorkflowSpec
}

func newCatalog(docs []*Document) *Catalog {
	c := &Catalog{namespaced: map[string]*v1alpha1.WorkflowSpec{}, cluster: map[string]*v1alpha1.WorkflowSpec{}}
	for _, d := range docs {
		switch o := d.Object.(type) {
		case *v1alpha1.WorkflowTemplate:
			c.namespaced[o.Name] = &o.Spec
		case *v1alpha1.ClusterWorkflowTemplate:
			c.cluster[o.Name] = &o.Spec
		}
	}
	return c
}

// NewCatalog returns a catalog of the WorkflowTemplates and
// ClusterWorkflowTemplates among docs.
func NewCatalog(docs []*Document) *Catalog { return newCatalog(docs) }

// Spec returns the spec of the named template object, and its kind for messages.
func (c *Catalog) Spec(name string, clusterScope bool) (*v1alpha1.WorkflowSpec, string) {
	if clusterScope {
		return c.cluster[name], "ClusterWorkflowTemplate"
	}
	return c.namespaced[name], "WorkflowTemplate"
}

// lookup finds the template a templateRef names. ts is nil when the
// template object is unknown, t when it has no such template.
func (c *Catalog) lookup(ref v1alpha1.TemplateRef) (ts *v1alpha1.WorkflowSpec, t *v1alpha1.Template, kind string) {
	ts, kind = c.Spec(ref.Name, ref.ClusterScope)
	if ts == nil {
		return nil, nil, kind
	}
	for i := range ts.Templates {
		if ts.Templates[i].Name == ref.Template {
			return ts, &ts.Templates[i], kind
		}
	}
	return ts, nil, kind
}

// Template resolves a templateRef, as engine.TemplateResolver asks.
func (c *Catalog) Template(ref v1alpha1.TemplateRef) (*v1alpha1.Template, error) {
	ts, t, kind := c.lookup(ref)
	switch {
	case ts == nil:
		return nil, fmt.Errorf("%s %q not found", kind, ref.Name)
	case t == nil:
		return nil, fmt.Errorf("template %q not found in %s %q", ref.Template, kind, ref.Name)
	}
	return t, nil
}
