package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// startCounter is the real local runtime, counting the steps it is asked
// to start by template name.
type startCounter struct {
	*local.Runtime
	mu      sync.Mutex
	started map[string]int
}

func (s *startCounter) Start(ctx context.Context, run runtime.Run) error {
	s.mu.Lock()
	s.started[run.Template.Name]++
	s.mu.Unlock()
	return s.Runtime.Start(ctx, run)
}

func (s *startCounter) count(template string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started[template]
}

// newMemoController wires a real SQLite store, used as the memoization
// cache too, and a real local runtime, on dir.
func newMemoController(t *testing.T, dir string) (*Controller, *sqlite.Store, *startCounter) {
	t.Helper()
	st, rt := openStoreAndRuntime(t, dir)
	counter := &startCounter{Runtime: rt, started: map[string]int{}}
	c, err := New(Options{Store: st, Runtime: counter, Memos: st, MemoPruner: st})
	if err != nil {
		t.Fatal(err)
	}
	return c, st, counter
}

// memoWorkflow's gen step appends a line to marker each time it really
// runs (marker lies outside /tmp: a step has a private /tmp); its output,
// different on each run, feeds the step use.
func memoWorkflow(t *testing.T, name, marker string) *v1alpha1.Workflow {
	t.Helper()
	return workflow(t, `
metadata: {name: `+name+`}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: gen
        template: gen
        arguments: {parameters: [{name: who, value: world}]}
    - - name: use
        template: use
        arguments: {parameters: [{name: msg, value: "{{steps.gen.outputs.parameters.hello}}"}]}
  - name: gen
    inputs: {parameters: [{name: who}]}
    memoize:
      key: "gen-{{inputs.parameters.who}}"
      maxAge: 1h
      cache: {configMap: {name: memo-test}}
    container:
      image: busybox
      command: [sh, -c]
      args: ["echo ran >> `+marker+` && echo hello-{{inputs.parameters.who}}-`+name+` > /tmp/hello"]
    outputs:
      parameters:
      - name: hello
        valueFrom: {path: /tmp/hello}
  - name: use
    inputs: {parameters: [{name: msg}]}
    script:
      image: busybox
      command: [sh]
      source: echo "got {{inputs.parameters.msg}}"
`)
}

// markerDir is a directory outside /tmp that steps can write to and the
// test can read: a step's /tmp is its own.
func markerDir(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no directory outside /tmp for the marker: %v", err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Skipf("no directory outside /tmp for the marker: %v", err)
	}
	dir, err := os.MkdirTemp(base, "braid-memo-test-")
	if err != nil {
		t.Skipf("no directory outside /tmp for the marker: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func nodeNamed(wf *v1alpha1.Workflow, name string) v1alpha1.NodeStatus {
	for _, n := range wf.Status.Nodes {
		if n.Name == name {
			return n
		}
	}
	return v1alpha1.NodeStatus{}
}

// The same workflow run twice on one store: the first run executes the
// memoized step and saves its outputs; the second takes them from the cache
// without starting the step's process, and they still reach the next step.
func TestMemoizedStepRunsOnce(t *testing.T) {
	dir := t.TempDir()
	c, st, rt := newMemoController(t, dir)
	marker := filepath.Join(markerDir(t), "marker")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	run := func(name string) *v1alpha1.Workflow {
		t.Helper()
		final, err := c.Run(ctx, RunRequest{Workflow: memoWorkflow(t, name, marker)})
		if err != nil {
			t.Fatal(err)
		}
		if final.Status.Phase != v1alpha1.WorkflowSucceeded {
			t.Fatalf("%s: phase %s: %s", name, final.Status.Phase, final.Status.Message)
		}
		return final
	}
	first := run("memo-1")
	gen1 := nodeNamed(first, "memo-1[0].gen")
	if gen1.MemoizationStatus == nil || gen1.MemoizationStatus.Hit ||
		gen1.MemoizationStatus.Key != "gen-world" || gen1.MemoizationStatus.CacheName != "memo-test" {
		t.Fatalf("first run memoizationStatus %+v", gen1.MemoizationStatus)
	}
	produced := gen1.Outputs.Parameters[0].Value.String()
	if produced != "hello-world-memo-1" {
		t.Fatalf("first run output %q", produced)
	}
	entry, ok, err := st.LoadMemo(ctx, "default", "memo-test", "gen-world")
	if err != nil || !ok || entry.NodeID != gen1.ID {
		t.Fatalf("cache entry after the first run: ok %v, %+v, err %v", ok, entry, err)
	}

	second := run("memo-2")
	gen2 := nodeNamed(second, "memo-2[0].gen")
	if gen2.MemoizationStatus == nil || !gen2.MemoizationStatus.Hit {
		t.Fatalf("second run memoizationStatus %+v", gen2.MemoizationStatus)
	}
	if gen2.Phase != v1alpha1.NodeSucceeded || gen2.Outputs.Parameters[0].Value.String() != produced {
		t.Errorf("second run gen %s, outputs %+v; want Succeeded with %q", gen2.Phase, gen2.Outputs, produced)
	}
	if in := nodeNamed(second, "memo-2[1].use").Inputs; in == nil || in.Parameters[0].Value.String() != produced {
		t.Errorf("second run use inputs %+v, want msg %q", in, produced)
	}
	data, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "ran"); n != 1 {
		t.Errorf("the memoized step ran %d times, want 1", n)
	}
	if n := rt.count("gen"); n != 1 {
		t.Errorf("the runtime started the memoized step %d times, want 1", n)
	}
	// The stored workflow shows the hit too.
	obj, err := st.Get(ctx, store.KindWorkflow, "default", "memo-2")
	if err != nil {
		t.Fatal(err)
	}
	if s := nodeNamed(obj.(*v1alpha1.Workflow), "memo-2[0].gen").MemoizationStatus; s == nil || !s.Hit {
		t.Errorf("stored memoizationStatus %+v", s)
	}
	hit, _, err := st.LoadMemo(ctx, "default", "memo-test", "gen-world")
	if err != nil || !hit.LastHitAt.After(hit.CreatedAt) {
		t.Errorf("the hit was not recorded: %+v, err %v", hit, err)
	}

	// Without a cache nothing is memoized: the step runs again.
	c.memos = nil
	third := run("memo-3")
	if s := nodeNamed(third, "memo-3[0].gen").MemoizationStatus; s == nil || s.Hit {
		t.Errorf("run without a cache: memoizationStatus %+v", s)
	}
	data, _ = os.ReadFile(marker)
	if n := strings.Count(string(data), "ran"); n != 2 || rt.count("gen") != 2 {
		t.Errorf("after a run without a cache the step ran %d times and was started %d times, want 2",
			n, rt.count("gen"))
	}
}

func TestPruneMemos(t *testing.T) {
	dir := t.TempDir()
	c, st, _ := newMemoController(t, dir)
	ctx := context.Background()
	if err := st.SaveMemo(ctx, store.MemoEntry{Namespace: "default", Cache: "c", Key: "k", NodeID: "n"}); err != nil {
		t.Fatal(err)
	}
	if n, err := c.PruneMemos(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("prune of a fresh entry: %d, %v", n, err)
	}
	c.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if n, err := c.PruneMemos(ctx, time.Hour); err != nil || n != 1 {
		t.Fatalf("prune of an entry unused for 2h: %d, %v", n, err)
	}
	if _, ok, _ := st.LoadMemo(ctx, "default", "c", "k"); ok {
		t.Error("the entry survived the prune")
	}
}
