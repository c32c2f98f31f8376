package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// A completed workflow is archived with its logs: once the live workflow
// is deleted, braid get and braid logs answer from the archive.
func TestLogsOfArchivedWorkflow(t *testing.T) {
	dir := t.TempDir()
	srv := startBraidServer(t, filepath.Join(dir, "home"))
	env := []string{"ARGO_SERVER=" + srv.addr}
	file := filepath.Join(dir, "wf.yaml")
	writeFile(t, file, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: kept}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: say, arguments: {parameters: [{name: m, value: first}]}}
    - - {name: b, template: say, arguments: {parameters: [{name: m, value: second}]}}
  - name: say
    inputs: {parameters: [{name: m}]}
    container: {image: busybox, command: [echo, "said {{inputs.parameters.m}}"]}
`)
	expect(t, env, 0, "", "submit", file, "--wait")
	waitForOutput(t, env, "kept", "archive", "list")
	expect(t, env, 0, "Workflow 'kept' deleted", "delete", "kept")
	expect(t, env, 0, "Succeeded", "get", "kept")
	r := expect(t, env, 0, "said first", "logs", "kept")
	if !strings.Contains(r.out, "said second") {
		t.Fatalf("logs of the archived workflow:\n%s", r.out)
	}
}
