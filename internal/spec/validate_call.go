package spec

import (
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// resolveCall finds the template a step, task or hook calls. It reports a
// missing or ambiguous reference and returns nil when there is no template
// to check against.
func (v *specValidator) resolveCall(path, name string, ref *v1alpha1.TemplateRef, inline *v1alpha1.Template) *v1alpha1.Template {
	n := 0
	for _, set := range []bool{name != "", ref != nil, inline != nil} {
		if set {
			n++
		}
	}
	switch n {
	case 0:
		v.r.add(path, "set one of template, templateRef or inline")
		return nil
	case 1:
	default:
		v.r.add(path, "set only one of template, templateRef or inline")
		return nil
	}
	switch {
	case inline != nil:
		return inline
	case ref != nil:
		return v.resolveRef(path+".templateRef", ref)
	}
	if strings.Contains(name, "{{") {
		return nil // chosen at run time
	}
	t, ok := v.byName[name]
	if !ok {
		v.r.add(path+".template", "%q not found", name)
		return nil
	}
	return t
}

func (v *specValidator) resolveRef(path string, ref *v1alpha1.TemplateRef) *v1alpha1.Template {
	if ref.Name == "" {
		v.r.add(path+".name", "a templateRef needs a name")
		return nil
	}
	if ref.Template == "" {
		v.r.add(path+".template", "a templateRef needs a template")
		return nil
	}
	if strings.Contains(ref.Name, "{{") || strings.Contains(ref.Template, "{{") {
		return nil
	}
	ts, t, kind := v.cat.lookup(*ref)
	if ts == nil {
		v.r.add(path+".name", "%s %q not found", kind, ref.Name)
		return nil
	}
	if t != nil {
		return t
	}
	v.r.add(path+".template", "template %q not found in %s %q", ref.Template, kind, ref.Name)
	return nil
}

// checkArgumentsOf checks the arguments passed to callee: their names and
// values, their variables against sc, and that every required input of the
// callee receives a value.
func (v *specValidator) checkArgumentsOf(path string, args v1alpha1.Arguments, callee *v1alpha1.Template, sc *scope) {
	v.checkParamNames(path+".parameters", args.Parameters)
	for i, p := range args.Parameters {
		pp := idx(path+".parameters", i)
		if p.Value == nil && p.ValueFrom == nil {
			v.r.add(pp+".value", "argument %q needs a value", p.Name)
		}
		checkEnum(v.r, pp, p)
		if callee != nil && p.Value != nil && !strings.Contains(string(*p.Value), "{{") {
			if in := findParameter(callee.Inputs.Parameters, p.Name); in != nil && len(in.Enum) > 0 && !inEnum(in.Enum, string(*p.Value)) {
				v.r.add(pp+".value", "value %q is not in the enum list %s of input %q of template %q", *p.Value, enumList(in.Enum), p.Name, callee.Name)
			}
		}
	}
	v.checkArgumentArtifacts(path+".artifacts", args.Artifacts)
	if sc != nil {
		sc.checkValue(v.r, args, path, nil)
	}
	if callee != nil {
		v.checkSupplied(path, callee, args, callee.Name)
	}
}

// checkSupplied reports each input of t that has neither a value, a default,
// a valueFrom, nor an argument.
func (v *specValidator) checkSupplied(path string, t *v1alpha1.Template, args v1alpha1.Arguments, name string) {
	for _, in := range t.Inputs.Parameters {
		if in.Value != nil || in.Default != nil || in.ValueFrom != nil {
			continue
		}
		if findParameter(args.Parameters, in.Name) != nil {
			continue
		}
		v.r.add(path, "inputs.parameters.%s was not supplied: template %q has no value or default for it", in.Name, name)
	}
	for _, in := range t.Inputs.Artifacts {
		if (in.Optional != nil && *in.Optional) || hasLocation(&in) || in.From != "" {
			continue
		}
		found := false
		for _, a := range args.Artifacts {
			found = found || a.Name == in.Name
		}
		if !found {
			v.r.add(path, "inputs.artifacts.%s was not supplied: template %q needs it", in.Name, name)
		}
	}
}

func hasLocation(a *v1alpha1.Artifact) bool { return a.HasLocation() }
