package emissary

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The test binary runs as the emissary when asked, so that tests run it as
// a real process (signals, exit codes).
func TestMain(m *testing.M) {
	if os.Getenv("BRAID_TEST_EMISSARY") == "1" {
		sigs := make(chan os.Signal, 4)
		notify(sigs)
		os.Exit(Run(context.Background(), Options{Argv: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
			Signals: sigs, KillGrace: time.Second}))
	}
	os.Exit(m.Run())
}

type emissaryRun struct {
	code int
	msg  *Message
	raw  string
	out  string
}

// startEmissary starts the test binary as the emissary in a temp dir.
func startEmissary(t *testing.T, tmpl string, env []string, argv ...string) (*exec.Cmd, string, *output) {
	t.Helper()
	dir := t.TempDir()
	term := filepath.Join(dir, "termination-log")
	var tpl v1alpha1.Template
	if err := yamlToTemplate(tmpl, &tpl); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(&tpl)
	cmd := exec.Command(os.Args[0], argv...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BRAID_TEST_EMISSARY=1", EnvTerminationLog+"="+term,
		EnvStaging+"="+filepath.Join(dir, "staging"), EnvTemplate+"="+string(js))
	cmd.Env = append(cmd.Env, env...)
	out := &output{}
	cmd.Stdout = out
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, term, out
}

func finishEmissary(t *testing.T, cmd *exec.Cmd, term string, out *output) emissaryRun {
	t.Helper()
	_ = cmd.Wait()
	r := emissaryRun{code: cmd.ProcessState.ExitCode(), out: out.String()}
	data, err := os.ReadFile(term)
	if err != nil {
		t.Fatalf("termination log: %v (output %q)", err, r.out)
	}
	r.raw = string(data)
	if len(data) > MaxMessage {
		t.Errorf("termination message is %d bytes", len(data))
	}
	if r.msg, err = ParseMessage(r.raw); err != nil {
		t.Fatal(err)
	}
	return r
}

// output is what a child writes to its stdout and stderr, safe to read
// while it runs.
type output struct {
	mu sync.Mutex
	b  strings.Builder
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

func (o *output) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Len()
}

// waitOutput waits until out holds s.
func waitOutput(t *testing.T, out *output, s string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("%q in the output", s), func() error {
		if got := out.String(); !strings.Contains(got, s) {
			return fmt.Errorf("output %q", got)
		}
		return nil
	})
}

func runEmissary(t *testing.T, tmpl string, env []string, argv ...string) emissaryRun {
	cmd, term, out := startEmissary(t, tmpl, env, argv...)
	return finishEmissary(t, cmd, term, out)
}

func TestEmissary(t *testing.T) {
	tests := []struct {
		name   string
		tmpl   string
		env    []string
		argv   []string
		code   int
		phase  v1alpha1.NodePhase
		msg    string
		result *string
		params map[string]string
		out    string
	}{{
		name: "outputs and result",
		tmpl: `{name: t, container: {image: busybox}, outputs: {parameters: [{name: p, valueFrom: {path: out.txt}}, {name: d, valueFrom: {path: /nope, default: dflt}}]}}`,
		env:  []string{EnvIncludeResult + "=true"},
		argv: []string{"sh", "-c", "printf 'v\\n' > out.txt; echo hello; echo err >&2"},
		code: 0, phase: v1alpha1.NodeSucceeded, result: ptr("hello"), params: map[string]string{"p": "v", "d": "dflt"}, out: "hello\n|err\n",
	}, {
		name: "no result unless asked",
		tmpl: `{name: t, container: {image: busybox}}`,
		argv: []string{"echo", "hello"},
		code: 0, phase: v1alpha1.NodeSucceeded,
	}, {
		name: "exit 3",
		tmpl: `{name: t, container: {image: busybox}}`,
		argv: []string{"sh", "-c", "exit 3"},
		code: 3, phase: v1alpha1.NodeFailed, msg: "main: Error (exit code 3)",
	}, {
		name: "missing output parameter",
		tmpl: `{name: t, container: {image: busybox}, outputs: {parameters: [{name: p, valueFrom: {path: /no/such}}]}}`,
		argv: []string{"true"},
		code: 0, phase: v1alpha1.NodeError, msg: `output parameter "p": open /no/such: no such file or directory`,
	}, {
		name: "script staged and appended",
		tmpl: `{name: t, script: {image: busybox, command: [sh], source: "echo from-script $0"}}`,
		argv: []string{"sh"},
		code: 0, phase: v1alpha1.NodeSucceeded, out: "from-script ",
	}, {
		name: "command not found",
		tmpl: `{name: t, container: {image: busybox}}`,
		argv: []string{"/no/such/binary"},
		code: 1, phase: v1alpha1.NodeError, msg: "cannot start /no/such/binary: fork/exec /no/such/binary: no such file or directory",
	}, {
		name: "active deadline",
		tmpl: `{name: t, container: {image: busybox}}`,
		env:  []string{EnvActiveDeadline + "=300ms"},
		argv: []string{"sleep", "30"},
		code: 128 + 15, phase: v1alpha1.NodeFailed, msg: MsgActiveDeadline,
	}, {
		name: "absolute deadline passed",
		tmpl: `{name: t, container: {image: busybox}}`,
		env:  []string{EnvDeadline + "=2001-01-01T00:00:00Z"},
		argv: []string{"true"},
		code: 1, phase: v1alpha1.NodeFailed, msg: MsgDeadline,
	}, {
		name: "result too big without a repository",
		tmpl: `{name: t, container: {image: busybox}}`,
		env:  []string{EnvIncludeResult + "=true"},
		argv: []string{"sh", "-c", "i=0; while [ $i -lt 600 ]; do echo 0123456789; i=$((i+1)); done"},
		code: 0, phase: v1alpha1.NodeError, msg: "more than the 4096 bytes of a termination message, and no artifact repository",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := runEmissary(t, tc.tmpl, tc.env, tc.argv...)
			if r.code != tc.code || r.msg.FinalPhase() != tc.phase || !strings.Contains(r.msg.Message, tc.msg) {
				t.Fatalf("exit %d phase %s message %q, want %d %s %q (output %q)", r.code, r.msg.FinalPhase(), r.msg.Message, tc.code, tc.phase, tc.msg, r.out)
			}
			if tc.msg == "" && r.msg.Message != "" {
				t.Errorf("message %q", r.msg.Message)
			}
			if strings.Contains(tc.name, "deadline") && time.Since(start) > 5*time.Second {
				t.Errorf("deadline took %v", time.Since(start))
			}
			var got *string
			if r.msg.Outputs != nil {
				got = r.msg.Outputs.Result
				if r.msg.ExitCode == nil || *r.msg.Outputs.ExitCode != itoa(int(*r.msg.ExitCode)) {
					t.Errorf("exit code outputs %+v", r.msg.Outputs)
				}
			}
			if (got == nil) != (tc.result == nil) || got != nil && *got != *tc.result {
				t.Errorf("result = %v, want %v", deref(got), deref(tc.result))
			}
			for name, want := range tc.params {
				found := false
				for _, p := range r.msg.Outputs.Parameters {
					if p.Name == name && p.Value != nil && p.Value.String() == want {
						found = true
					}
				}
				if !found {
					t.Errorf("parameter %s: got %+v", name, r.msg.Outputs.Parameters)
				}
			}
			// Stdout and stderr are separate pipes, so their order is not
			// fixed: each "|"-separated part must appear.
			for _, part := range strings.Split(tc.out, "|") {
				if part != "" && !strings.Contains(r.out, part) {
					t.Errorf("output %q lacks %q", r.out, part)
				}
			}
		})
	}
}

