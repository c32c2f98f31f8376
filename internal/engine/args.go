package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// absentSentinel replaces an argument that is exactly one reference to an
// absent optional output (rule 6.6): the callee then treats the input as
// not supplied, so its default applies.
const absentSentinel = "\x00braid:absent-optional\x00"

// processInputs binds a template's inputs from the caller's arguments
// (rule 6.5, common/util.go ProcessArgs): value or default, overridden by an
// argument of the same name. Values may use global tags; they are resolved
// with subst. Errors are user errors for the node.
func processInputs(t *v1alpha1.Template, args *v1alpha1.Arguments, subst *vars) (*v1alpha1.Inputs, error) {
	if len(t.Inputs.Parameters) == 0 && len(t.Inputs.Artifacts) == 0 {
		return &v1alpha1.Inputs{}, nil
	}
	in := t.Inputs.DeepCopy()
	for i := range in.Parameters {
		if err := bindParameter(&in.Parameters[i], args); err != nil {
			return nil, err
		}
	}
	for i := range in.Parameters {
		p := &in.Parameters[i]
		if p.Value == nil || !strings.Contains(string(*p.Value), "{{") {
			continue
		}
		s, err := subst.replace(string(*p.Value), expr.Lenient)
		if err != nil {
			return nil, fmt.Errorf("inputs.parameters.%s: %w", p.Name, err)
		}
		p.Value = v1alpha1.AnyStringPtr(s)
	}
	for i := range in.Artifacts {
		if err := bindArtifact(&in.Artifacts[i], args); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func bindParameter(p *v1alpha1.Parameter, args *v1alpha1.Arguments) error {
	if p.Value == nil && p.Default != nil {
		p.Value = p.Default
	}
	arg := findParameter(args, p.Name)
	if arg != nil && arg.Value != nil && string(*arg.Value) == absentSentinel {
		if p.Value == nil && p.ValueFrom == nil {
			return fmt.Errorf("inputs.parameters.%s: argument references an absent optional (skipped/omitted node output with no default)", p.Name)
		}
	} else if arg != nil {
		if arg.Value != nil {
			p.Value, p.ValueFrom = arg.Value, nil
		} else {
			p.Value, p.ValueFrom = nil, arg.ValueFrom
		}
	}
	if p.ValueFrom != nil && p.ValueFrom.ConfigMapKeyRef != nil {
		if p.ValueFrom.Default == nil {
			return fmt.Errorf("unable to retrieve inputs.parameters.%s from ConfigMap: configmaps are not available", p.Name)
		}
		p.Value = p.ValueFrom.Default
		return nil
	}
	if p.Value == nil {
		return fmt.Errorf("inputs.parameters.%s was not supplied", p.Name)
	}
	return nil
}

func bindArtifact(a *v1alpha1.Artifact, args *v1alpha1.Arguments) error {
	arg := findArtifact(args, a.Name)
	if !isOptional(a) && !hasLocation(a.ArtifactLocation) {
		if arg == nil {
			return fmt.Errorf("inputs.artifacts.%s was not supplied", a.Name)
		}
		if !hasLocation(arg.ArtifactLocation) {
			return fmt.Errorf("inputs.artifacts.%s missing location information", a.Name)
		}
	}
	if arg != nil {
		path, mode, recurse := a.Path, a.Mode, a.RecurseMode
		*a = *arg.DeepCopy()
		a.Path, a.Mode, a.RecurseMode = path, mode, recurse
	}
	return nil
}

func findParameter(args *v1alpha1.Arguments, name string) *v1alpha1.Parameter {
	if args == nil {
		return nil
	}
	for i := range args.Parameters {
		if args.Parameters[i].Name == name {
			return &args.Parameters[i]
		}
	}
	return nil
}

func findArtifact(args *v1alpha1.Arguments, name string) *v1alpha1.Artifact {
	if args == nil {
		return nil
	}
	for i := range args.Artifacts {
		if args.Artifacts[i].Name == name {
			return &args.Artifacts[i]
		}
	}
	return nil
}

func isOptional(a *v1alpha1.Artifact) bool { return a.Optional != nil && *a.Optional }

func hasLocation(l v1alpha1.ArtifactLocation) bool { return l.HasLocation() }

// markAbsentArguments replaces each argument that is exactly one simple tag
// resolving to an absent optional with absentSentinel (rule 6.6). It returns
// args itself when nothing changes.
func markAbsentArguments(args v1alpha1.Arguments, v *vars) v1alpha1.Arguments {
	changed := false
	for i, p := range args.Parameters {
		if p.Value == nil || !isAbsentRef(string(*p.Value), v) {
			continue
		}
		if !changed {
			args.Parameters = append([]v1alpha1.Parameter(nil), args.Parameters...)
			changed = true
		}
		args.Parameters[i].Value = v1alpha1.AnyStringPtr(absentSentinel)
	}
	return args
}

func isAbsentRef(s string, v *vars) bool {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{{") || !strings.HasSuffix(t, "}}") {
		return false
	}
	tags := expr.Tags(t)
	if len(tags) != 1 || tags[0].Expr || tags[0].Start != 0 || tags[0].End != len(t) {
		return false
	}
	val, ok := v.lookup(tags[0].Body)
	return ok && val == nil
}

// resolveArtifactArgs turns each argument artifact with from or
// fromExpression into the artifact it names (steps and tasks, rule 6.1).
func resolveArtifactArgs(args *v1alpha1.Arguments, v *vars) error {
	if len(args.Artifacts) == 0 {
		return nil
	}
	out := make(v1alpha1.Artifacts, 0, len(args.Artifacts))
	for _, a := range args.Artifacts {
		if a.From == "" && a.FromExpression == "" {
			out = append(out, a)
			continue
		}
		res, err := resolveArtifact(&a, v)
		if err != nil {
			if isOptional(&a) {
				continue
			}
			return fmt.Errorf("unable to resolve references: %w", err)
		}
		res.Name = a.Name
		if a.SubPath != "" { // the argument picks a path inside the artifact
			res.SubPath = a.SubPath
		}
		out = append(out, res)
	}
	args.Artifacts = out
	return nil
}

// resolveArtifact resolves from ("{{steps.x.outputs.artifacts.y}}") or
// fromExpression to an artifact in scope.
func resolveArtifact(a *v1alpha1.Artifact, v *vars) (v1alpha1.Artifact, error) {
	var val any
	if a.FromExpression != "" {
		res, err := v.r.lim.Expression.Eval(a.FromExpression, v.env())
		if err != nil {
			return v1alpha1.Artifact{}, err
		}
		val = res
	} else {
		key := strings.TrimSpace(a.From)
		key = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(key, "{{"), "}}"))
		res, ok := v.lookup(key)
		if !ok {
			return v1alpha1.Artifact{}, fmt.Errorf("Unable to resolve: %s", a.From)
		}
		val = res
	}
	return toArtifact(val, a)
}

func toArtifact(val any, a *v1alpha1.Artifact) (v1alpha1.Artifact, error) {
	switch x := val.(type) {
	case v1alpha1.Artifact:
		return *x.DeepCopy(), nil
	case *v1alpha1.Artifact:
		if x != nil {
			return *x.DeepCopy(), nil
		}
	case map[string]any:
		data, err := json.Marshal(x)
		if err == nil {
			var out v1alpha1.Artifact
			if json.Unmarshal(data, &out) == nil {
				return out, nil
			}
		}
	}
	return v1alpha1.Artifact{}, fmt.Errorf("Unable to resolve: %s%s is not an artifact", a.From, a.FromExpression)
}
