package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const stepEnvWorkflow = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: stepenv-
spec:
  entrypoint: main
  templates:
  - name: main
    script:
      image: busybox
      command: [sh]
      env:
      - name: SPEC_MARK
        value: visible
      source: |
        env
        env > /tmp/env.txt
    outputs:
      parameters:
      - name: env
        valueFrom:
          path: /tmp/env.txt
`

// TestStepEnvNotInherited runs `braid run` with markers in its environment
// (a BRAID_SECRET_*, which braid resolves for artifact credentials, and an
// ordinary variable): the step that prints its environment shows its
// spec's env and the ARGO_* variables, and neither marker, in its output
// parameter, its log, or anything braid prints; with a root view (the
// default) and without. The data directory is braid's user's only, and the
// store 0600.
func TestStepEnvNotInherited(t *testing.T) {
	const secret, other = "e2e-secret-marker-51d0", "e2e-other-marker-9b3e"
	t.Setenv("BRAID_SECRET_STEPENV_MARKER_KEY", secret) // braidRun's braid inherits this process's environment
	t.Setenv("BRAID_E2E_OTHER_MARKER", other)
	for _, isolation := range []string{"auto", "none"} {
		t.Run(isolation, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home") // the last --data-dir wins over braidRun's
			stdout, stderr, code, _ := braidRun(t, stepEnvWorkflow, "-o", "json", "--data-dir", home, "--isolation", isolation)
			if code != 0 {
				t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			wf := parseFinal(t, stdout)
			if wf.Status.Phase != "Succeeded" {
				t.Fatalf("phase %s: %s", wf.Status.Phase, wf.Status.Message)
			}
			env := stepEnvParam(wf)
			logs := readLogs(t, filepath.Join(home, "runs"))
			for _, want := range []string{"SPEC_MARK=visible", "ARGO_NODE_ID=", "ARGO_WORKFLOW_NAME=" + wf.Metadata.Name, "PATH=", "HOME="} {
				if !strings.Contains(env, want) || !strings.Contains(logs, want) {
					t.Errorf("the step's environment lacks %s:\n%s\nlog:\n%s", want, env, logs)
				}
			}
			for _, marker := range []string{secret, other, "MARKER"} {
				for what, text := range map[string]string{"output": env, "log": logs, "stdout": stdout, "stderr": stderr} {
					if strings.Contains(text, marker) {
						t.Errorf("braid's environment (%s) reached the step's %s", marker, what)
					}
				}
			}
			wantPerm(t, home, 0o700)
			wantPerm(t, filepath.Join(home, "braid.db"), 0o600)
		})
	}
}

// stepEnvParam is the env output parameter of the workflow's pod.
func stepEnvParam(wf finalWorkflow) string {
	for _, n := range wf.Status.Nodes {
		if n.Outputs == nil {
			continue
		}
		for _, p := range n.Outputs.Parameters {
			if p.Name == "env" {
				return p.Value
			}
		}
	}
	return ""
}

// readLogs returns the step logs (main.log) under dir, one after another.
func readLogs(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "main.log" {
			return err
		}
		data, err := os.ReadFile(p)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func wantPerm(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}