// TestEmissarySignal: SIGTERM to the emissary reaches the child, whose exit
// code the emissary reports and exits with.
func TestEmissarySignal(t *testing.T) {
	cmd, term, out := startEmissary(t, `{name: t, container: {image: busybox}}`, nil,
		"sh", "-c", `trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 0.05; done`)
	waitOutput(t, out, "ready")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := finishEmissary(t, cmd, term, out)
	if r.code != 7 || r.msg.FinalPhase() != v1alpha1.NodeFailed || !strings.Contains(r.out, "got-term") {
		t.Fatalf("exit %d phase %s output %q", r.code, r.msg.FinalPhase(), r.out)
	}
}

// TestFitOffloads: a result over MaxMessage is saved whole in the
// repository, and the message points to it and stays within the limit.
func TestFitOffloads(t *testing.T) {
	root := t.TempDir()
	d := &artifact.Drivers{File: file.New(root)}
	s := &setup{staging: t.TempDir(), art: step.ArtifactPlan{Repository: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}}, Key: "wf/pod"}}
	code := int32(0)
	big := strings.Repeat("x", 10000)
	m := &Message{Phase: v1alpha1.NodeSucceeded, ExitCode: &code, Outputs: &v1alpha1.Outputs{Result: &big, ExitCode: ptr("0")}}
	data := fit(context.Background(), Options{Drivers: d}, s, m)
	if len(data) > MaxMessage {
		t.Fatalf("%d bytes", len(data))
	}
	slim, err := ParseMessage(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if slim.Full == nil || slim.Full.File == nil || slim.Full.File.Key != "wf/pod/"+ResultObject || slim.FinalPhase() != v1alpha1.NodeSucceeded ||
		slim.Outputs.Result != nil {
		t.Fatalf("slim = %s", data)
	}
	full, err := os.ReadFile(filepath.Join(root, "wf/pod", ResultObject))
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseMessage(string(full))
	if err != nil || *back.Outputs.Result != big {
		t.Fatalf("full result: %v", err)
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func itoa(n int) string { return strconv.Itoa(n) }

// The kill grace comes from BRAID_KILL_GRACE when the options set none.
func TestKillGraceFromEnv(t *testing.T) {
	env := map[string]string{EnvKillGrace: "3s"}
	o := withDefaults(Options{Getenv: func(k string) string { return env[k] }})
	if o.KillGrace != 3*time.Second {
		t.Errorf("KillGrace %v, want 3s", o.KillGrace)
	}
	env[EnvKillGrace] = "nonsense"
	if o := withDefaults(Options{Getenv: func(k string) string { return env[k] }}); o.KillGrace != 10*time.Second {
		t.Errorf("KillGrace %v with a bad value, want the default 10s", o.KillGrace)
	}
}
