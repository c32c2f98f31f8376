package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// RunData runs a data template as Argo's executor does (`argoexec data`)
// and returns its outputs.result, the JSON of the final value:
//
//   - the source gives the first value: artifactPaths lists the keys of the
//     objects under its location, recursively (artifact.Lister); a key-only
//     location inherits the plan's repository first, as an input does;
//   - each transformation step's expression is evaluated with expr-lang over
//     {data: the current value}, and its result is the next value (steps
//     with an empty expression are skipped, as in Argo).
//
// An empty listing is an empty list ("[]"). Errors name the location that
// could not be listed or the expression that failed, and never hold
// credentials; they are the step's Error message.
func RunData(ctx context.Context, tmpl *v1alpha1.Template, plan *step.ArtifactPlan, d *artifact.Drivers) (string, error) {
	if tmpl == nil || tmpl.Data == nil {
		return "", errors.New("data template: the template has no data")
	}
	value, err := dataSource(ctx, &tmpl.Data.Source, plan, d)
	if err != nil {
		return "", err
	}
	value, err = transform(value, tmpl.Data.Transformation)
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(value)
	if err != nil {
		return "", fmt.Errorf("data template: the result cannot be written as JSON: %w", err)
	}
	return string(out), nil
}

// dataSource returns the value the data template's source gives.
func dataSource(ctx context.Context, src *v1alpha1.DataSource, plan *step.ArtifactPlan, d *artifact.Drivers) (any, error) {
	if src.ArtifactPaths == nil {
		return nil, errors.New("data template: no source is set (data.source.artifactPaths)")
	}
	keys, err := listArtifactPaths(ctx, &src.ArtifactPaths.Artifact, plan, d)
	if err != nil {
		return nil, err
	}
	return keys, nil
}

// listArtifactPaths lists the keys under the artifact's location, after it
// inherited the plan's repository.
func listArtifactPaths(ctx context.Context, in *v1alpha1.Artifact, plan *step.ArtifactPlan, d *artifact.Drivers) ([]string, error) {
	if !in.HasLocation() {
		return nil, fmt.Errorf("data template: artifactPaths %q has no location (set s3, file, ...)", in.Name)
	}
	art := *in.DeepCopy()
	if plan != nil {
		art.ArtifactLocation = inherit(in.ArtifactLocation, plan.Repository)
	}
	loc := where(&art.ArtifactLocation)
	drv, err := d.For(&art.ArtifactLocation)
	if err != nil {
		return nil, &artError{msg: fmt.Sprintf("data template: artifactPaths %q (%s): %v", art.Name, loc, err), err: err}
	}
	keys, err := artifact.List(ctx, drv, &art)
	if err != nil {
		// A driver's own errors name the artifact and its location already.
		msg := fmt.Sprintf("data template: list artifactPaths: %v", err)
		if !strings.Contains(err.Error(), fmt.Sprintf("artifact %q", art.Name)) {
			msg = fmt.Sprintf("data template: list artifactPaths %q (%s): %v", art.Name, loc, err)
		}
		return nil, &artError{msg: msg, err: err}
	}
	if keys == nil {
		keys = []string{}
	}
	return keys, nil
}

// transform applies the transformation steps in order, each to the value
// the one before gave.
func transform(value any, steps v1alpha1.Transformation) (any, error) {
	for i, step := range steps {
		if step.Expression == "" {
			continue
		}
		next, err := expr.Eval(step.Expression, map[string]any{"data": value})
		if err != nil {
			return nil, fmt.Errorf("data template: transformation %d: %w", i, err)
		}
		value = next
	}
	return value, nil
}
