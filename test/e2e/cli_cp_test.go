package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const artifactYAML = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: NAME}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: make, template: make}
    - - name: use
        template: use
        arguments: {artifacts: [{name: in, from: "{{steps.make.outputs.artifacts.out}}"}]}
  - name: make
    container: {image: busybox, command: [sh, -c, "mkdir -p /tmp/out && echo made > /tmp/out/file.txt"]}
    outputs: {artifacts: [{name: out, path: /tmp/out}]}
  - name: use
    inputs: {artifacts: [{name: in, path: /tmp/in}]}
    container: {image: busybox, command: [cat, /tmp/in/file.txt]}
`

// An artifact made by one step reaches the next through the zero-setup
// repository, and braid cp downloads it through the server, over gRPC and
// HTTP/1.
func TestCLICp(t *testing.T) {
	for _, mode := range cliModes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			srv := startBraidServer(t, filepath.Join(dir, "home"))
			env := srv.env(mode.env...)
			expect(t, env, 0, "arts Succeeded", "submit", writeNamed(t, dir, "arts", artifactYAML), "--wait")
			expect(t, env, 0, "made", "logs", "arts")
			out := filepath.Join(dir, "out")
			r := expect(t, env, 0, "Created ", "cp", "arts", out, "--template-name", "make")
			if !strings.Contains(r.out, "out.tgz") {
				t.Fatalf("cp printed %q, want the file out.tgz", r.out)
			}
			matches, _ := filepath.Glob(filepath.Join(out, "default", "arts", "*", "outputs", "out", "out.tgz"))
			if len(matches) != 1 {
				t.Fatalf("downloaded files %v", matches)
			}
			if st, err := os.Stat(matches[0]); err != nil || st.Size() == 0 {
				t.Fatalf("downloaded %v, %v", st, err)
			}
		})
	}
}
