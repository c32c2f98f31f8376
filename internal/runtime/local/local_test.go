package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// TestRun runs one step per case and checks its final event and log.
func TestRun(t *testing.T) {
	tmp := t.TempDir()
	seqOut, err := exec.Command("seq", "1", "100000").Output()
	if err != nil {
		t.Fatal(err)
	}
	want256K := string(bytes.TrimSuffix(seqOut, []byte("\n")))
	want256K = want256K[len(want256K)-executor.MaxResult:]
	notExec := filepath.Join(tmp, "not-executable")
	if err := os.WriteFile(notExec, []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	type want struct {
		phase    v1alpha1.NodePhase
		message  string // exact; "~text" means contains
		exitCode *int   // nil: not checked
		result   *string
		params   map[string]string // name -> value ("<nil>" for none)
		log      string            // "~text" means contains
	}
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	cases := []struct {
		name          string
		tmpl          string
		includeResult bool
		env           map[string]string
		deadline      time.Time
		want          want
	}{{
		name: "success",
		tmpl: `{name: a, container: {image: busybox, command: [sh, -c, "echo hello"]}}`,
		want: want{phase: v1alpha1.NodeSucceeded, exitCode: num(0), log: "hello\n"},
	}, {
		name:          "result trims exactly one newline",
		tmpl:          `{name: a, container: {image: busybox, command: [sh, -c, "printf 'a\\nb\\n\\n'"]}}`,
		includeResult: true,
		want:          want{phase: v1alpha1.NodeSucceeded, result: str("a\nb\n"), log: "a\nb\n\n"},
	}, {
		name:          "result is stdout only",
		tmpl:          `{name: a, container: {image: busybox, command: [sh, -c, "echo out; echo err >&2"]}}`,
		includeResult: true,
		want:          want{phase: v1alpha1.NodeSucceeded, result: str("out"), log: "~err\n"},
	}, {
		name:          "result keeps the last 256 KiB",
		tmpl:          `{name: a, container: {image: busybox, command: [seq, "1", "100000"]}}`,
		includeResult: true,
		want:          want{phase: v1alpha1.NodeSucceeded, result: &want256K},
	}, {
		name: "no result unless asked",
		tmpl: `{name: a, container: {image: busybox, command: [echo, hi]}}`,
		want: want{phase: v1alpha1.NodeSucceeded, result: nil, log: "hi\n"},
	}, {
		name: "failure",
		tmpl: `{name: a, container: {image: busybox, command: [sh, -c, "echo bad >&2; exit 3"]}}`,
		want: want{phase: v1alpha1.NodeFailed, message: "main: Error (exit code 3)", exitCode: num(3), log: "bad\n"},
	}, {
		name: "killed by its own signal",
		tmpl: `{name: a, container: {image: busybox, command: [sh, -c, "kill -KILL $$$$"]}}`,
		want: want{phase: v1alpha1.NodeFailed, message: "main: Error (exit code 137)", exitCode: num(137)},
	}, {
		name: "env, expansion and run env",
		tmpl: `{name: a, container: {image: busybox, command: [sh, -c, "echo $A-$B-$ARGO_X-$(A)"],
		        env: [{name: A, value: one}, {name: B, value: "$(A)two"}]}}`,
		env:           map[string]string{"ARGO_X": "x"},
		includeResult: true,
		want:          want{phase: v1alpha1.NodeSucceeded, result: str("one-onetwo-x-one")},
	}, {
		name:          "workingDir is created",
		tmpl:          fmt.Sprintf(`{name: a, container: {image: busybox, command: [pwd], workingDir: %q}}`, filepath.Join(tmp, "wd/a/b")),
		includeResult: true,
		want:          want{phase: v1alpha1.NodeSucceeded, result: str(filepath.Join(tmp, "wd/a/b"))},
	}, {
		name:          "default working directory",
		tmpl:          `{name: a, container: {image: busybox, command: [sh, -c, "ls main.log"]}}`,
		includeResult: true,
		want:          want{phase: v1alpha1.NodeSucceeded, result: str("main.log")},
	}, {
		name: "script with sh",
		tmpl: `{name: a, script: {image: alpine, command: [sh], args: [-e],
		        source: "echo \"$0\" | grep -q '/script$'\necho from script\n"}}`,
		includeResult: true,
		want:          want{phase: v1alpha1.NodeSucceeded, result: str("from script")},
	}, {
		name: "script with python",
		tmpl: `{name: a, script: {image: "python:alpine3.6", command: [python],
		        source: "import sys\nprint(sum([1, 2, 3]))\nprint(sys.argv[0].endswith('/script'))\n"}}`,
		includeResult: true,
		want:          want{phase: v1alpha1.NodeSucceeded, result: str("6\nTrue")},
	}, {
		name: "script failure",
		tmpl: `{name: a, script: {image: "python:alpine3.6", command: [python3], source: "import sys\nsys.exit(4)\n"}}`,
		want: want{phase: v1alpha1.NodeFailed, message: "main: Error (exit code 4)", exitCode: num(4)},
	}, {
		name: "argosay v2 entrypoint",
		tmpl: `{name: a, container: {image: "argoproj/argosay:v2", args: [echo, "hello from argosay"]}}`,
		want: want{phase: v1alpha1.NodeSucceeded, log: "hello from argosay\n"},
	}, {
		name: "argosay v2 without args",
		tmpl: `{name: a, container: {image: "argoproj/argosay:v2"}}`,
		want: want{phase: v1alpha1.NodeSucceeded, log: "hello argo\n"},
	}, {
		name: "argosay v2 fails on one string",
		tmpl: `{name: a, container: {image: "argoproj/argosay:v2", args: ["exit 1"]}}`,
		want: want{phase: v1alpha1.NodeFailed, message: "main: Error (exit code 1)"},
	}, {
		name: "argosay v2 exit code",
		tmpl: `{name: a, container: {image: "argoproj/argosay:v2", args: [exit, "5"]}}`,
		want: want{phase: v1alpha1.NodeFailed, message: "main: Error (exit code 5)", exitCode: num(5)},
	}, {
		name: "whalesay cowsay",
		tmpl: `{name: a, container: {image: docker/whalesay, command: [cowsay], args: ["hello world"]}}`,
		want: want{phase: v1alpha1.NodeSucceeded, log: "~< hello world >"},
	}, {
		name: "cowsay from a shell in argosay:v1",
		tmpl: `{name: a, container: {image: "argoproj/argosay:v1", command: [sh, -c], args: ["cowsay hello"]}}`,
		want: want{phase: v1alpha1.NodeSucceeded, log: "~< hello >"},
	}, {
		name: "output parameters",
		tmpl: fmt.Sprintf(`{name: a,
		  container: {image: busybox, command: [sh, -c, "echo -n plain > %[1]s/p1; printf 'nl\\n\\n' > %[1]s/p2; echo rel > rel.txt"]},
		  outputs: {parameters: [
		    {name: p1, valueFrom: {path: %[1]s/p1}},
		    {name: p2, valueFrom: {path: %[1]s/p2}},
		    {name: p3, valueFrom: {path: %[1]s/missing, default: dflt}},
		    {name: p4, valueFrom: {path: rel.txt}},
		    {name: p5, globalName: g, valueFrom: {path: %[1]s/p1}}]}}`, tmp),
		want: want{phase: v1alpha1.NodeSucceeded, params: map[string]string{"p1": "plain", "p2": "nl\n", "p3": "dflt", "p4": "rel", "p5": "plain"}},
	}, {
		name: "missing output parameter file",
		tmpl: fmt.Sprintf(`{name: a, container: {image: busybox, command: ["true"]},
		  outputs: {parameters: [{name: p, valueFrom: {path: %s/nope}}]}}`, tmp),
		want: want{phase: v1alpha1.NodeError, message: "~output parameter \"p\": open " + tmp + "/nope: no such file or directory", exitCode: num(0)},
	}, {
		name: "a failed step keeps its failure over a missing parameter",
		tmpl: fmt.Sprintf(`{name: a, container: {image: busybox, command: ["false"]},
		  outputs: {parameters: [{name: p, valueFrom: {path: %s/nope}}]}}`, tmp),
		want: want{phase: v1alpha1.NodeFailed, message: "main: Error (exit code 1)"},
	}, {
		name: "output artifacts are left out without artifact drivers",
		tmpl: `{name: a, container: {image: busybox, command: ["true"]},
		  outputs: {artifacts: [{name: art, path: /tmp/nothing-here}]}}`,
		want: want{phase: v1alpha1.NodeSucceeded},
	}, {
		name: "raw input artifact",
		tmpl: fmt.Sprintf(`{name: a, container: {image: busybox, command: [cat, %[1]s/in/raw.txt]},
		  inputs: {artifacts: [{name: r, path: %[1]s/in/raw.txt, raw: {data: "raw data"}}]}}`, tmp),
		includeResult: true,
		want:          want{phase: v1alpha1.NodeSucceeded, result: str("raw data")},
	}, {
		name: "s3 input artifact",
		tmpl: `{name: a, container: {image: busybox, command: ["true"]},
		  inputs: {artifacts: [{name: r, path: /tmp/x, s3: {key: k}}]}}`,
		want: want{phase: v1alpha1.NodeError, message: `input artifact "r" (s3 k): artifact location kind "s3" is not supported`},
	}, {
		name: "command not found",
		tmpl: `{name: a, container: {image: bar, command: [no-such-command-here]}}`,
		want: want{phase: v1alpha1.NodeError, message: `executable file not found: "no-such-command-here" (image "bar" is not in the image table; add it to the images of the config file)`},
	}, {
		name: "unknown image without command",
		tmpl: `{name: a, container: {image: myorg/tool, args: [x]}}`,
		want: want{phase: v1alpha1.NodeError, message: `~image "myorg/tool" is not in the image table`},
	}, {
		name: "not executable",
		tmpl: fmt.Sprintf(`{name: a, container: {image: busybox, command: [%s]}}`, notExec),
		want: want{phase: v1alpha1.NodeError, message: `~executable file not found: "` + notExec + `": permission denied`},
	}, {
		name: "secret env",
		tmpl: `{name: a, container: {image: busybox, command: ["true"],
		  env: [{name: S, valueFrom: {secretKeyRef: {name: my-secret, key: password}}}]}}`,
		want: want{phase: v1alpha1.NodeError, message: `env "S" refers to key "password" of secret "my-secret", and the local runtime cannot read secrets`},
	}, {
		name: "pod name from the downward API",
		tmpl: `{name: a, container: {image: busybox, command: [sh, -c, "echo $P"],
		  env: [{name: P, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}]}}`,
		includeResult: true,
		want:          want{phase: v1alpha1.NodeSucceeded, result: str("argo")},
	}, {
		name: "resource template",
		tmpl: `{name: a, resource: {action: create, manifest: "{}"}}`,
		want: want{phase: v1alpha1.NodeError, message: "the local runtime cannot run resource templates yet"},
	}, {
		name: "suspend template",
		tmpl: `{name: a, suspend: {}}`,
		want: want{phase: v1alpha1.NodeError, message: "the local runtime cannot run suspend templates yet"},
	}, {
		name: "http template",
		tmpl: `{name: a, http: {url: "http://example.com"}}`,
		want: want{phase: v1alpha1.NodeError, message: "the local runtime cannot run http templates yet"},
	}, {
		name: "containerSet template",
		tmpl: `{name: a, containerSet: {containers: [{name: c, image: busybox}]}}`,
		want: want{phase: v1alpha1.NodeError, message: "the local runtime cannot run containerSet templates yet"},
	}, {
		name: "sidecars",
		tmpl: `{name: a, container: {image: busybox, command: ["true"]}, sidecars: [{name: s, image: nginx}]}`,
		want: want{phase: v1alpha1.NodeError, message: "the local runtime cannot run sidecars yet"},
	}, {
		name:     "deadline already passed",
		tmpl:     `{name: a, container: {image: busybox, command: ["true"]}}`,
		deadline: time.Now().Add(-time.Second),
		want:     want{phase: v1alpha1.NodeFailed, message: MsgDeadline},
	}}
	rt := newRuntime(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := newRun(tmpl(t, tc.tmpl))
			run.IncludeResult = tc.includeResult
			run.Env = tc.env
			run.Deadline = tc.deadline
			evs := runToEnd(t, rt, run)
			ev := final(evs)
			if ev.Phase != tc.want.phase {
				t.Fatalf("phase = %s, want %s (message %q, log %q)", ev.Phase, tc.want.phase, ev.Message, readLog(t, rt, run.ID))
			}
			checkText(t, "message", ev.Message, tc.want.message)
			if ev.RunID != run.ID || ev.NodeID != run.NodeID {
				t.Errorf("event names %s/%s, want %s/%s", ev.RunID, ev.NodeID, run.ID, run.NodeID)
			}
			if tc.want.exitCode != nil {
				if ev.ExitCode == nil || int(*ev.ExitCode) != *tc.want.exitCode {
					t.Errorf("ExitCode = %v, want %d", ev.ExitCode, *tc.want.exitCode)
				}
				if ev.Outputs == nil || ev.Outputs.ExitCode == nil || *ev.Outputs.ExitCode != strconv.Itoa(*tc.want.exitCode) {
					t.Errorf("Outputs.ExitCode = %v, want %d", ev.Outputs, *tc.want.exitCode)
				}
			}
			var gotResult *string
			if ev.Outputs != nil {
				gotResult = ev.Outputs.Result
			}
			if diff := cmp.Diff(tc.want.result, gotResult); tc.want.result != nil || gotResult != nil {
				if diff != "" {
					if len(diff) > 2000 {
						diff = diff[:2000]
					}
					t.Errorf("result (-want +got):\n%s", diff)
				}
			}
			if tc.want.params != nil {
				got := map[string]string{}
				for _, p := range ev.Outputs.Parameters {
					got[p.Name] = "<nil>"
					if p.Value != nil {
						got[p.Name] = p.Value.String()
					}
				}
				if diff := cmp.Diff(tc.want.params, got); diff != "" {
					t.Errorf("parameters (-want +got):\n%s", diff)
				}
			}
			if tc.want.log != "" {
				checkText(t, "log", readLog(t, rt, run.ID), tc.want.log)
			}
			// Running comes first, and only for a process that started.
			if ev.ExitCode != nil && (len(evs) != 2 || evs[0].Phase != v1alpha1.NodeRunning) {
				t.Errorf("events = %+v, want Running then the final one", evs)
			}
			if ev.ExitCode == nil && len(evs) != 1 {
				t.Errorf("events = %+v, want only the final one", evs)
			}
			st, ok, err := rt.Status(context.Background(), run.ID)
			if err != nil || !ok || st.Phase != ev.Phase {
				t.Errorf("Status = %v %v %v, want phase %s", st.Phase, ok, err, ev.Phase)
			}
		})
	}
}

