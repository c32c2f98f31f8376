package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A completed workflow is archived with its logs: once the live workflow
// is deleted, braid get and braid logs answer from the archive; once the
// archived one is deleted too, its logs go.
func TestLogsOfArchivedWorkflow(t *testing.T) {
	dir := t.TempDir()
	srv := startBraidServer(t, filepath.Join(dir, "home"))
	env := srv.env()
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

	// Deleted from the archive too, nothing of it is left: its logs go.
	runs := filepath.Join(dir, "home", "runs", "default", "kept")
	if _, err := os.Stat(runs); err != nil {
		t.Fatalf("the step logs are not where expected: %v", err)
	}
	expect(t, env, 0, "Archived workflow", "archive", "delete", "kept")
	if _, err := os.Stat(runs); !os.IsNotExist(err) {
		t.Fatalf("%s after the archived workflow was deleted: %v", runs, err)
	}
	expect(t, env, 1, "", "logs", "kept")
}
