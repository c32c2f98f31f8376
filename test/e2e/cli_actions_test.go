package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/testutil"
)

// skipIfUnimplemented skips when the server does not serve the action yet.
func skipIfUnimplemented(t *testing.T, r cliResult) {
	t.Helper()
	if strings.Contains(r.err, "code = Unimplemented") {
		t.Skipf("the server does not implement this action yet: %s", strings.TrimSpace(r.err))
	}
}

// waitForOutput runs the CLI until stdout holds want, for up to 20s.
func waitForOutput(t *testing.T, env []string, want string, args ...string) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, fmt.Sprintf("braid %s printed %q", strings.Join(args, " "), want), func() error {
		if r := braidCLI(t, env, args...); !strings.Contains(r.out, want) {
			return fmt.Errorf("last:\n%s\n%s", r.out, r.err)
		}
		return nil
	})
}

const suspendYAML = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: NAME}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: approve, template: wait}
    - - {name: after, template: say}
  - name: wait
    suspend: {}
  - name: say
    container: {image: busybox, command: [echo, after the approval]}
`

const sleepYAML = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: NAME}
spec:
  entrypoint: main
  onExit: bye
  templates:
  - name: main
    steps:
    - - {name: nap, template: nap}
  - name: nap
    container: {image: busybox, command: [sleep, "30"]}
  - name: bye
    container: {image: busybox, command: [echo, exit handler ran]}
`

func writeNamed(t *testing.T, dir, name, tmpl string) string {
	t.Helper()
	p := filepath.Join(dir, name+".yaml")
	writeFile(t, p, strings.ReplaceAll(tmpl, "NAME", name))
	return p
}

// suspend, resume, node set, stop, terminate, retry and resubmit against a
// real braid server, over gRPC and HTTP/1.
func TestCLIActions(t *testing.T) {
	for _, mode := range cliModes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			// The retry case keeps its state in a marker file on the host,
			// which a step in its own root view cannot reach.
			home := filepath.Join(dir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(home, "config.yaml"), "isolation: none\n")
			srv := startBraidServer(t, home)
			env := srv.env(mode.env...)

			t.Run("resume a suspend step", func(t *testing.T) {
				expect(t, env, 0, "approval", "submit", writeNamed(t, dir, "approval", suspendYAML), "-o", "name")
				waitForOutput(t, env, "ǁ approve", "get", "approval")
				r := braidCLI(t, env, "resume", "approval")
				skipIfUnimplemented(t, r)
				if r.code != 0 || r.out != "workflow approval resumed\n" {
					t.Fatalf("resume: %d\n%s%s", r.code, r.out, r.err)
				}
				expect(t, env, 0, "approval Succeeded at ", "wait", "approval")
				expect(t, env, 0, ": after the approval", "logs", "approval")
			})
			t.Run("node set", func(t *testing.T) {
				expect(t, env, 0, "gate", "submit", writeNamed(t, dir, "gate", suspendYAML), "-o", "name")
				waitForOutput(t, env, "ǁ approve", "get", "gate")
				r := braidCLI(t, env, "node", "set", "gate", "--node-field-selector", "displayName=approve", "--phase", "Failed", "--message", "rejected")
				skipIfUnimplemented(t, r)
				if r.code != 0 || r.out != "workflow values set\n" {
					t.Fatalf("node set: %d\n%s%s", r.code, r.out, r.err)
				}
				expect(t, env, 1, "gate Failed at ", "wait", "gate")
			})
			t.Run("suspend, resume, terminate", func(t *testing.T) {
				expect(t, env, 0, "napper", "submit", writeNamed(t, dir, "napper", sleepYAML), "-o", "name")
				waitForOutput(t, env, "● nap", "get", "napper")
				r := braidCLI(t, env, "suspend", "napper")
				skipIfUnimplemented(t, r)
				if r.code != 0 || r.out != "workflow napper suspended\n" {
					t.Fatalf("suspend: %d\n%s%s", r.code, r.out, r.err)
				}
				expect(t, env, 0, "Running (Suspended)", "list")
				expect(t, env, 0, "workflow napper resumed\n", "resume", "napper")
				expect(t, env, 0, "workflow napper terminated\n", "terminate", "napper")
				expect(t, env, 1, "napper Failed at ", "wait", "napper")
			})
			t.Run("stop runs the exit handler", func(t *testing.T) {
				expect(t, env, 0, "stopper", "submit", writeNamed(t, dir, "stopper", sleepYAML), "-o", "name")
				waitForOutput(t, env, "● nap", "get", "stopper")
				r := braidCLI(t, env, "stop", "stopper", "--message", "enough")
				skipIfUnimplemented(t, r)
				if r.code != 0 || r.out != "workflow stopper stopped\n" {
					t.Fatalf("stop: %d\n%s%s", r.code, r.out, r.err)
				}
				expect(t, env, 1, "stopper Failed at ", "wait", "stopper")
				expect(t, env, 0, ": exit handler ran", "logs", "stopper")
			})
			t.Run("retry and resubmit", func(t *testing.T) {
				marker := filepath.Join(dir, "marker-"+mode.name)
				file := filepath.Join(dir, "flaky.yaml")
				writeFile(t, file, workflowYAML("flaky", "test -f "+marker+" && echo second try || { touch "+marker+"; exit 1; }"))
				expect(t, env, 1, "flaky Failed at ", "submit", file, "--wait")
				r := braidCLI(t, env, "retry", "flaky", "--wait")
				skipIfUnimplemented(t, r)
				if r.code != 0 || !strings.Contains(r.out, "flaky Succeeded at ") || !strings.Contains(r.out, "Name:                flaky\n") {
					t.Fatalf("retry --wait: %d\n%s%s", r.code, r.out, r.err)
				}
				expect(t, env, 0, ": second try", "logs", "flaky")
				r = braidCLI(t, env, "resubmit", "flaky", "--wait")
				skipIfUnimplemented(t, r)
				if r.code != 0 || !strings.Contains(r.out, "Name:                flaky-") || !strings.Contains(r.out, " Succeeded at ") {
					t.Fatalf("resubmit --wait: %d\n%s%s", r.code, r.out, r.err)
				}
				expect(t, env, 0, "flaky-", "list", "--resubmitted", "-o", "name")
			})
		})
	}
}
