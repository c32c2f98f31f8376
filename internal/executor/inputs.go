package executor

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// WriteRawArtifacts loads the template's input artifacts that a host can
// load without a repository: each raw artifact's data is written to its path
// (parent directories created; mode from the artifact, 0644 by default). A
// relative path is resolved against workDir. An optional artifact without a
// location is skipped. Any other input artifact is an error wrapping
// ErrUnsupported that names it and its kind: loading from a repository is
// the artifact drivers' job.
func WriteRawArtifacts(tmpl *v1alpha1.Template, workDir string) error {
	if tmpl == nil {
		return nil
	}
	for _, a := range tmpl.Inputs.Artifacts {
		kind := locationKind(&a.ArtifactLocation)
		switch {
		case kind == "raw":
		case kind == "" && a.Optional != nil && *a.Optional:
			continue
		case kind == "":
			return unsupportedf("input artifact %q has no location", a.Name)
		default:
			return unsupportedf("input artifact %q: the local runtime cannot load %s artifacts yet", a.Name, kind)
		}
		if a.Path == "" {
			return fmt.Errorf("input artifact %q has no path", a.Name)
		}
		p := a.Path
		if !filepath.IsAbs(p) && workDir != "" {
			p = filepath.Join(workDir, p)
		}
		mode := os.FileMode(0o644)
		if a.Mode != nil {
			mode = os.FileMode(*a.Mode) & os.ModePerm
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("input artifact %q: %w", a.Name, err)
		}
		if err := writeFileMode(p, []byte(a.Raw.Data), mode); err != nil {
			return fmt.Errorf("input artifact %q: %w", a.Name, err)
		}
	}
	return nil
}

// locationKind names the location's kind ("s3", "raw", ...), or "" when no
// location is set.
func locationKind(l *v1alpha1.ArtifactLocation) string {
	switch {
	case l.Raw != nil:
		return "raw"
	case l.S3 != nil:
		return "s3"
	case l.Git != nil:
		return "git"
	case l.HTTP != nil:
		return "http"
	case l.Artifactory != nil:
		return "artifactory"
	case l.HDFS != nil:
		return "hdfs"
	case l.OSS != nil:
		return "oss"
	case l.GCS != nil:
		return "gcs"
	case l.Azure != nil:
		return "azure"
	case l.Plugin != nil:
		return "plugin"
	}
	return ""
}
