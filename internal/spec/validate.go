package spec

import (
	"strconv"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// ValidateAll validates each object in objects. all is every document that
// was loaded with them: WorkflowTemplates and ClusterWorkflowTemplates among
// them resolve templateRef and workflowTemplateRef.
func ValidateAll(objects, all []*Document) Issues {
	cat := newCatalog(all)
	var issues Issues
	for _, d := range objects {
		issues = append(issues, Validate(d, cat)...)
	}
	return issues
}

// Validate checks one document against the rules of argo lint. cat resolves
// references to templates; a nil catalog resolves nothing.
func Validate(d *Document, cat *Catalog) Issues {
	if cat == nil {
		cat = newCatalog(nil)
	}
	r := &reporter{doc: d}
	switch o := d.Object.(type) {
	case *v1alpha1.Workflow:
		r.validateObjectMeta(&o.ObjectMeta)
		newSpecValidator(r, cat, o.ObjectMeta, &o.Spec, "spec", kindWorkflow).run()
	case *v1alpha1.WorkflowTemplate:
		r.validateObjectMeta(&o.ObjectMeta)
		newSpecValidator(r, cat, o.ObjectMeta, &o.Spec, "spec", kindTemplate).run()
	case *v1alpha1.ClusterWorkflowTemplate:
		r.validateObjectMeta(&o.ObjectMeta)
		newSpecValidator(r, cat, o.ObjectMeta, &o.Spec, "spec", kindTemplate).run()
	case *v1alpha1.CronWorkflow:
		r.validateObjectMeta(&o.ObjectMeta)
		validateCron(r, cat, o)
	case *v1alpha1.WorkflowEventBinding:
		r.validateObjectMeta(&o.ObjectMeta)
		validateEventBinding(r, cat, o)
	case nil:
	default:
		r.add("", "cannot validate a %T", o)
	}
	return r.issues
}

// reporter collects the issues of one document.
type reporter struct {
	doc    *Document
	issues Issues
}

func (r *reporter) add(path, format string, args ...any) {
	r.issues = append(r.issues, r.doc.issue(path, format, args...))
}

func (r *reporter) warn(path, format string, args ...any) {
	is := r.doc.issue(path, format, args...)
	is.Warning = true
	r.issues = append(r.issues, is)
}

func idx(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
