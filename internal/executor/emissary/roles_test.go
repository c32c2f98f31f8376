package emissary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func readMarker(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(marker(dir, name))
	if err != nil {
		t.Fatalf("marker of %s: %v", name, err)
	}
	return strings.TrimSpace(string(data))
}

// TestSidecar: a sidecar runs until the markers of the containers it
// outlives are all there; a stop by the emissary is a success even when the
// child ignores SIGTERM or exits non-zero on it; a sidecar that ends by
// itself reports its exit code.
func TestSidecar(t *testing.T) {
	tests := []struct {
		name  string
		argv  string
		stop  bool // write the markers
		code  int
		phase v1alpha1.NodePhase
		msg   string
	}{
		{name: "stopped", argv: `trap 'exit 5' TERM; echo ready; while :; do sleep 0.05; done`, stop: true,
			code: 0, phase: v1alpha1.NodeSucceeded, msg: MsgSidecarStopped},
		{name: "ignores SIGTERM", argv: `trap '' TERM; echo ready; while :; do sleep 0.05; done`, stop: true,
			code: 0, phase: v1alpha1.NodeSucceeded, msg: MsgSidecarStopped},
		{name: "ends by itself", argv: `echo ready; exit 3`,
			code: 3, phase: v1alpha1.NodeFailed, msg: "db: Error (exit code 3)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctr := t.TempDir()
			start := time.Now()
			cmd, term, out := startEmissary(t, `{name: t, container: {image: busybox}}`,
				[]string{EnvRole + "=" + RoleSidecar, EnvContainerName + "=db", EnvStopAfter + "=a, main", EnvCtrDir + "=" + ctr},
				"sh", "-c", tc.argv)
			waitOutput(t, out, "ready")
			if tc.stop { // that it waits for both: TestAllMarkers
				if err := writeMarker(ctr, "main", "0"); err != nil {
					t.Fatal(err)
				}
				if err := writeMarker(ctr, "a", "1"); err != nil {
					t.Fatal(err)
				}
			}
			r := finishEmissary(t, cmd, term, out)
			if r.code != tc.code || r.msg.FinalPhase() != tc.phase || r.msg.Message != tc.msg {
				t.Fatalf("exit %d phase %s message %q, want %d %s %q (output %q)", r.code, r.msg.FinalPhase(), r.msg.Message, tc.code, tc.phase, tc.msg, r.out)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if _, err := os.Stat(marker(ctr, "db")); err == nil {
				t.Error("a sidecar wrote a marker")
			}
		})
	}
}

// TestAllMarkers: a sidecar stops only once every container it outlives
// has written its marker, whether it succeeded or not.
func TestAllMarkers(t *testing.T) {
	ctr := t.TempDir()
	names := []string{"a", "main"}
	if allMarkers(ctr, names) {
		t.Fatal("done with no marker")
	}
	if err := writeMarker(ctr, "main", "0"); err != nil {
		t.Fatal(err)
	}
	if allMarkers(ctr, names) {
		t.Fatal("done with main's marker only")
	}
	if err := writeMarker(ctr, "a", "1"); err != nil {
		t.Fatal(err)
	}
	if !allMarkers(ctr, names) {
		t.Fatal("not done with both markers")
	}
}

const setTemplate = `
name: set
containerSet:
  retryStrategy: {retries: 2, duration: 10ms}
  containers:
  - {name: a, image: busybox}
  - {name: b, image: busybox, dependencies: [a]}
  - {name: main, image: busybox, dependencies: [b]}
outputs: {parameters: [{name: p, valueFrom: {path: p.txt}}]}
`

func setEnv(ctr, name string) []string {
	return []string{EnvRole + "=" + RoleContainer, EnvContainerName + "=" + name, EnvCtrDir + "=" + ctr}
}

