package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// braid server follows its config file as Argo follows its ConfigMaps: a
// workflow waiting for a semaphore whose key the config lacks says why,
// and runs once the key is added, with no restart.
func TestSemaphoreConfigReload(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(home, "config.yaml")
	writeFile(t, config, "configMaps:\n  my-config: {other: \"1\"}\n")
	srv := startBraidServer(t, home)
	env := srv.env()
	wf := filepath.Join(dir, "wf.yaml")
	writeFile(t, wf, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: sem-}
spec:
  entrypoint: main
  synchronization:
    semaphores: [{configMapKeyRef: {name: my-config, key: workflow}}]
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, "echo ran"]}
`)
	r := expect(t, env, 0, "", "submit", wf, "-o", "name")
	name := strings.TrimSpace(r.out)
	waitForOutput(t, env, "failed to get semaphore limit: config map my-config has no key workflow", "get", name)
	expect(t, env, 0, "Pending", "get", name)

	writeFile(t, config, "configMaps:\n  my-config: {other: \"1\", workflow: \"1\"}\n")
	expect(t, env, 0, "", "wait", name)
	expect(t, env, 0, "Succeeded", "get", name)
}
