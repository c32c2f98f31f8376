package spec

import "github.com/braidwf/braid/pkg/apis/v1alpha1"

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
