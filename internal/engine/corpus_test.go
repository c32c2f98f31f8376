package engine

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// corpusDir finds Argo's example corpus: $BRAID_CONFORMANCE_DIR, or
// ../shared/conformance beside the repository; tests skip without it. The
// corpus is read at test time and never copied into the repository.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("BRAID_CONFORMANCE_DIR")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "conformance")
	}
	if _, err := os.Stat(filepath.Join(dir, "examples")); err != nil {
		if os.Getenv("BRAID_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("conformance corpus not found at %s, and BRAID_REQUIRE_CONFORMANCE=1 (set BRAID_CONFORMANCE_DIR)", dir)
		}
		t.Skipf("conformance corpus not found at %s (set BRAID_CONFORMANCE_DIR)", dir)
	}
	return dir
}

// corpus loads every Workflow of the examples, with a resolver over all
// their WorkflowTemplates.
func corpus(t *testing.T) (map[string]*v1alpha1.Workflow, testResolver) {
	dir := corpusDir(t)
	files, err := spec.SpecFiles([]string{filepath.Join(dir, "examples")})
	if err != nil {
		t.Fatal(err)
	}
	wfs := map[string]*v1alpha1.Workflow{}
	res := testResolver{}
	for _, f := range files {
		docs, _ := spec.LoadFile(f, spec.Lenient)
		rel, _ := filepath.Rel(dir, f)
		for _, d := range docs {
			switch o := d.Object.(type) {
			case *v1alpha1.Workflow:
				if _, dup := wfs[rel]; !dup {
					wfs[rel] = o
				}
			case *v1alpha1.WorkflowTemplate:
				res[o.Name] = &o.Spec
			case *v1alpha1.ClusterWorkflowTemplate:
				res["cluster/"+o.Name] = &o.Spec
			}
		}
	}
	return wfs, res
}

func corpusDriver(t *testing.T, wf *v1alpha1.Workflow, res testResolver) *driver {
	d := &driver{t: t, now: t0, running: map[string]*fakePod{}, pending: map[string]StepResult{}, maxPasses: 3000,
		prepared: NewPrepared(), templates: res, wf: wf.DeepCopy()}
	if d.wf.Name == "" {
		d.wf.Name = strings.TrimSuffix(d.wf.GenerateName, "-")
	}
	if d.wf.Name == "" {
		d.wf.Name = "wf"
	}
	d.wf.UID = "uid-1"
	d.wf.Namespace = "argo"
	d.idle = func(d *driver) bool { // resume whatever waits for a person
		for _, n := range d.wf.Status.Nodes {
			if d.resume(n.Name) {
				return true
			}
		}
		return false
	}
	return d
}

// runQuietly drives like run, but stops without failing when the workflow
// is stuck or too long: the corpus includes workflows that wait for events.
func (d *driver) runQuietly() {
	for i := 0; i < d.maxPasses; i++ {
		res := d.reconcile()
		if d.wf.Status.Phase.Completed() {
			return
		}
		d.collect()
		if len(d.pending) > 0 || d.idle(d) {
			continue
		}
		next := d.nextEvent(res.RequeueAfter)
		if next.IsZero() {
			return
		}
		d.now = next
		d.collect()
	}
}

// TestCorpusNoPanic drives every Workflow of Argo's examples with a fake
// runtime: no input may make Reconcile panic or return an error, and every
// node must have a sane record.
func TestCorpusNoPanic(t *testing.T) {
	wfs, res := corpus(t)
	if len(wfs) < 150 {
		t.Fatalf("only %d workflows", len(wfs))
	}
	phases := map[v1alpha1.WorkflowPhase]int{}
	for name, wf := range wfs {
		d := corpusDriver(t, wf, res)
		d.runQuietly()
		phases[d.wf.Status.Phase]++
		for id, n := range d.wf.Status.Nodes {
			if n.ID != id || n.Name == "" || n.Type == "" || n.Phase == "" || n.StartedAt.IsZero() {
				t.Errorf("%s: bad node %+v", name, n)
			}
			if v1alpha1.NodeID(d.wf.Name, n.Name) != id {
				t.Errorf("%s: node %s has ID %s", name, n.Name, id)
			}
			for _, c := range n.Children {
				if _, ok := d.wf.Status.Nodes[c]; !ok {
					t.Errorf("%s: %s has a missing child %s", name, n.Name, c)
				}
			}
		}
	}
	t.Logf("%d workflows: %v", len(wfs), phases)
}

// TestCorpusSmoke runs the 20 core examples of smoke.txt and expects the
// phases Argo gets, with a runtime that follows the examples' commands.
func TestCorpusSmoke(t *testing.T) {
	dir := corpusDir(t)
	f, err := os.Open(filepath.Join(dir, "smoke.txt"))
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	wfs, res := corpus(t)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Split(line, "\t")
		path, want := fields[0], v1alpha1.WorkflowPhase(fields[1])
		t.Run(path, func(t *testing.T) {
			wf, ok := wfs[path]
			if !ok {
				t.Fatalf("%s not loaded", path)
			}
			d := corpusDriver(t, wf, res)
			d.respond = smokeRuntime
			d.runQuietly()
			if d.wf.Status.Phase != want {
				t.Errorf("phase %s %q, want %s\n%s", d.wf.Status.Phase, d.wf.Status.Message, want, d.dump())
			}
		})
		n++
	}
	if n != 20 {
		t.Errorf("%d smoke files", n)
	}
}

// smokeRuntime adds what the smoke examples compute to the convention.
func smokeRuntime(d *driver, l Launch) *stepEnd {
	if o := parameterAggregationRuntime(d, l); o != nil {
		return o
	}
	if l.Template.Script != nil && strings.Contains(l.Template.Script.Source, "random") {
		return &stepEnd{result: str("heads")} // coinflip: heads ends the recursion
	}
	return nil
}