func checkText(t *testing.T, what, got, want string) {
	t.Helper()
	if sub, ok := strings.CutPrefix(want, "~"); ok {
		if !strings.Contains(got, sub) {
			t.Errorf("%s = %q, want it to contain %q", what, got, sub)
		}
		return
	}
	if got != want {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// TestDeadlines kills a step and the child it started, by each deadline,
// including one that ignores SIGTERM.
func TestDeadlines(t *testing.T) {
	cases := []struct {
		name      string
		script    string
		active    time.Duration
		deadline  time.Duration // from now
		want      string
		killAfter time.Duration // at least this long before the end
	}{
		{name: "activeDeadline", script: "sleep 60 & echo $! > child; sleep 60", active: 300 * time.Millisecond, want: MsgActiveDeadline},
		{name: "deadline", script: "sleep 60 & echo $! > child; sleep 60", deadline: 300 * time.Millisecond, want: MsgDeadline},
		{name: "the earlier wins", script: "sleep 60 & echo $! > child; sleep 60", active: 5 * time.Second, deadline: 300 * time.Millisecond, want: MsgDeadline},
		{name: "SIGTERM ignored", script: "trap '' TERM; sleep 60 & echo $! > child; while :; do sleep 0.05; done", active: 200 * time.Millisecond, want: MsgActiveDeadline, killAfter: 300 * time.Millisecond},
	}
	rt := newRuntime(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := newRun(tmpl(t, fmt.Sprintf(`{name: a, container: {image: busybox, command: [sh, -c, %q]}}`, tc.script)))
			run.ActiveDeadline = tc.active
			if tc.deadline > 0 {
				run.Deadline = time.Now().Add(tc.deadline)
			}
			start := time.Now()
			ev := final(runToEnd(t, rt, run))
			took := time.Since(start)
			if ev.Phase != v1alpha1.NodeFailed || ev.Message != tc.want {
				t.Fatalf("final = %s %q, want Failed %q", ev.Phase, ev.Message, tc.want)
			}
			if took > 5*time.Second || took < tc.killAfter {
				t.Errorf("took %v", took)
			}
			checkChildGone(t, rt, run)
		})
	}
}

