package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// api is the store API its consumers declare (internal/controller,
// internal/server); the guard keeps Store's methods matching it.
type api interface {
	Get(ctx context.Context, kind store.Kind, namespace, name string) (store.Object, error)
	List(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) ([]store.Object, string, error)
	Create(ctx context.Context, obj store.Object) error
	Update(ctx context.Context, obj store.Object) error
	UpdateWorkflowStatus(ctx context.Context, wf *v1alpha1.Workflow, changedNodes []string) error
	Delete(ctx context.Context, kind store.Kind, namespace, name string) error
	Watch(ctx context.Context, kind store.Kind, namespace string) (<-chan store.Event, error)
}

var _ api = (*Store)(nil)

var allKinds = []store.Kind{
	store.KindWorkflow, store.KindWorkflowTemplate, store.KindClusterWorkflowTemplate,
	store.KindCronWorkflow, store.KindWorkflowEventBinding,
}

// fakeClock moves one second forward on every read, so that creation
// order is also timestamp order.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// testConfig is how a test opens a store.
type testConfig struct {
	opts    Options
	monitor bool
}

type testOption func(*testConfig)

// noMonitor skips the watch monitor (benchmarks, slow-watcher tests).
func noMonitor(c *testConfig) { c.monitor = false }

// withOptions edits the Options a test store opens with.
func withOptions(f func(*Options)) testOption {
	return func(c *testConfig) { f(&c.opts) }
}

// testStore opens a store in a fresh directory; see openStore.
func testStore(tb testing.TB, opts ...testOption) *Store {
	tb.Helper()
	return openStore(tb, filepath.Join(tb.TempDir(), "braid.db"), opts...)
}

// openStore opens the store at path with a fake clock. Unless noMonitor is
// given, a monitor watches every kind and checks that each object's events
// start with ADDED at resourceVersion 1 (or, for an object older than the
// store, any rv), grow by exactly one per event, and stop after DELETED. On cleanup the store is closed and the file's
// invariants are checked (checkFile).
func openStore(tb testing.TB, path string, opts ...testOption) *Store {
	tb.Helper()
	c := testConfig{opts: Options{Clock: newFakeClock().Now, ReadConns: 4}, monitor: true}
	for _, f := range opts {
		f(&c)
	}
	s, err := Open(context.Background(), path, c.opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	var m *rvMonitor
	if c.monitor {
		m = startMonitor(tb, s)
	}
	tb.Cleanup(func() {
		if m != nil {
			m.stop(tb)
		}
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
		checkFile(tb, path)
	})
	return s
}

// rvMonitor checks watch events for resourceVersion order.
type rvMonitor struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []string
	last   map[string]int64 // by uid; -1 after DELETED
}

func startMonitor(tb testing.TB, s *Store) *rvMonitor {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &rvMonitor{cancel: cancel, last: map[string]int64{}}
	for _, k := range allKinds {
		ch, err := s.Watch(ctx, k, "")
		if err != nil {
			tb.Fatalf("Watch %s: %v", k, err)
		}
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			for ev := range ch {
				m.see(ev)
			}
		}()
	}
	return m
}

func (m *rvMonitor) see(ev store.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	uid := string(ev.Object.GetUID())
	rv, err := strconv.ParseInt(ev.Object.GetResourceVersion(), 10, 64)
	if err != nil {
		m.errs = append(m.errs, fmt.Sprintf("%s %s: resourceVersion %q", ev.Type, ev.Object.GetName(), ev.Object.GetResourceVersion()))
		return
	}
	// An object first seen in a MODIFIED or DELETED event was created
	// before the monitor started (a reopened file): its rv is the baseline.
	prev, seen := m.last[uid]
	switch {
	case ev.Type == store.Added && (seen || rv != 1):
		m.errs = append(m.errs, fmt.Sprintf("ADDED %s rv %d (seen before: %v)", ev.Object.GetName(), rv, seen))
	case seen && prev < 0:
		m.errs = append(m.errs, fmt.Sprintf("%s %s rv %d after DELETED", ev.Type, ev.Object.GetName(), rv))
	case ev.Type == store.Modified && seen && rv != prev+1:
		m.errs = append(m.errs, fmt.Sprintf("MODIFIED %s rv %d after %d", ev.Object.GetName(), rv, prev))
	case ev.Type == store.Deleted && seen && rv != prev:
		m.errs = append(m.errs, fmt.Sprintf("DELETED %s rv %d after %d", ev.Object.GetName(), rv, prev))
	}
	m.last[uid] = rv
	if ev.Type == store.Deleted {
		m.last[uid] = -1
	}
}

