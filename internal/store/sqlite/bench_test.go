package sqlite

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	msqlite "modernc.org/sqlite"
)

const benchNodes = 10_000

// stepMode says which nodes one finished step writes.
type stepMode int

const (
	// leafOnly writes the finished node alone.
	leafOnly stepMode = iota
	// rootSameSize also writes the DAG root, whose Children list names all
	// 10,000 nodes (about 190 KB of JSON), with a change that keeps its
	// size (progress "n/10000"): SQLite then rewrites only the overflow
	// pages whose bytes differ.
	rootSameSize
	// rootResized also writes the DAG root with a change of size (a
	// message that grows and shrinks), which rewrites all its pages.
	rootResized
)

func (m stepMode) String() string {
	return [...]string{"leaf", "leaf+root", "leaf+root-resized"}[m]
}

// stepper finishes one leaf node per call, round robin, as the controller
// does when a step ends.
type stepper struct {
	s      *Store
	wf     *v1alpha1.Workflow
	leaves []string
	i      int
	mode   stepMode
}

func newStepper(tb testing.TB, s *Store, mode stepMode) *stepper {
	tb.Helper()
	wf := bigWorkflow("bench", benchNodes)
	must(tb, s.Create(context.Background(), wf), "Create")
	return &stepper{s: s, wf: wf, leaves: wf.Status.Nodes["bench"].Children, mode: mode}
}

func (st *stepper) step(tb testing.TB) {
	id := st.leaves[st.i%len(st.leaves)]
	st.i++
	n := st.wf.Status.Nodes[id]
	if n.Phase == v1alpha1.NodeSucceeded {
		n.Phase, n.Message = v1alpha1.NodeFailed, "exit code 1"
	} else {
		n.Phase, n.Message = v1alpha1.NodeSucceeded, ""
	}
	st.wf.Status.Nodes[id] = n
	st.wf.Status.Progress = v1alpha1.Progress(fmt.Sprintf("%d/%d", st.i%benchNodes, benchNodes))
	changed := []string{id}
	if st.mode != leafOnly {
		root := st.wf.Status.Nodes["bench"]
		root.Progress = st.wf.Status.Progress
		if st.mode == rootResized {
			root.Message = strings.Repeat("*", st.i%10)
		}
		st.wf.Status.Nodes["bench"] = root
		changed = append(changed, "bench")
	}
	if err := st.s.UpdateWorkflowStatus(context.Background(), st.wf, changed); err != nil {
		tb.Fatalf("UpdateWorkflowStatus: %v", err)
	}
}

// BenchmarkUpdateWorkflowStatus: the hot path on a 10,000-node workflow,
// one finished node per call.
func BenchmarkUpdateWorkflowStatus(b *testing.B) {
	for _, mode := range []stepMode{leafOnly, rootSameSize, rootResized} {
		b.Run(fmt.Sprintf("%dnodes/%s", benchNodes, mode), func(b *testing.B) {
			s := testStore(b, noMonitor)
			st := newStepper(b, s, mode)
			b.ReportAllocs()
			for b.Loop() {
				st.step(b)
			}
		})
	}
}

// BenchmarkUpdateWorkflowStatusWatched is the hot path with one watcher,
// which costs a deep copy of the workflow without its nodes per write.
func BenchmarkUpdateWorkflowStatusWatched(b *testing.B) {
	s := testStore(b, noMonitor)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := s.Watch(ctx, store.KindWorkflow, "")
	must(b, err, "Watch")
	go func() {
		for range ch {
		}
	}()
	st := newStepper(b, s, leafOnly)
	b.ReportAllocs()
	for b.Loop() {
		st.step(b)
	}
}