// checkChildGone checks that the pid in the step's work/child has exited.
func checkChildGone(t *testing.T, rt *harness, run runtime.Run) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(rt.stepDir(run), "child"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, 2*time.Second)
}

func TestKill(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	run := newRun(tmpl(t, `{name: a, container: {image: busybox, command: [sh, -c, "sleep 60 & echo $! > child; sleep 60"]}}`))
	if err := rt.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	// Wait for Running, and for the child to exist.
	first := <-rt.events(run.ID)
	if first.Phase != v1alpha1.NodeRunning {
		t.Fatalf("first event %+v", first)
	}
	childFile := filepath.Join(rt.stepDir(run), "child")
	testutil.Until(t, 5*time.Second, "the child started", func() bool {
		data, _ := os.ReadFile(childFile)
		return len(data) > 0 && bytes.HasSuffix(data, []byte("\n"))
	})
	if err := rt.Kill(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	ev := final(waitFinal(t, rt, run.ID, 10*time.Second))
	if ev.Phase != v1alpha1.NodeFailed || ev.Message != MsgKilled {
		t.Fatalf("final = %s %q", ev.Phase, ev.Message)
	}
	if ev.ExitCode == nil || *ev.ExitCode != 128+15 {
		t.Errorf("exit code %v, want 143", ev.ExitCode)
	}
	checkChildGone(t, rt, run)
	// Killing a finished or an unknown run does nothing.
	if err := rt.Kill(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if err := rt.Kill(ctx, "nope"); err != nil {
		t.Fatal(err)
	}
	rt.quiet(t, run.ID)
}

// TestStartIdempotent starts a run twice in one Runtime, then again in a
// new Runtime on the same DataDir.
func TestStartIdempotent(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	rt := newRuntime(t, func(c *Config) { c.DataDir = dir })
	run := newRun(tmpl(t, `{name: a, container: {image: busybox, command: [sh, -c, "echo once >> ../count; sleep 0.2"]}}`))
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := rt.Start(ctx, run); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	evs := waitFinal(t, rt, run.ID, 10*time.Second)
	if len(evs) != 2 || final(evs).Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("events %+v", evs)
	}
	if err := rt.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	rt.quiet(t, run.ID)
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}

	rt2 := newRuntime(t, func(c *Config) { c.DataDir = dir })
	if err := rt2.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	st, ok, err := rt2.Status(ctx, run.ID)
	if err != nil || !ok || st.Phase != v1alpha1.NodeSucceeded || st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("Status after reopen = %+v %v %v", st, ok, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "runs", "argo", "wf", "count"))
	if err != nil || string(data) != "once\n" {
		t.Fatalf("the step ran %q times", data)
	}
	rt2.quiet(t, run.ID)
}

