package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// braidRun runs `braid run` on a workflow given inline and returns stdout,
// stderr, the exit code and the child's peak RSS in KiB.
func braidRun(t *testing.T, workflow string, args ...string) (string, string, int, int64) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "wf.yaml")
	if err := os.WriteFile(file, []byte(workflow), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := append([]string{"run", "--data-dir", filepath.Join(dir, "home"), file}, args...)
	cmd := exec.CommandContext(ctx, braidBin, all...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("braid run: %v", err)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return stdout.String(), stderr.String(), code, rss
}

type finalWorkflow struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Phase   string `json:"phase"`
		Message string `json:"message"`
		Nodes   map[string]struct {
			Name    string `json:"name"`
			Type    string `json:"type"`
			Phase   string `json:"phase"`
			Message string `json:"message"`
			Outputs *struct {
				Result     *string `json:"result"`
				Parameters []struct {
					Name  string `json:"name"`
					Value string `json:"value"`
				} `json:"parameters"`
			} `json:"outputs"`
		} `json:"nodes"`
		Outputs *struct {
			Parameters []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"parameters"`
		} `json:"outputs"`
	} `json:"status"`
}

func parseFinal(t *testing.T, stdout string) finalWorkflow {
	t.Helper()
	var wf finalWorkflow
	if err := json.Unmarshal([]byte(stdout), &wf); err != nil {
		t.Fatalf("stdout is not the final workflow: %v\n%s", err, stdout)
	}
	return wf
}

const paramWorkflow = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: params-
spec:
  entrypoint: main
  arguments:
    parameters:
    - name: message
      value: from-spec
  templates:
  - name: main
    inputs:
      parameters:
      - name: message
    outputs:
      parameters:
      - name: said
        globalName: said
        valueFrom:
          path: /tmp/braid-e2e-said.txt
    script:
      image: busybox
      command: [sh]
      source: |
        echo "{{inputs.parameters.message}}" | tee /tmp/braid-e2e-said.txt
  - name: other
    container:
      image: busybox
      command: [sh, -c, "exit 3"]
`

func TestRunParametersAndOutputs(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		code      int
		phase     string
		globalOut string
	}{
		{"spec value", []string{"-o", "json"}, 0, "Succeeded", "from-spec"},
		{"-p overrides", []string{"-o", "json", "-p", "message=from-flag"}, 0, "Succeeded", "from-flag"},
		{"--entrypoint", []string{"-o", "json", "--entrypoint", "other"}, 1, "Failed", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code, _ := braidRun(t, paramWorkflow, tt.args...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d\n%s", code, tt.code, stderr)
			}
			wf := parseFinal(t, stdout)
			if wf.Status.Phase != tt.phase {
				t.Fatalf("phase %s, want %s: %s", wf.Status.Phase, tt.phase, wf.Status.Message)
			}
			if tt.globalOut != "" {
				if wf.Status.Outputs == nil || len(wf.Status.Outputs.Parameters) == 0 || wf.Status.Outputs.Parameters[0].Value != tt.globalOut {
					t.Fatalf("global output: %+v", wf.Status.Outputs)
				}
			}
		})
	}
}

func TestRunParameterFileAndYAML(t *testing.T) {
	dir := t.TempDir()
	pf := filepath.Join(dir, "params.yaml")
	if err := os.WriteFile(pf, []byte("message: from-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code, _ := braidRun(t, paramWorkflow, "-o", "yaml", "--parameter-file", pf)
	if code != 0 || !strings.Contains(stdout, "phase: Succeeded") || !strings.Contains(stdout, "from-file") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestRunTextOutput(t *testing.T) {
	stdout, _, code, _ := braidRun(t, paramWorkflow)
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	for _, want := range []string{"Status:", "Succeeded", "said"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("text output lacks %q:\n%s", want, stdout)
		}
	}
}