func BenchmarkGetWorkflow(b *testing.B) {
	for _, n := range []int{100, benchNodes} {
		b.Run(fmt.Sprintf("%dnodes", n), func(b *testing.B) {
			s := testStore(b, noMonitor)
			must(b, s.Create(context.Background(), bigWorkflow("get", n)), "Create")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Get(context.Background(), store.KindWorkflow, "argo", "get"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListWorkflows lists 500 workflows of 200 nodes each, a page at a
// time; the nodes are never read.
func BenchmarkListWorkflows(b *testing.B) {
	s := testStore(b, noMonitor)
	for i := range 500 {
		must(b, s.Create(context.Background(), bigWorkflow(fmt.Sprintf("wf-%03d", i), 200)), "Create")
	}
	for _, limit := range []int64{0, 50} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := s.List(context.Background(), store.KindWorkflow, "argo",
					store.ListOptions{Limit: limit, LabelSelector: "workflows.argoproj.io/phase=Running"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCount counts among 10,000 workflows (a fifth per phase, in two
// namespaces), as the UI's phase counts do: one label, after a page of
// one (a continue token), in all namespaces or one.
func BenchmarkCount(b *testing.B) {
	ctx := context.Background()
	s := testStore(b, noMonitor)
	phases := []string{"Pending", "Running", "Succeeded", "Failed", "Error"}
	must(b, s.Tx(ctx, func(tx *Tx) error {
		for i := range 10_000 {
			p := phases[i%len(phases)]
			wf := &v1alpha1.Workflow{}
			wf.Namespace, wf.Name = []string{"argo", "dev"}[i%2], fmt.Sprintf("wf-%05d", i)
			wf.Labels = map[string]string{
				"workflows.argoproj.io/phase": p, "workflows.argoproj.io/completed": "false",
				"workflows.argoproj.io/creator":           "system-serviceaccount-argo-argo-server",
				"workflows.argoproj.io/workflow-template": fmt.Sprintf("template-%d", i%7),
			}
			wf.Status.Phase = v1alpha1.WorkflowPhase(p)
			wf.Status.Message = strings.Repeat("a status message ", 20)
			if err := tx.Create(wf); err != nil {
				return err
			}
		}
		return nil
	}), "seed")
	for _, tc := range []struct {
		name, ns string
		opts     store.ListOptions
	}{
		{"all", "", store.ListOptions{}},
		{"phase", "", store.ListOptions{LabelSelector: "workflows.argoproj.io/phase=Running"}},
		{"phase in a namespace", "argo", store.ListOptions{LabelSelector: "workflows.argoproj.io/phase=Running"}},
		{"phase and template", "", store.ListOptions{LabelSelector: "workflows.argoproj.io/phase=Succeeded,workflows.argoproj.io/workflow-template=template-3"}},
		{"not a phase", "", store.ListOptions{LabelSelector: "workflows.argoproj.io/phase!=Running"}},
		{"phase and name", "", store.ListOptions{LabelSelector: "workflows.argoproj.io/phase=Running", Name: "wf-0", NameFilter: "Prefix"}},
	} {
		page := tc.opts
		page.Limit = 1
		_, next, err := s.List(ctx, store.KindWorkflow, tc.ns, page)
		must(b, err, "List")
		tc.opts.Continue = next
		b.Run(tc.name, func(b *testing.B) {
			var n int64
			for b.Loop() {
				if n, err = s.Count(ctx, store.KindWorkflow, tc.ns, tc.opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "matches")
		})
	}
}

// TestBytesWrittenPerStep measures what one finished step writes on a
// 10,000-node workflow. With automatic checkpoints off (so that no frame is
// overwritten) and the WAL emptied by a TRUNCATE checkpoint, it runs
// `steps` UpdateWorkflowStatus calls and then reads:
//
//   - the WAL file's size: the bytes appended per step (each frame is a
//     24-byte header and one 4,096-byte page);
//   - the page numbers in the frame headers: how many distinct pages a
//     checkpoint will copy into the main file for all those steps;
//   - SQLite's own counter SQLITE_DBSTATUS_CACHE_WRITE on the writer
//     connection: pages written to the WAL, which must agree.
//
// Run with -v to see the figures.
func TestBytesWrittenPerStep(t *testing.T) {
	const steps = 100
	for _, mode := range []stepMode{leafOnly, rootSameSize, rootResized} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			s := testStore(t, noMonitor)
			st := newStepper(t, s, mode)
			st.step(t) // warm the statements and the cache

			// No automatic checkpoint while measuring: the WAL keeps every frame.
			_, err := s.w.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0")
			must(t, err, "wal_autocheckpoint")
			defer func() {
				_, err := s.w.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 1000")
				must(t, err, "wal_autocheckpoint")
			}()
			var busy, frames, done int
			must(t, s.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &done), "checkpoint")
			if busy != 0 {
				t.Fatalf("checkpoint busy")
			}
			pagesBefore := cacheWrites(t, s)
			for range steps {
				st.step(t)
			}
			pages := cacheWrites(t, s) - pagesBefore

			wal, err := os.ReadFile(s.path + "-wal")
			must(t, err, "read WAL")
			var pageSize int
			must(t, s.w.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize), "page_size")
			nFrames, distinct := walFrames(t, wal, pageSize)
			if nFrames != pages {
				t.Errorf("WAL holds %d frames, SQLite counted %d page writes", nFrames, pages)
			}
			perStep := float64(len(wal)) / steps
			t.Logf("%d nodes, %s: %.1f pages and %.0f bytes appended to the WAL per step; "+
				"a checkpoint then copies %d distinct pages for all %d steps",
				benchNodes, mode, float64(nFrames)/steps, perStep, distinct, steps)
			if mode == leafOnly && perStep > 4*float64(pageSize+24) {
				t.Errorf("a one-node step writes %.0f bytes; want at most a few pages", perStep)
			}
		})
	}
}

// cacheWrites reads SQLITE_DBSTATUS_CACHE_WRITE of the writer connection.
func cacheWrites(t *testing.T, s *Store) int {
	t.Helper()
	conn, err := s.w.Conn(context.Background())
	must(t, err, "writer conn")
	defer func() { _ = conn.Close() }()
	var n int
	must(t, conn.Raw(func(dc any) error {
		st, ok := dc.(msqlite.DBStatus)
		if !ok {
			return fmt.Errorf("driver conn %T has no DBStatus", dc)
		}
		var err error
		n, _, err = st.Status(msqlite.DBStatusCacheWrite, false)
		return err
	}), "DBStatus")
	return n
}

// walFrames counts the frames of a WAL file and the distinct pages they hold.
func walFrames(t *testing.T, wal []byte, pageSize int) (frames, distinct int) {
	t.Helper()
	const walHeader, frameHeader = 32, 24
	if len(wal) < walHeader || (len(wal)-walHeader)%(frameHeader+pageSize) != 0 {
		t.Fatalf("WAL of %d bytes is not whole frames of %d-byte pages", len(wal), pageSize)
	}
	seen := map[uint32]bool{}
	for off := walHeader; off < len(wal); off += frameHeader + pageSize {
		seen[binary.BigEndian.Uint32(wal[off:])] = true
		frames++
	}
	return frames, len(seen)
}
