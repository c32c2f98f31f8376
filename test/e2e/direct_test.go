package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// After braid run, the workflow and its logs stay readable with list, get
// and logs, until delete removes the workflow.
func TestDirectModeCommands(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	file := filepath.Join(dir, "wf.yaml")
	writeFile(t, file, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: kept}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: hello, template: say}
  - name: say
    container: {image: busybox, command: [echo, "kept after the step"]}
`)
	braid := func(args ...string) (string, int) {
		cmd := exec.Command(braidBin, append(args, "--data-dir", home)...)
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	if out, code := braid("run", file); code != 0 {
		t.Fatalf("run: %d\n%s", code, out)
	}
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"list"}, 0, "kept   Succeeded"},
		{[]string{"list", "-o", "name"}, 0, "kept\n"},
		{[]string{"get", "kept"}, 0, "✔ hello"},
		{[]string{"get", "kept", "-o", "json"}, 0, `"phase": "Succeeded"`},
		{[]string{"logs", "kept"}, 0, ": kept after the step"},
		{[]string{"logs", "kept", "--follow"}, 0, ": kept after the step"},
		{[]string{"get", "nope"}, 1, `workflows.argoproj.io "nope" not found`},
		{[]string{"delete", "kept"}, 0, "Workflow 'kept' deleted"},
		{[]string{"list"}, 0, "No workflows found"},
	}
	for _, s := range steps {
		out, code := braid(s.args...)
		if code != s.code || !strings.Contains(out, s.want) {
			t.Fatalf("braid %s: exit %d (want %d), output lacks %q:\n%s", strings.Join(s.args, " "), code, s.code, s.want, out)
		}
	}
}