func (m *rvMonitor) stop(tb testing.TB) {
	tb.Helper()
	m.cancel()
	m.wg.Wait()
	for _, e := range m.errs {
		tb.Errorf("watch invariant: %s", e)
	}
}

// checkFile opens a closed store's file directly and checks the invariants
// every write must keep.
func checkFile(tb testing.TB, path string) {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=query_only(1)")
	if err != nil {
		tb.Fatalf("check: %v", err)
	}
	defer func() { _ = db.Close() }()
	ctx := context.Background()
	one := func(what, q string, want any) {
		tb.Helper()
		var got any
		if err := db.QueryRowContext(ctx, q).Scan(&got); err != nil {
			tb.Errorf("check %s: %v", what, err)
			return
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			tb.Errorf("check %s: got %v, want %v", what, got, want)
		}
	}
	one("integrity", "PRAGMA integrity_check", "ok")
	one("schema version", "PRAGMA user_version", schemaVersion)
	one("foreign keys", "SELECT count(*) FROM pragma_foreign_key_check", 0)
	one("every node row belongs to an existing workflow",
		`SELECT count(*) FROM nodes n LEFT JOIN objects o ON o.id = n.object_id
		 WHERE o.id IS NULL OR o.kind <> 'Workflow'`, 0)
	one("no node row is newer than its workflow",
		`SELECT count(*) FROM nodes n JOIN objects o ON o.id = n.object_id WHERE n.rv > o.resource_version OR n.rv < 1`, 0)
	one("every object has one spec row",
		`SELECT count(*) FROM objects o LEFT JOIN specs s ON s.object_id = o.id WHERE s.object_id IS NULL`, 0)
	one("every spec row has an object",
		`SELECT count(*) FROM specs s LEFT JOIN objects o ON o.id = s.object_id WHERE o.id IS NULL`, 0)
	one("resourceVersion and generation start at 1",
		`SELECT count(*) FROM objects WHERE resource_version < 1 OR generation < 1 OR generation > resource_version`, 0)
	one("the label rows are the labels column",
		`SELECT (SELECT count(*) FROM (SELECT o.id, j.key, j.value FROM objects o, json_each(o.labels) j
		                                EXCEPT SELECT object_id, key, value FROM object_labels))
		      + (SELECT count(*) FROM (SELECT object_id, key, value FROM object_labels
		                                EXCEPT SELECT o.id, j.key, j.value FROM objects o, json_each(o.labels) j))`, 0)
	one("cluster-scoped objects have no namespace, namespaced ones have one",
		`SELECT count(*) FROM objects WHERE (kind = 'ClusterWorkflowTemplate') <> (namespace = '')`, 0)

	rows, err := db.QueryContext(ctx, `SELECT o.kind, o.namespace, o.name, o.uid, o.spec_hash, o.body, s.spec
		FROM objects o JOIN specs s ON s.object_id = o.id`)
	if err != nil {
		tb.Fatalf("check rows: %v", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var kind, ns, name, uid string
		var hash, body, spec []byte
		if err := rows.Scan(&kind, &ns, &name, &uid, &hash, &body, &spec); err != nil {
			tb.Fatalf("check rows: %v", err)
		}
		if h := sha256.Sum256(spec); !bytes.Equal(h[:], hash) {
			tb.Errorf("check %s %s/%s: spec_hash does not match the spec", kind, ns, name)
		}
		var m struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Status   struct {
				Nodes map[string]any `json:"nodes"`
			} `json:"status"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			tb.Errorf("check %s %s/%s: body: %v", kind, ns, name, err)
			continue
		}
		if m.Metadata.Name != name || m.Metadata.Namespace != ns || string(m.Metadata.UID) != uid {
			tb.Errorf("check %s %s/%s: body metadata %s/%s uid %s disagrees with the columns (uid %s)",
				kind, ns, name, m.Metadata.Namespace, m.Metadata.Name, m.Metadata.UID, uid)
		}
		if m.Status.Nodes != nil {
			tb.Errorf("check %s %s/%s: body holds status.nodes; nodes belong in the nodes table", kind, ns, name)
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("check rows: %v", err)
	}
}

// mustParse decodes an inline YAML fixture into a typed object.
func mustParse[T any](tb testing.TB, doc string) *T {
	tb.Helper()
	var v T
	if err := yaml.UnmarshalStrict([]byte(doc), &v); err != nil {
		tb.Fatalf("fixture: %v\n%s", err, doc)
	}
	return &v
}

// diffJSON compares two objects as the API shows them: as JSON.
func diffJSON(tb testing.TB, want, got any) string {
	tb.Helper()
	enc := func(v any) []byte {
		b, err := json.Marshal(v) // map keys sorted: equal objects give equal bytes
		if err != nil {
			tb.Fatalf("marshal: %v", err)
		}
		return b
	}
	wb, gb := enc(want), enc(got)
	if bytes.Equal(wb, gb) {
		return ""
	}
	var w, g any
	if err := json.Unmarshal(wb, &w); err != nil {
		tb.Fatalf("unmarshal: %v", err)
	}
	if err := json.Unmarshal(gb, &g); err != nil {
		tb.Fatalf("unmarshal: %v", err)
	}
	return cmp.Diff(w, g)
}

// isErr fails the test unless err wraps target.
func isErr(tb testing.TB, err, target error, what string) {
	tb.Helper()
	if !errors.Is(err, target) {
		tb.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func must(tb testing.TB, err error, what string) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}

// nodeRows reads a workflow's node rows: node ID -> rv column.
func nodeRows(tb testing.TB, s *Store, ns, name string) map[string]int64 {
	tb.Helper()
	rows, err := s.r.QueryContext(context.Background(), `SELECT n.node_id, n.rv FROM nodes n
		JOIN objects o ON o.id = n.object_id WHERE o.kind = 'Workflow' AND o.namespace = ? AND o.name = ?`, ns, name)
	if err != nil {
		tb.Fatalf("node rows: %v", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var rv int64
		if err := rows.Scan(&id, &rv); err != nil {
			tb.Fatalf("node rows: %v", err)
		}
		out[id] = rv
	}
	return out
}

// bigWorkflow is a workflow whose DAG root has n-1 finished or running pod
// children; node JSON is about the size Argo writes for a pod step.
func bigWorkflow(name string, n int) *v1alpha1.Workflow {
	wf := &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argo", Labels: map[string]string{"workflows.argoproj.io/phase": "Running"}},
		Spec: v1alpha1.WorkflowSpec{
			Entrypoint: "main",
			Templates: []v1alpha1.Template{
				{Name: "main"},
				{Name: "work"},
			},
		},
		Status: v1alpha1.WorkflowStatus{Phase: v1alpha1.WorkflowRunning, Nodes: make(v1alpha1.Nodes, n)},
	}
	start := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	root := v1alpha1.NodeStatus{ID: name, Name: name, DisplayName: name, Type: v1alpha1.NodeTypeDAG,
		TemplateName: "main", Phase: v1alpha1.NodeRunning, StartedAt: start}
	for i := 1; i < n; i++ {
		node := leafNode(name, i, v1alpha1.NodeSucceeded, start)
		root.Children = append(root.Children, node.ID)
		wf.Status.Nodes[node.ID] = node
	}
	wf.Status.Nodes[root.ID] = root
	return wf
}

func leafNode(wfName string, i int, phase v1alpha1.NodePhase, start metav1.Time) v1alpha1.NodeStatus {
	nodeName := fmt.Sprintf("%s.task-%d", wfName, i)
	exit := "0"
	return v1alpha1.NodeStatus{
		ID: v1alpha1.NodeID(wfName, nodeName), Name: nodeName, DisplayName: fmt.Sprintf("task-%d", i),
		Type: v1alpha1.NodeTypePod, TemplateName: "work", TemplateScope: "local/" + wfName,
		Phase: phase, BoundaryID: wfName, StartedAt: start, FinishedAt: metav1.NewTime(start.Add(3 * time.Second)),
		Progress: "1/1", HostNodeName: "localhost",
		ResourcesDuration: v1alpha1.ResourcesDuration{"cpu": 1, "memory": 3},
		Outputs: &v1alpha1.Outputs{
			ExitCode:   &exit,
			Parameters: []v1alpha1.Parameter{{Name: "out", Value: v1alpha1.AnyStringPtr(fmt.Sprintf("value-%d", i))}},
		},
	}
}
