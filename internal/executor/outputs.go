package executor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
		value, err := readParameterFile(paths.Resolve(p.ValueFrom.Path))
		switch {
		case err == nil:
			out[i].Value = v1alpha1.AnyStringPtr(strings.TrimSuffix(value, "\n"))
		case p.ValueFrom.Default != nil:
			out[i].Value = v1alpha1.AnyStringPtr(p.ValueFrom.Default.String())
		default:
			// Name the path as the step saw it, not where it lies on the host.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = &fs.PathError{Op: pe.Op, Path: p.ValueFrom.Path, Err: pe.Err}
			}
			problems = append(problems, fmt.Sprintf("output parameter %q: %v", p.Name, err))
		}
	}
	if len(problems) > 0 {
		return out, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return out, nil
}

func readParameterFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a directory", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxParameter+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxParameter {
		return "", fmt.Errorf("%s is larger than %d bytes", path, MaxParameter)
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