// TestContainerSet: b waits for a's marker and reads what a wrote; a
// failed dependency skips its dependents (exit 0, Omitted, marker
// "skipped"), transitively; a failing container is retried in place.
func TestContainerSet(t *testing.T) {
	t.Run("dependency order", func(t *testing.T) {
		ctr, shared := t.TempDir(), t.TempDir()
		data := filepath.Join(shared, "data")
		// b, started first, checks itself that a's marker is there.
		b, bTerm, bOut := startEmissary(t, setTemplate, setEnv(ctr, "b"), "sh", "-c",
			"test -f "+marker(ctr, "a")+" || { echo b ran before a; exit 9; }; cat "+data)
		a := runEmissary(t, setTemplate, setEnv(ctr, "a"), "sh", "-c", "echo from-a > "+data)
		if a.code != 0 || a.msg.FinalPhase() != v1alpha1.NodeSucceeded || a.msg.Outputs != nil || readMarker(t, ctr, "a") != "0" {
			t.Fatalf("a: exit %d %+v marker %q", a.code, a.msg, readMarker(t, ctr, "a"))
		}
		rb := finishEmissary(t, b, bTerm, bOut)
		if rb.code != 0 || !strings.Contains(rb.out, "from-a") || readMarker(t, ctr, "b") != "0" {
			t.Fatalf("b: exit %d output %q", rb.code, rb.out)
		}
		m := runEmissary(t, setTemplate, setEnv(ctr, "main"), "sh", "-c", "echo -n v > p.txt")
		if m.code != 0 || m.msg.Outputs == nil || len(m.msg.Outputs.Parameters) != 1 || m.msg.Outputs.Parameters[0].Value.String() != "v" {
			t.Fatalf("main: exit %d %+v", m.code, m.msg)
		}
	})
	t.Run("failed dependency", func(t *testing.T) {
		ctr := t.TempDir()
		a := runEmissary(t, setTemplate, setEnv(ctr, "a"), "sh", "-c", "exit 2")
		if a.code != 2 || a.msg.FinalPhase() != v1alpha1.NodeFailed || a.msg.Message != "a: Error (exit code 2)" || readMarker(t, ctr, "a") != "2" {
			t.Fatalf("a: exit %d %+v", a.code, a.msg)
		}
		for _, name := range []string{"b", "main"} {
			r := runEmissary(t, setTemplate, setEnv(ctr, name), "sh", "-c", "echo ran")
			if r.code != 0 || r.msg.FinalPhase() != v1alpha1.NodeOmitted || strings.Contains(r.out, "ran") ||
				!strings.Contains(r.msg.Message, "skipped") || readMarker(t, ctr, name) != MarkerSkipped {
				t.Fatalf("%s: exit %d %+v output %q", name, r.code, r.msg, r.out)
			}
		}
	})
	t.Run("retried in place", func(t *testing.T) {
		for _, tc := range []struct {
			succeedAt string
			code      int
			count     string
		}{{"3", 0, "3"}, {"4", 1, "3"}} {
			ctr, shared := t.TempDir(), t.TempDir()
			count := filepath.Join(shared, "count")
			script := `n=$(cat ` + count + ` 2>/dev/null || echo 0); n=$((n+1)); echo $n > ` + count + `; [ $n -ge ` + tc.succeedAt + ` ]`
			r := runEmissary(t, setTemplate, setEnv(ctr, "a"), "sh", "-c", script)
			got, _ := os.ReadFile(count)
			if r.code != tc.code || strings.TrimSpace(string(got)) != tc.count {
				t.Fatalf("succeed at %s: exit %d after %q attempts (%+v)", tc.succeedAt, r.code, got, r.msg)
			}
		}
	})
	t.Run("unknown container", func(t *testing.T) {
		ctr := t.TempDir()
		r := runEmissary(t, setTemplate, setEnv(ctr, "zz"), "true")
		if r.code != 1 || r.msg.FinalPhase() != v1alpha1.NodeError || !strings.Contains(r.msg.Message, `"zz" is not in`) || readMarker(t, ctr, "zz") != "1" {
			t.Fatalf("exit %d %+v", r.code, r.msg)
		}
	})
}
