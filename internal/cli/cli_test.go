package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const good = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: good-}
spec:
  entrypoint: main
  templates:
  - {name: main, container: {image: busybox}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
`

const bad = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: steps-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: whalesay2}
`

func TestLint(t *testing.T) {
	goodFile, badFile := writeFile(t, "good.yaml", good), writeFile(t, "steps.yaml", bad)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"good", []string{"lint", goodFile}, 0, "✔ no linting errors found!"},
		{"skipped note", []string{"lint", goodFile}, 0, "skipped ConfigMap cm: v1/ConfigMap is not an Argo kind"},
		{"bad", []string{"lint", badFile}, 1, `steps.yaml: Workflow steps-: spec.templates[0].steps[0][0].template: "whalesay2" not found (line 9)`},
		{"bad summary", []string{"lint", badFile, goodFile}, 1, "✖ 1 linting error found!"},
		{"simple", []string{"lint", "-o", "simple", badFile}, 1, `"whalesay2" not found`},
		{"kinds filter", []string{"lint", "--kinds", "cronworkflows", badFile}, 0, "0 objects checked"},
		{"bad kind", []string{"lint", "--kinds", "pods", badFile}, 2, ""},
		{"bad output", []string{"lint", "-o", "xml", badFile}, 2, ""},
		{"missing file", []string{"lint", "/nonexistent.yaml"}, 1, ""},
		{"no args", []string{"lint"}, 1, ""},
		{"version", []string{"version", "--short"}, 0, "braid: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			if !strings.Contains(out, tt.want) {
				t.Fatalf("stdout does not contain %q:\n%s", tt.want, out)
			}
		})
	}
}

func TestLintJSON(t *testing.T) {
	out, _, code := run(t, "lint", "-o", "json", writeFile(t, "steps.yaml", bad), writeFile(t, "good.yaml", good))
	if code != 1 {
		t.Fatalf("exit code %d", code)
	}
	var rep lintReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(rep.Errors) != 1 || rep.Errors[0].Path != "spec.templates[0].steps[0][0].template" || rep.Errors[0].Line != 9 {
		t.Fatalf("errors = %+v", rep.Errors)
	}
	if len(rep.Objects) != 2 || len(rep.Skipped) != 1 || rep.Skipped[0].Kind != "ConfigMap" {
		t.Fatalf("objects %+v skipped %+v", rep.Objects, rep.Skipped)
	}
}
