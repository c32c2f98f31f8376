package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// ScriptFile is the name of the staged script in a step's directory (Argo
// stages it as /argo/staging/script).
const ScriptFile = "script"

// MainContainer returns the container a container or script template runs,
// staging a script's source first (StageScript). Other template types
// return an error naming the type.
func MainContainer(tmpl *v1alpha1.Template, dir string) (*apiv1.Container, error) {
	switch {
	case tmpl == nil:
		return nil, fmt.Errorf("no template")
	case tmpl.Script != nil:
		return StageScript(tmpl.Script, dir)
	case tmpl.Container != nil:
		return tmpl.Container, nil
	}
	return nil, fmt.Errorf("%s templates have no main container", tmpl.Type())
}

// StageScript writes the script's source to dir/script with mode 0755 and
// returns the container to run: the script's container with that path
// appended to its args, so that `command: [python]` runs
// `python <dir>/script`. An empty source stages nothing and appends nothing,
// as in Argo. The returned container is a copy; s is not modified.
func StageScript(s *v1alpha1.ScriptTemplate, dir string) (*apiv1.Container, error) {
	c := s.Container
	if s.Source == "" {
		return &c, nil
	}
	p := filepath.Join(dir, ScriptFile)
	if err := writeFileMode(p, []byte(s.Source), 0o755); err != nil {
		return nil, fmt.Errorf("stage script: %w", err)
	}
	c.Args = append(slices.Clip(c.Args), p)
	return &c, nil
}

// writeFileMode writes data to p and sets mode exactly (whatever the umask).
func writeFileMode(p string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
