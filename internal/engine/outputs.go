package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// templateOutputs resolves the outputs of a Steps or DAG template from its
// scope (§12, ctl/operator.go getTemplateOutputsFromScope).
func templateOutputs(t *v1alpha1.Template, v *vars) (*v1alpha1.Outputs, error) {
	if len(t.Outputs.Parameters) == 0 && len(t.Outputs.Artifacts) == 0 {
		return nil, nil
	}
	var out v1alpha1.Outputs
	for _, p := range t.Outputs.Parameters {
		if p.ValueFrom == nil {
			return nil, errors.New("output parameters must have a valueFrom specified")
		}
		val, err := resolveOutputParameter(p.ValueFrom, v)
		if err != nil {
			if p.ValueFrom.Default == nil {
				return nil, err
			}
			val = p.ValueFrom.Default.String()
		}
		p.Value = v1alpha1.AnyStringPtr(val)
		p.ValueFrom = nil
		out.Parameters = append(out.Parameters, p)
	}
	for _, a := range t.Outputs.Artifacts {
		if a.From == "" && a.FromExpression == "" {
			continue
		}
		res, err := resolveArtifact(&a, v)
		if err != nil {
			if isOptional(&a) {
				continue
			}
			return nil, fmt.Errorf("unable to resolve outputs from scope: %w", err)
		}
		res.Name = a.Name
		if a.GlobalName != "" {
			res.GlobalName = a.GlobalName
		}
		out.Artifacts = append(out.Artifacts, res)
	}
	return &out, nil
}

// resolveOutputParameter resolves valueFrom.parameter (exactly one tag) or
// valueFrom.expression (rules 12.1, 12.2). A non-string result is kept as
// Go %v text; nil or an absent optional is an error, so that the default
// applies.
func resolveOutputParameter(vf *v1alpha1.ValueFrom, v *vars) (string, error) {
	switch {
	case vf.Parameter != "":
		return resolveOneTag(vf.Parameter, v)
	case vf.Expression != "":
		res, err := v.r.lim.Expression.Eval(vf.Expression, v.env())
		if err != nil {
			return "", err
		}
		return valueText(res, vf.Expression)
	case vf.Supplied != nil:
		return "", errors.New("supplied outputs are set by a resume")
	}
	return "", errors.New("valueFrom has no parameter or expression")
}

func resolveOneTag(s string, v *vars) (string, error) {
	text := strings.TrimSpace(s)
	tags := expr.Tags(text)
	if len(tags) != 1 || tags[0].Start != 0 || tags[0].End != len(text) {
		return "", fmt.Errorf("valueFrom.parameter %q must be exactly one tag", s)
	}
	if tags[0].Expr {
		res, err := v.r.lim.Expression.Eval(tags[0].Body, v.env())
		if err != nil {
			return "", err
		}
		return valueText(res, tags[0].Body)
	}
	val, ok := v.lookup(tags[0].Body)
	if !ok {
		return "", fmt.Errorf("Unable to resolve: %s", s)
	}
	if err := v.refErr(); err != nil {
		return "", err
	}
	return valueText(val, tags[0].Body)
}

func valueText(val any, what string) (string, error) {
	switch x := val.(type) {
	case nil:
		return "", fmt.Errorf("%s is absent or nil", what)
	case string:
		return x, nil
	}
	return fmt.Sprintf("%v", val), nil
}

// exportOutputs copies outputs that have a globalName to status.outputs and
// to workflow.outputs.* (rule 12.4): the last write wins.
func (r *pass) exportOutputs(out *v1alpha1.Outputs) {
	if out == nil {
		return
	}
	for _, p := range out.Parameters {
		if p.GlobalName != "" {
			r.exportParameter(p)
		}
	}
	for _, a := range out.Artifacts {
		if a.GlobalName != "" {
			r.exportArtifact(a)
		}
	}
}

func (r *pass) exportParameter(p v1alpha1.Parameter) {
	st := &r.wf.Status
	if st.Outputs == nil {
		st.Outputs = &v1alpha1.Outputs{}
	}
	if p.Value != nil {
		r.setGlobal("workflow.outputs.parameters."+p.GlobalName, p.Value.String())
	}
	for i := range st.Outputs.Parameters {
		g := &st.Outputs.Parameters[i]
		if g.Name == p.GlobalName {
			g.Value = p.Value
			return
		}
	}
	st.Outputs.Parameters = append(st.Outputs.Parameters, v1alpha1.Parameter{Name: p.GlobalName, Value: p.Value})
}

func (r *pass) exportArtifact(a v1alpha1.Artifact) {
	st := &r.wf.Status
	if st.Outputs == nil {
		st.Outputs = &v1alpha1.Outputs{}
	}
	a.Name, a.GlobalName, a.Path = a.GlobalName, "", ""
	r.setGlobal("workflow.outputs.artifacts."+a.Name, a)
	for i := range st.Outputs.Artifacts {
		if st.Outputs.Artifacts[i].Name == a.Name {
			st.Outputs.Artifacts[i] = a
			return
		}
	}
	st.Outputs.Artifacts = append(st.Outputs.Artifacts, a)
}