func TestStatus(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	rt := newRuntime(t, func(c *Config) { c.DataDir = dir; c.MaxCachedRuns = 1 })
	if _, ok, err := rt.Status(ctx, "unknown"); ok || err != nil {
		t.Fatalf("Status of an unknown run: %v %v", ok, err)
	}
	long := newRun(tmpl(t, `{name: a, container: {image: busybox, command: [sleep, "60"]}}`))
	if err := rt.Start(ctx, long); err != nil {
		t.Fatal(err)
	}
	if ev := <-rt.events(long.ID); ev.Phase != v1alpha1.NodeRunning {
		t.Fatalf("got %+v", ev)
	}
	if st, ok, _ := rt.Status(ctx, long.ID); !ok || st.Phase != v1alpha1.NodeRunning {
		t.Fatalf("Status of a running step = %+v", st)
	}
	// Finished runs beyond MaxCachedRuns are read back from the index; a
	// big final event from result.json.
	var ids []string
	for range 3 {
		run := newRun(tmpl(t, `{name: a, container: {image: busybox, command: ["false"]}}`))
		runToEnd(t, rt, run)
		ids = append(ids, run.ID)
	}
	big := newRun(tmpl(t, `{name: a, container: {image: busybox, command: [seq, "10000"]}}`))
	big.IncludeResult = true
	bigResult := *final(runToEnd(t, rt, big)).Outputs.Result
	if len(bigResult) < 2*maxInlineResult {
		t.Fatalf("result of %d bytes", len(bigResult))
	}
	runToEnd(t, rt, newRun(tmpl(t, `{name: a, container: {image: busybox, command: ["true"]}}`))) // evicts big
	check := func(rt *harness) {
		t.Helper()
		for _, id := range ids {
			st, ok, err := rt.Status(ctx, id)
			if err != nil || !ok || st.Phase != v1alpha1.NodeFailed || st.Message != "main: Error (exit code 1)" || *st.ExitCode != 1 {
				t.Errorf("Status(%s) = %+v %v %v", id, st, ok, err)
			}
		}
		st, ok, _ := rt.Status(ctx, big.ID)
		if !ok || st.Phase != v1alpha1.NodeSucceeded || st.Outputs == nil || *st.Outputs.Result != bigResult {
			t.Errorf("Status of the big run = %v %v", st.Phase, ok)
		}
	}
	check(rt)

	// A second Runtime on the same DataDir, while the first still runs the
	// long step, finds that step lost (no final record).
	rt2, err := New(Config{DataDir: dir, Isolation: IsolationNone})
	if err != nil {
		t.Fatal(err)
	}
	st, ok, _ := rt2.Status(ctx, long.ID)
	if !ok || st.Phase != v1alpha1.NodeError || st.Message != MsgLost {
		t.Errorf("Status of a lost step = %+v", st)
	}
	rt2.Close()

	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	// A torn last record (a crash mid-append) is skipped, and appends after
	// it start on a line of their own.
	f, err := os.OpenFile(filepath.Join(dir, "runs", indexFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`E uid-x {"RunID":`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	rt3 := newRuntime(t, func(c *Config) { c.DataDir = dir })
	check(rt3)
	st, ok, _ = rt3.Status(ctx, long.ID)
	if !ok || st.Phase != v1alpha1.NodeFailed || st.Message != MsgClosed {
		t.Errorf("Status of the step stopped by Close = %+v", st)
	}
	after := newRun(tmpl(t, `{name: a, container: {image: busybox, command: ["true"]}}`))
	runToEnd(t, rt3, after)
	rt3.Close()
	rt4 := newRuntime(t, func(c *Config) { c.DataDir = dir })
	if st, ok, _ := rt4.Status(ctx, after.ID); !ok || st.Phase != v1alpha1.NodeSucceeded {
		t.Errorf("Status after a torn record = %+v %v", st, ok)
	}
	check(rt4)
}

// LogFiles opens a step's log by workflow and pod, while the step runs
// and after it, with or without a Runtime on the data directory.
func TestLogFiles(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	rt := newRuntime(t, func(c *Config) { c.DataDir = dir })
	logs := NewLogFiles(dir)
	read := func(t *testing.T, run runtime.Run) string {
		t.Helper()
		f, err := logs.Open(ctx, run.Namespace, run.Workflow, run.PodName)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer f.Close()
		data, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if _, err := logs.Open(ctx, "argo", "wf", "nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open of a step with no log: %v", err)
	}
	for _, includeResult := range []bool{false, true} {
		t.Run(fmt.Sprintf("includeResult=%v", includeResult), func(t *testing.T) {
			run := newRun(tmpl(t, `{name: a, container: {image: busybox, command: [sh, -c, "for i in 1 2 3; do echo $i; echo e$i >&2; sleep 0.1; done"]}}`))
			run.IncludeResult = includeResult
			runToEnd(t, rt, run)
			got := read(t, run)
			if len(strings.Fields(got)) != 6 || !strings.Contains(got, "1\n") || !strings.Contains(got, "e3\n") {
				t.Fatalf("log = %q", got)
			}
		})
	}

	// A running step's log is read as it grows.
	run := newRun(tmpl(t, `{name: a, container: {image: busybox, command: [sh, -c, "echo start; sleep 60"]}}`))
	if err := rt.Start(ctx, run); err != nil {
		t.Fatal(err)
	}
	testutil.Until(t, 10*time.Second, "the step printed", func() bool { return readLog(t, rt, run.ID) == "start\n" })
	if got := read(t, run); got != "start\n" {
		t.Fatalf("log of a running step = %q", got)
	}
	_ = rt.Kill(ctx, run.ID)
	waitFinal(t, rt, run.ID, 10*time.Second)
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}

	// Logs outlive the Runtime, and need none to be read.
	if got := read(t, run); got != "start\n" {
		t.Fatalf("log after Close = %q", got)
	}
	rt2 := newRuntime(t, func(c *Config) { c.DataDir = dir })
	if got := readLog(t, rt2, run.ID); got != "start\n" {
		t.Fatalf("log after reopening = %q", got)
	}
}

// TestManyConcurrent starts 500 steps at once and checks that every event
// arrives exactly once, Running before the final one.
func TestManyConcurrent(t *testing.T) {
	const n = 500
	rt := newRuntime(t)
	ctx := context.Background()
	runs := make([]runtime.Run, n)
	for i := range runs {
		code := i % 3 // 0 succeeds, others fail
		runs[i] = newRun(tmpl(t, fmt.Sprintf(`{name: a, container: {image: busybox, command: [sh, -c, "exit %d"]}}`, code)))
		runs[i].IncludeResult = i%2 == 0
	}
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := rt.Start(ctx, runs[i]); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i, run := range runs {
		want := []v1alpha1.NodePhase{v1alpha1.NodeRunning, v1alpha1.NodeSucceeded}
		if i%3 != 0 {
			want[1] = v1alpha1.NodeFailed
		}
		var got []v1alpha1.NodePhase
		for _, ev := range waitFinal(t, rt, run.ID, 60*time.Second) {
			got = append(got, ev.Phase)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("run %d events (-want +got):\n%s", i, diff)
		}
	}
	// Every step has ended and pushed all its events; a marker pushed
	// now comes out after them all.
	rt.wg.Wait()
	rt.Runtime.events.Push(runtime.StepEvent{RunID: "marker"})
	select {
	case <-rt.events("marker"):
	case <-time.After(10 * time.Second):
		t.Fatal("the marker event never came")
	}
	if got := rt.all.Load() - 1; got != 2*n {
		t.Errorf("%d events, want %d", got, 2*n)
	}
}

// TestLargeOutputMemory runs a step that prints 200 MB in a process of its
// own, and checks that the process's peak RSS stays well under 100 MB.
func TestLargeOutputMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 200 MB")
	}
	for _, includeResult := range []string{"false", "true"} {
		t.Run("includeResult="+includeResult, func(t *testing.T) {
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(exe, "rss-probe", t.TempDir(), includeResult).CombinedOutput()
			if err != nil {
				t.Fatalf("probe: %v\n%s", err, out)
			}
			var before, after, logSize, resultLen int64
			if _, err := fmt.Sscanf(string(out), "%d %d %d %d", &before, &after, &logSize, &resultLen); err != nil {
				t.Fatalf("probe output %q: %v", out, err)
			}
			t.Logf("VmHWM before %d MiB, after %d MiB; log %d bytes; result %d bytes", before>>20, after>>20, logSize, resultLen)
			if after >= 100<<20 || (!raceEnabled && after-before > 30<<20) {
				t.Errorf("peak RSS grew from %d to %d bytes", before, after)
			}
			if logSize != 200_000_000 {
				t.Errorf("log has %d bytes, want 200000000", logSize)
			}
			wantResult := int64(-1)
			if includeResult == "true" {
				wantResult = executor.MaxResult
			}
			if resultLen != wantResult {
				t.Errorf("result has %d bytes, want %d", resultLen, wantResult)
			}
		})
	}
}

