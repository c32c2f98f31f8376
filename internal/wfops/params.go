package wfops

import (
	"sort"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// overrideParameters sets the value of each "NAME=VALUE" in the workflow's
// spec.arguments.parameters (and in the stored spec of a
// workflowTemplateRef). A NAME declared only by the referenced template is
// added to spec.arguments, which overrides the template's. A malformed entry
// or a NAME declared nowhere is an ErrBadRequest.
func overrideParameters(wf *v1alpha1.Workflow, params []string) error {
	stored := wf.Status.StoredWorkflowSpec
	for _, kv := range params {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return badRequest("expected parameter of the form: NAME=VALUE. Received: %s", kv)
		}
		found := setParam(&wf.Spec.Arguments, name, value)
		if stored != nil && setParam(&stored.Arguments, name, value) && !found {
			wf.Spec.Arguments.Parameters = append(wf.Spec.Arguments.Parameters,
				v1alpha1.Parameter{Name: name, Value: v1alpha1.AnyStringPtr(value)})
			found = true
		}
		if !found {
			return badRequest("parameter %q is not declared in spec.arguments.parameters (declared: %s)",
				name, declaredParams(wf))
		}
	}
	return nil
}

// setParam sets the named parameter's value and reports whether it exists.
func setParam(args *v1alpha1.Arguments, name, value string) bool {
	for i := range args.Parameters {
		if args.Parameters[i].Name == name {
			args.Parameters[i].Value = v1alpha1.AnyStringPtr(value)
			return true
		}
	}
	return false
}

func declaredParams(wf *v1alpha1.Workflow) string {
	seen := map[string]bool{}
	add := func(args v1alpha1.Arguments) {
		for _, p := range args.Parameters {
			seen[p.Name] = true
		}
	}
	add(wf.Spec.Arguments)
	if wf.Status.StoredWorkflowSpec != nil {
		add(wf.Status.StoredWorkflowSpec.Arguments)
	}
	if len(seen) == 0 {
		return "none"
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
