package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/builtins"
	"github.com/braidwf/braid/internal/runtime"
	stepdata "github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// TestMain lets the test binary stand in for braid: the image table points
// the builtin images at os.Executable() (this binary), so `<test> argosay`
// and `<test> cowsay` must behave as `braid argosay` and `braid cowsay`. It
// also runs the memory probe in a process of its own.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "argosay":
			os.Exit(builtins.Argosay(os.Args[2:], os.Stdout, os.Stderr))
		case "cowsay":
			os.Exit(builtins.Cowsay(os.Args[2:], os.Stdout))
		case "rss-probe":
			os.Exit(rssProbe(os.Args[2:]))
		case "artifact-rss-probe":
			os.Exit(artifactRSSProbe(os.Args[2:]))
		}
	}
	os.Exit(runTests(m))
}

// runTests keeps the tests' temporary directories out of /tmp: a step that
// reads an output from /tmp gets a /tmp of its own, so a test directory
// shared with a step must lie elsewhere.
func runTests(m *testing.M) int {
	if os.Getenv("TMPDIR") == "" {
		dir, err := os.MkdirTemp("/var/tmp", "braid-local-test-")
		if err == nil {
			defer os.RemoveAll(dir)
			os.Setenv("TMPDIR", dir)
		}
	}
	return m.Run()
}

// harness is a Runtime whose events are sorted by run, so that parallel
// tests on one Runtime each see their own.
type harness struct {
	*Runtime
	mu    sync.Mutex
	byRun map[string]chan runtime.StepEvent
	all   atomic.Int64 // events delivered
}

// newRuntime returns a Runtime on a fresh DataDir, closed at the end of the
// test. mod may change the config. Steps see the host's file system
// (IsolationNone), as the tests of a host process expect; sandbox_test.go
// tests the root view.
func newRuntime(t testing.TB, mod ...func(*Config)) *harness {
	t.Helper()
	cfg := Config{DataDir: t.TempDir(), KillGrace: 300 * time.Millisecond, Isolation: IsolationNone}
	for _, m := range mod {
		m(&cfg)
	}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{Runtime: rt, byRun: map[string]chan runtime.StepEvent{}}
	go func() {
		for ev := range rt.Events() {
			h.all.Add(1)
			h.events(ev.RunID) <- ev
		}
	}()
	t.Cleanup(func() { _ = rt.Close() })
	return h
}

// events returns the channel of one run's events.
func (h *harness) events(id string) chan runtime.StepEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.byRun[id]
	if ch == nil {
		ch = make(chan runtime.StepEvent, 16)
		h.byRun[id] = ch
	}
	return ch
}

// quiet fails the test if run id gets another event soon.
func (h *harness) quiet(t testing.TB, id string) {
	t.Helper()
	select {
	case ev := <-h.events(id):
		t.Fatalf("unexpected event %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
}

// tmpl parses a template written in YAML.
func tmpl(t testing.TB, src string) *v1alpha1.Template {
	t.Helper()
	var tp v1alpha1.Template
	if err := yaml.UnmarshalStrict([]byte(src), &tp); err != nil {
		t.Fatalf("bad template: %v\n%s", err, src)
	}
	return &tp
}

var runSeq atomic.Int64

// newRun returns a run of tp with a unique ID and pod name.
func newRun(tp *v1alpha1.Template) runtime.Run {
	n := runSeq.Add(1)
	return runtime.Run{
		ID:          fmt.Sprintf("uid-%d", n),
		Namespace:   "argo",
		Workflow:    "wf",
		WorkflowUID: "uid",
		Launch: stepdata.Launch{
			NodeID:   fmt.Sprintf("wf-%d", n),
			PodName:  fmt.Sprintf("wf-pod-%d", n),
			Template: tp,
		},
	}
}

// runToEnd starts run and returns its events, the final one last.
func runToEnd(t testing.TB, rt *harness, run runtime.Run) []runtime.StepEvent {
	t.Helper()
	if err := rt.Start(context.Background(), run); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return waitFinal(t, rt, run.ID, 30*time.Second)
}

// waitFinal reads run id's events until its final one.
func waitFinal(t testing.TB, rt *harness, id string, timeout time.Duration) []runtime.StepEvent {
	t.Helper()
	var evs []runtime.StepEvent
	deadline := time.After(timeout)
	for {
		select {
		case ev := <-rt.events(id):
			evs = append(evs, ev)
			if ev.Phase != v1alpha1.NodeRunning {
				return evs
			}
		case <-deadline:
			t.Fatalf("no final event for %s after %v; got %+v", id, timeout, evs)
		}
	}
}

func final(evs []runtime.StepEvent) runtime.StepEvent { return evs[len(evs)-1] }

// readLog returns run id's log as it is now ("" when the step has none):
// the main.log of the run's directory, which LogFiles opens by pod name.
func readLog(t testing.TB, rt *harness, id string) string {
	t.Helper()
	rt.Runtime.mu.Lock() // the Runtime's, not the harness's
	s := rt.runs[id]
	rt.Runtime.mu.Unlock()
	dir, ok := rt.idx.dir(id)
	if s != nil {
		dir, ok = s.dir, true
	}
	if !ok {
		t.Fatalf("readLog: unknown run %s", id)
	}
	data, err := os.ReadFile(filepath.Join(dir, logFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("readLog: %v", err)
	}
	return string(data)
}

// processGone reports whether pid has exited (a zombie counts: nobody may
// reap orphans in a container).
func processGone(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// waitGone waits until pid has exited.
func waitGone(t testing.TB, pid int, within time.Duration) {
	t.Helper()
	testutil.Until(t, within, fmt.Sprintf("process %d exited", pid), func() bool { return processGone(pid) })
}

// vmHWM returns the process's peak resident set size in bytes.
func vmHWM() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