// rssProbe is TestLargeOutputMemory's subprocess: args are a data
// directory and whether to capture the result. It prints VmHWM before and
// after, the log's size and the result's length (-1 when none).
func rssProbe(args []string) int {
	before, err := vmHWM()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	rt, err := New(Config{DataDir: args[0], Isolation: IsolationNone})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer rt.Close()
	run := newRun(&v1alpha1.Template{Name: "a", Container: &apiContainer})
	run.IncludeResult = args[1] == "true"
	if err := rt.Start(context.Background(), run); err != nil {
		fmt.Println(err)
		return 1
	}
	var ev runtime.StepEvent
	for ev = range rt.Events() {
		if ev.Phase != v1alpha1.NodeRunning {
			break
		}
	}
	if ev.Phase != v1alpha1.NodeSucceeded {
		fmt.Println("step:", ev.Phase, ev.Message)
		return 1
	}
	// Read the whole log through LogFiles too: it must stream.
	r, err := NewLogFiles(args[0]).Open(context.Background(), run.Namespace, run.Workflow, run.PodName)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	size, err := io.Copy(io.Discard, r)
	r.Close()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	after, err := vmHWM()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	resultLen := -1
	if ev.Outputs.Result != nil {
		resultLen = len(*ev.Outputs.Result)
	}
	fmt.Println(before, after, size, resultLen)
	return 0
}

// apiContainer prints 200 MB.
var apiContainer = apiv1.Container{Image: "busybox", Command: []string{"head", "-c", "200000000", "/dev/zero"}}
