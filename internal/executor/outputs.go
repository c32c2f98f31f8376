package executor

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// MaxParameter bounds what is read of one output parameter's file. Argo
// keeps parameters in the pod's annotations, which cap a pod at 256 KiB; a
// host has no such cap, so the bound is generous and only stops a step from
// exhausting memory with a huge file.
const MaxParameter = 16 << 20

// ReadOutputParameters returns the template's output parameters with their
// values, following Argo's executor (exec/executor.go SaveParameters):
//
//   - a parameter with valueFrom.path takes the file's content with exactly
//     one trailing "\n" removed; a relative path is resolved against
//     workDir (the step's working directory);
//   - when the file cannot be read (missing, a directory), valueFrom.default
//     is used if it is set; otherwise that parameter is an error, and the
//     others still get their values;
//   - a parameter without valueFrom.path (valueFrom.supplied, a literal
//     value) is returned as it is.
//
// The file is read as the step saw it (Paths.open): a link resolves inside
// the step's root, and a path that leads where braid reads nothing (its
// data directory, /proc) is an error even with a default, so that the
// attempt shows. At most MaxParameter bytes are read.
//
// The result is a copy; tmpl is not modified. The error, if any, names every
// parameter that failed.
func ReadOutputParameters(tmpl *v1alpha1.Template, paths Paths) ([]v1alpha1.Parameter, error) {
	if tmpl == nil || len(tmpl.Outputs.Parameters) == 0 {
		return nil, nil
	}
	out := make([]v1alpha1.Parameter, len(tmpl.Outputs.Parameters))
	var problems []string
	for i, p := range tmpl.Outputs.Parameters {
		out[i] = *p.DeepCopy()
		if p.ValueFrom == nil || p.ValueFrom.Path == "" {
			continue
		}
		value, err := readParameterFile(paths, p.ValueFrom.Path)
		var refused *refusedError
		switch {
		case err == nil:
			out[i].Value = v1alpha1.AnyStringPtr(strings.TrimSuffix(value, "\n"))
		case p.ValueFrom.Default != nil && !errors.As(err, &refused):
			out[i].Value = v1alpha1.AnyStringPtr(p.ValueFrom.Default.String())
		default:
			problems = append(problems, fmt.Sprintf("output parameter %q: %v", p.Name, err))
		}
	}
	if len(problems) > 0 {
		return out, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return out, nil
}

// readParameterFile reads the step's file at path, as the step saw it; its
// errors name the path as the step wrote it, not where it lies on the host.
func readParameterFile(paths Paths, path string) (string, error) {
	o, err := paths.open(path, "open")
	if err != nil {
		return "", err
	}
	if o.dir != nil {
		o.dir.close()
		return "", fmt.Errorf("%s is a directory", path)
	}
	defer o.file.Close()
	data, err := io.ReadAll(io.LimitReader(o.file, MaxParameter+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxParameter {
		return "", fmt.Errorf("%s is larger than %d bytes, the bound of a parameter", path, MaxParameter)
	}
	return string(data), nil
}

// UsesTmp reports whether the template reads an output from under /tmp, or
// places an input artifact there, where steps running side by side on one
// host would overwrite each other.
func UsesTmp(tmpl *v1alpha1.Template) bool {
	under := func(p string) bool {
		c := filepath.Clean(p)
		return c == "/tmp" || strings.HasPrefix(c, "/tmp/")
	}
	for _, p := range tmpl.Outputs.Parameters {
		if p.ValueFrom != nil && under(p.ValueFrom.Path) {
			return true
		}
	}
	for _, arts := range [][]v1alpha1.Artifact{tmpl.Outputs.Artifacts, tmpl.Inputs.Artifacts} {
		for _, a := range arts {
			if under(a.Path) {
				return true
			}
		}
	}
	return false
}
