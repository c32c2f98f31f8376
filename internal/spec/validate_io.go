package spec

import (
	"encoding/json"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func (v *specValidator) checkInputs(t *v1alpha1.Template, path string) {
	if len(t.Inputs.Parameters) == 0 && len(t.Inputs.Artifacts) == 0 {
		return
	}
	v.checkParamNames(path+".parameters", t.Inputs.Parameters)
	for i, p := range t.Inputs.Parameters {
		pp := idx(path+".parameters", i)
		checkEnum(v.r, pp, p)
		if p.ValueFrom != nil {
			checkValueFromInput(v.r, pp+".valueFrom", p.ValueFrom)
		}
	}
	v.checkArtifactNames(path+".artifacts", t.Inputs.Artifacts)
	for i, a := range t.Inputs.Artifacts {
		ap := idx(path+".artifacts", i)
		switch {
		case isLeaf(t) && a.Path == "" && t.Container != nil || isLeaf(t) && a.Path == "" && t.Script != nil:
			v.r.add(ap+".path", "input artifact %q needs a path in a %s template", a.Name, templateTypes(t)[0])
		case !isLeaf(t) && a.Path != "":
			v.r.add(ap+".path", "input artifact %q: path is only valid in leaf templates", a.Name)
		}
		if a.From != "" || a.FromExpression != "" {
			v.r.add(ap, "input artifact %q: from and fromExpression are only valid in arguments", a.Name)
		}
		checkArtifactLocation(v.r, ap, &a)
	}
}

func checkValueFromInput(r *reporter, path string, vf *v1alpha1.ValueFrom) {
	if vf.ConfigMapKeyRef != nil && vf.ConfigMapKeyRef.Name == "" && vf.ConfigMapKeyRef.Key == "" {
		r.add(path+".configMapKeyRef", "configMapKeyRef needs a name and a key")
	}
	if vf.Expression != "" {
		checkExprSyntax(r, path+".expression", vf.Expression)
	}
	if vf.Event != "" {
		checkExprSyntax(r, path+".event", vf.Event)
	}
}

func checkEnum(r *reporter, path string, p v1alpha1.Parameter) {
	if p.Enum == nil {
		return
	}
	if len(p.Enum) == 0 {
		r.add(path+".enum", "enum should contain at least one value")
		return
	}
	for _, which := range []struct {
		name string
		val  *v1alpha1.AnyString
	}{{"value", p.Value}, {"default", p.Default}} {
		if which.val == nil || strings.Contains(string(*which.val), "{{") {
			continue
		}
		if !inEnum(p.Enum, string(*which.val)) {
			r.add(path+"."+which.name, "%s %q of parameter %q is not in its enum list %s", which.name, *which.val, p.Name, enumList(p.Enum))
		}
	}
}

func inEnum(enum []v1alpha1.AnyString, v string) bool {
	for _, e := range enum {
		if string(e) == v {
			return true
		}
	}
	return false
}

func enumList(enum []v1alpha1.AnyString) string {
	b, _ := json.Marshal(enum)
	return string(b)
}

func (v *specValidator) checkOutputs(t *v1alpha1.Template, path string) {
	if len(t.Outputs.Parameters) == 0 && len(t.Outputs.Artifacts) == 0 {
		return
	}
	v.checkParamNames(path+".parameters", t.Outputs.Parameters)
	for i := range t.Outputs.Parameters {
		v.checkOutputParameter(t, idx(path+".parameters", i), &t.Outputs.Parameters[i])
	}
	v.checkArtifactNames(path+".artifacts", t.Outputs.Artifacts)
	for i, a := range t.Outputs.Artifacts {
		ap := idx(path+".artifacts", i)
		switch {
		case (t.Container != nil || t.Script != nil) && a.Path == "":
			v.r.add(ap+".path", "output artifact %q needs a path", a.Name)
		case !isLeaf(t) && a.Path != "":
			v.r.add(ap+".path", "output artifact %q: path is only valid in leaf templates", a.Name)
		case !isLeaf(t) && a.From == "" && a.FromExpression == "":
			v.r.add(ap, "output artifact %q of a %s template needs from or fromExpression", a.Name, templateTypes(t)[0])
		}
		if a.GlobalName != "" && !strings.Contains(a.GlobalName, "{{") {
			if msg := invalidParamName(a.GlobalName); msg != "" {
				v.r.add(ap+".globalName", "globalName %q is invalid: %s", a.GlobalName, msg)
			}
		}
	}
}

func (v *specValidator) checkOutputParameter(t *v1alpha1.Template, path string, p *v1alpha1.Parameter) {
	if p.GlobalName != "" && !strings.Contains(p.GlobalName, "{{") {
		if msg := invalidParamName(p.GlobalName); msg != "" {
			v.r.add(path+".globalName", "globalName %q is invalid: %s", p.GlobalName, msg)
		}
	}
	vf := p.ValueFrom
	if vf != nil && p.Value != nil {
		v.r.add(path, "output parameter %q has both value and valueFrom: choose one", p.Name)
		return
	}
	if vf == nil {
		if p.Value == nil {
			v.r.add(path, "output parameter %q needs a value or a valueFrom", p.Name)
		}
		return
	}
	var kinds []string
	for _, k := range []struct {
		set  bool
		name string
	}{{vf.Path != "", "path"}, {vf.JQFilter != "", "jqFilter"}, {vf.JSONPath != "", "jsonPath"},
		{vf.Parameter != "", "parameter"}, {vf.Expression != "", "expression"}, {vf.Supplied != nil, "supplied"},
		{vf.ConfigMapKeyRef != nil, "configMapKeyRef"}, {vf.Event != "", "event"}} {
		if k.set {
			kinds = append(kinds, k.name)
		}
	}
	switch {
	case len(kinds) == 0 && vf.Default == nil:
		v.r.add(path+".valueFrom", "valueFrom of %q names no source: use one of path, jqFilter, jsonPath, parameter, expression, supplied", p.Name)
	case len(kinds) > 1:
		v.r.add(path+".valueFrom", "valueFrom of %q names several sources (%s): use one", p.Name, strings.Join(kinds, ", "))
	case len(kinds) == 1:
		v.checkValueFromKind(t, path+".valueFrom", p.Name, kinds[0])
	}
	if vf.Expression != "" {
		checkExprSyntax(v.r, path+".valueFrom.expression", vf.Expression)
	}
	if vf.Parameter != "" && !isSingleTag(vf.Parameter) {
		v.r.add(path+".valueFrom.parameter", "valueFrom.parameter must be exactly one {{...}} tag, got %q", vf.Parameter)
	}
}

func (v *specValidator) checkValueFromKind(t *v1alpha1.Template, path, name, kind string) {
	switch {
	case t.Container != nil || t.Script != nil || t.ContainerSet != nil:
		if kind != "path" && kind != "expression" {
			v.r.add(path, "output parameter %q of a %s template must use valueFrom.path", name, templateTypes(t)[0])
		}
	case t.Resource != nil:
		if kind != "jsonPath" && kind != "jqFilter" {
			v.r.add(path, "output parameter %q of a resource template must use valueFrom.jsonPath or jqFilter", name)
		}
	case t.Steps != nil || t.DAG != nil:
		if kind != "parameter" && kind != "expression" {
			v.r.add(path, "output parameter %q of a %s template must use valueFrom.parameter or expression", name, templateTypes(t)[0])
		}
	}
}

func isSingleTag(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") && strings.Count(s, "{{") == 1
}

func (v *specValidator) checkParamNames(path string, ps []v1alpha1.Parameter) {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	v.checkNames(path, "parameter", names, invalidParamName)
}

func (v *specValidator) checkArtifactNames(path string, as []v1alpha1.Artifact) {
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = a.Name
	}
	v.checkNames(path, "artifact", names, invalidParamName)
}

// checkNames reports names in a list that are empty, repeated or invalid.
func (v *specValidator) checkNames(path, what string, names []string, invalid func(string) string) {
	seen := make(map[string]struct{}, len(names))
	for i, name := range names {
		_, dup := seen[name]
		switch {
		case name == "":
			v.r.add(idx(path, i)+".name", "a %s needs a name", what)
		case dup:
			v.r.add(idx(path, i)+".name", "%s name %q is not unique", what, name)
		default:
			if msg := invalid(name); msg != "" {
				v.r.add(idx(path, i)+".name", "%s name %q is invalid: %s", what, name, msg)
			}
		}
		seen[name] = struct{}{}
	}
}

func checkArtifactLocation(r *reporter, path string, a *v1alpha1.Artifact) {
	if a.Git != nil && a.Git.Repo == "" {
		r.add(path+".git.repo", "a git artifact needs a repo")
	}
	if a.HTTP != nil && a.HTTP.URL == "" {
		r.add(path+".http.url", "an http artifact needs a url")
	}
	if a.Archive != nil {
		n := 0
		for _, set := range []bool{a.Archive.Tar != nil, a.Archive.None != nil, a.Archive.Zip != nil} {
			if set {
				n++
			}
		}
		if n > 1 {
			r.add(path+".archive", "archive names several strategies: use one of tar, none, zip")
		}
	}
}

// checkArguments checks an arguments block: names, and for a Workflow's own
// arguments, enum values. Values may be missing: they can come from -p.
func (v *specValidator) checkArguments(path string, args v1alpha1.Arguments) {
	v.checkParamNames(path+".parameters", args.Parameters)
	for i, p := range args.Parameters {
		pp := idx(path+".parameters", i)
		checkEnum(v.r, pp, p)
		if p.ValueFrom != nil {
			checkValueFromInput(v.r, pp+".valueFrom", p.ValueFrom)
		}
	}
	v.checkArgumentArtifacts(path+".artifacts", args.Artifacts)
}

func (v *specValidator) checkArgumentArtifacts(path string, as []v1alpha1.Artifact) {
	v.checkArtifactNames(path, as)
	for i, a := range as {
		ap := idx(path, i)
		if a.From != "" && a.FromExpression != "" {
			v.r.add(ap, "artifact %q has both from and fromExpression: choose one", a.Name)
		}
		checkArtifactLocation(v.r, ap, &a)
	}
}
