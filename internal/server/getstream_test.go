package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	gwruntime "github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// oldGetGateway answers the REST GETs of a workflow and of an archived
// one as the generated gateway handler did when objects travelled as
// Structs (structJSON), with the server's marshaler, error handler,
// response header and auth middleware, behind gk's HTTP authentication.
func oldGetGateway(t testing.TB, st *sqlite.Store, gk *auth.Gatekeeper) http.Handler {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	gw := gwruntime.NewServeMux(
		gwruntime.WithMarshalerOption(gwruntime.MIMEWildcard, &compactJSONPb{gwruntime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
		}}),
		gwruntime.WithErrorHandler(errorHandler),
		gwruntime.WithRoutingErrorHandler(routingErrorHandler),
		gwruntime.WithUnescapingMode(gwruntime.UnescapingModeAllExceptReserved),
		gwruntime.WithMiddlewares(gk.GatewayMiddleware(auth.GatewayRoutes())),
	)
	wfs, archive := &workflowServer{store: st, caps: sqliteCaps(st), log: log}, newArchiveServer(st, st, log)
	for _, r := range getRoutes(wfs, archive) {
		if err := gw.HandlePath(http.MethodGet, r.pattern, func(w http.ResponseWriter, req *http.Request, params map[string]string) {
			_, m := gwruntime.MarshalerForRequest(gw, req)
			ctx, err := gwruntime.AnnotateIncomingContext(req.Context(), gw, req, r.rpc, gwruntime.WithHTTPPathPattern(r.pattern))
			if err == nil {
				in := r.newReq()
				if err = decodeRequest(in, req, params); err == nil {
					var wf *v1alpha1.Workflow
					var fields string
					if wf, fields, err = r.get(ctx, in); err == nil {
						w.Header().Set("Content-Type", "application/json")
						w.Header().Set("Grpc-Metadata-Argo-Version", testVersion.Version)
						if strings.Contains(strings.ToLower(req.Header.Get("TE")), "trailers") {
							w.Header().Set("Transfer-Encoding", "chunked")
						}
						_, _ = w.Write(structJSON(t, wf, fields))
						return
					}
				}
			}
			gwruntime.HTTPError(ctx, gw, m, w, req, err)
		}); err != nil {
			t.Fatal(err)
		}
	}
	return gk.HTTP(gw, auth.HTTPConfig{})
}

// richWF has what a JSON encoder can get wrong: escapes, unicode, HTML
// characters, numbers of every form, nodes with outputs and artifacts
// and awkward IDs.
const richWF = `
metadata:
  name: rich
  namespace: argo
  labels: {app: "a<b>&c"}
  annotations:
    quote: "say \"hi\"\\ \u2028\u2029 \u007f \u0001 \t\n é 😀"
spec:
  entrypoint: main
  arguments:
    parameters: [{name: p, value: "1e21"}]
  templates:
  - name: main
    steps:
    - - name: each
        template: leaf
        withItems: [1, 1.5, 1e21, 0.000001, 1e-7, -0, 9007199254740993, "x", true, null, {a: [1, {b: 2.50}]}]
  - name: leaf
    container: {image: alpine, command: [sh, -c, "echo '<&>'"]}
status:
  phase: Succeeded
  startedAt: "2026-03-01T10:00:00Z"
  finishedAt: "2026-03-01T10:05:00Z"
  estimatedDuration: 300
  progress: 2/2
  resourcesDuration: {cpu: 9007199254740993, memory: 7}
  message: "done \u2028 <ok> & \"quoted\""
  conditions: [{type: Completed, status: "True"}]
  taskResultsCompletionStatus: {rich-1: true, rich-2: false}
  outputs:
    parameters: [{name: g, value: "é\u0000"}]
  nodes:
    rich:
      id: rich
      name: rich
      displayName: rich
      type: Steps
      phase: Succeeded
      children: [rich-1, "rich-2\"<é>"]
      outboundNodes: [rich-1]
      progress: 2/2
    rich-1:
      id: rich-1
      name: rich[0].each(0:1)
      type: Pod
      templateName: leaf
      phase: Succeeded
      boundaryID: rich
      startedAt: "2026-03-01T10:00:01Z"
      finishedAt: "2026-03-01T10:01:00Z"
      resourcesDuration: {cpu: 1, memory: 12345678901234567}
      hostNodeName: n1
      outputs:
        exitCode: "0"
        result: "a\tb\u2028"
        parameters: [{name: out, value: "1.50"}]
        artifacts:
        - name: main-logs
          s3: {key: "rich/rich-1/main.log"}
        - name: data
          archive: {none: {}}
          http: {url: "https://example.com/a?b=c&d=<e>"}
    "rich-2\"<é>":
      id: "rich-2\"<é>"
      name: rich[0].each(1:1.5)
      type: Pod
      phase: Failed
      message: "exit code 1: \u001b[31mred\u001b[0m"
      failedPodRestarts: 3
`

// seedGet stores the workflows GET is tried on: richWF, one without
// nodes, an archived one (with nodes) and one that is only archived, in
// namespace argo, and one in namespace b.
func seedGet(t testing.TB) (*sqlite.Store, string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var rich v1alpha1.Workflow
	if err := yaml.UnmarshalStrict([]byte(richWF), &rich); err != nil {
		t.Fatal(err)
	}
	plain := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "argo"},
		Spec: v1alpha1.WorkflowSpec{Entrypoint: "main"}}
	other := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "secret", Namespace: "b"}}
	for _, wf := range []*v1alpha1.Workflow{rich.DeepCopy(), plain, other} {
		if err := st.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	old := rich.DeepCopy()
	old.Name, old.UID = "gone", "7d0d1c7e-9a7a-4a4e-8f43-0c9d6f1d2a11"
	old.CreationTimestamp = metav1.NewTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	if err := st.Archive(ctx, old); err != nil {
		t.Fatal(err)
	}
	return st, string(old.UID)
}

// getEnv is a server in client mode, a token that may read namespace
// argo, and the old gateway over the same store.
type getEnv struct {
	srv, old http.Handler
	reader   string // Authorization value
	archived string // uid
}

func newGetEnv(t *testing.T) *getEnv {
	t.Helper()
	st, uid := seedGet(t)
	tokens, err := auth.OpenTokens(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	reader, err := tokens.Create(auth.Token{Name: "reader", Grant: auth.Grant{Namespaces: []string{"argo", "empty"}, Verbs: []string{"get"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	gk, err := auth.NewGatekeeper(auth.Config{Modes: []auth.Mode{auth.ModeClient}, Client: tokens})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion, Auth: gk})
	if err != nil {
		t.Fatal(err)
	}
	return &getEnv{srv: srv.Handler(), old: oldGetGateway(t, st, gk), reader: reader, archived: uid}
}

// TestGetStreamMatchesGateway: a REST GET of a workflow (or an archived
// one) answers byte for byte as the generated gateway handler did, with
// the same status and headers: whole, with `fields`, @latest, by uid,
// from the archive, and the errors (not found, forbidden, a bad query).
func TestGetStreamMatchesGateway(t *testing.T) {
	e := newGetEnv(t)
	for _, tc := range []struct {
		name, path string
		status     int
		header     map[string]string
	}{
		{"rich", "/api/v1/workflows/argo/rich", 200, nil},
		{"plain", "/api/v1/workflows/argo/plain", 200, nil},
		{"resourceVersion", "/api/v1/workflows/argo/rich?getOptions.resourceVersion=1", 200, nil},
		{"latest", "/api/v1/workflows/argo/@latest", 200, nil},
		{"fields of argo get", "/api/v1/workflows/argo/rich?fields=metadata.name,status.phase,status.nodes,spec.templates.name", 200, nil},
		{"fields: nodes only", "/api/v1/workflows/argo/rich?fields=status.nodes", 200, nil},
		{"fields: into nodes", "/api/v1/workflows/argo/rich?fields=status.nodes.rich-1.outputs.artifacts.name,status.nodes.rich.phase", 200, nil},
		{"fields: drop nodes", "/api/v1/workflows/argo/rich?fields=-status.nodes,spec", 200, nil},
		{"fields: drop a node", "/api/v1/workflows/argo/rich?fields=-status.nodes.rich-1,status.nodes.rich.children", 200, nil},
		{"fields: no status", "/api/v1/workflows/argo/rich?fields=metadata", 200, nil},
		{"fields: nothing", "/api/v1/workflows/argo/rich?fields=,", 200, nil},
		{"fields: drop nothing", "/api/v1/workflows/argo/rich?fields=-", 200, nil},
		{"fields: spaces", "/api/v1/workflows/argo/rich?fields=%20", 200, nil},
		{"uid matches", "/api/v1/workflows/argo/gone?uid=" + e.archived, 200, nil},
		{"from the archive", "/api/v1/workflows/argo/gone", 200, nil},
		{"trailers asked for", "/api/v1/workflows/argo/rich", 200, map[string]string{"TE": "trailers"}},
		{"archived", "/api/v1/archived-workflows/" + e.archived, 200, nil},
		{"archived, namespace and name", "/api/v1/archived-workflows/" + e.archived + "?namespace=argo&name=gone", 200, nil},
		{"not found", "/api/v1/workflows/argo/nope", 404, nil},
		{"uid differs", "/api/v1/workflows/argo/rich?uid=other", 404, nil},
		{"latest of none", "/api/v1/workflows/empty/@latest", 404, nil},
		{"forbidden", "/api/v1/workflows/b/secret", 403, nil},
		{"no token", "/api/v1/workflows/argo/rich", 401, map[string]string{"Authorization": ""}},
		{"bad query", "/api/v1/workflows/argo/rich?getOptions=1", 400, nil},
		{"bad escape", "/api/v1/workflows/argo/rich?fields=%zz", 400, nil},
		{"archived not found", "/api/v1/archived-workflows/nope", 404, nil},
		{"archived elsewhere", "/api/v1/archived-workflows/" + e.archived + "?namespace=b", 404, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := func(h http.Handler) *httptest.ResponseRecorder {
				r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+tc.path, nil)
				r.Header.Set("Authorization", e.reader)
				for k, v := range tc.header {
					r.Header.Set(k, v)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				return rec
			}
			got, want := get(e.srv), get(e.old)
			if got.Code != tc.status || want.Code != tc.status {
				t.Fatalf("status %d (the gateway's %d), want %d: %.300s", got.Code, want.Code, tc.status, got.Body)
			}
			if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
				t.Errorf("body differs from the gateway's (%d bytes, want %d):\n%s", got.Body.Len(), want.Body.Len(), firstDiff(got.Body.Bytes(), want.Body.Bytes()))
			}
			for _, h := range []string{"Content-Type", "Grpc-Metadata-Argo-Version", "Transfer-Encoding", "Content-Length"} {
				if g, w := got.Header().Values(h), want.Header().Values(h); fmt.Sprint(g) != fmt.Sprint(w) {
					t.Errorf("header %s: %q, the gateway's %q", h, g, w)
				}
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps the body's size and hash
// only, so that a large response costs the test nothing.
type discardWriter struct {
	header http.Header
	code   int
	n      int
	sum    [sha256.Size]byte
	h      interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
}

func newDiscardWriter() *discardWriter {
	return &discardWriter{header: http.Header{}, h: sha256.New()}
}

func (d *discardWriter) Header() http.Header { return d.header }
func (d *discardWriter) WriteHeader(code int) {
	if d.code == 0 {
		d.code = code
	}
}

func (d *discardWriter) Write(b []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	d.n += len(b)
	return d.h.Write(b)
}

func (d *discardWriter) done() { copy(d.sum[:], d.h.Sum(nil)) }

// hugeWorkflow is a workflow of n Pod nodes as a long steps loop makes
// them, each with outputs, an artifact and a child.
func hugeWorkflow(n int) *v1alpha1.Workflow {
	wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "huge", Namespace: "argo"},
		Spec: v1alpha1.WorkflowSpec{Entrypoint: "main"}}
	wf.Status.Phase = v1alpha1.WorkflowSucceeded
	at := metav1.NewTime(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	wf.Status.Nodes = make(v1alpha1.Nodes, n)
	for i := range n {
		id := fmt.Sprintf("huge-%010d", uint32(i)*2654435761)
		wf.Status.Nodes[id] = v1alpha1.NodeStatus{
			ID: id, Name: fmt.Sprintf("huge[%d].step(%d:item-%d)", i/1000, i, i), DisplayName: fmt.Sprintf("step(%d:item-%d)", i, i),
			Type: v1alpha1.NodeTypePod, TemplateName: "leaf", Phase: v1alpha1.NodeSucceeded, BoundaryID: "huge",
			StartedAt: at, FinishedAt: metav1.NewTime(at.Add(time.Duration(i) * time.Second)), Progress: "1/1",
			ResourcesDuration: v1alpha1.ResourcesDuration{"cpu": 3, "memory": 17}, HostNodeName: "node-1",
			Outputs: &v1alpha1.Outputs{ExitCode: ptr("0"), Parameters: []v1alpha1.Parameter{{Name: "out", Value: v1alpha1.AnyStringPtr(fmt.Sprint(i))}},
				Artifacts: v1alpha1.Artifacts{{Name: "main-logs", ArtifactLocation: v1alpha1.ArtifactLocation{
					S3: &v1alpha1.S3Artifact{Key: fmt.Sprintf("huge/%s/main.log", id)}}}}},
			Children: []string{fmt.Sprintf("huge-%010d", uint32(i+1)*2654435761)},
		}
	}
	return wf
}

func ptr[T any](v T) *T { return &v }

// TestGetHugeWorkflowMemory: a REST GET of a workflow of limits.maxNodes
// (100,000) nodes writes the gateway's bytes, and the heap grows by little
// more than reading the workflow from the store makes it grow (the floor
// while the store returns every node at once), where the gateway made it
// grow by about 1 GiB.
func TestGetHugeWorkflowMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: storing 100,000 nodes takes seconds")
	}
	const nodes = 100_000
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Create(ctx, hugeWorkflow(nodes)); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	// measure runs fn and returns how far the heap in use grew above
	// where it was before.
	measure := func(fn func()) (uint64, time.Duration) {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		peak, stop := samplePeakHeap()
		start := time.Now()
		fn()
		took := time.Since(start)
		stop()
		return *peak - min(*peak, before.HeapInuse), took
	}
	get := func(name string, h http.Handler) (*discardWriter, uint64) {
		w := newDiscardWriter()
		growth, took := measure(func() {
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/v1/workflows/argo/huge", nil))
		})
		w.done()
		if w.code != http.StatusOK {
			t.Fatalf("%s: status %d", name, w.code)
		}
		t.Logf("%s: %d MiB of JSON in %s; the heap grew by %d MiB", name, w.n>>20, took.Round(time.Millisecond), growth>>20)
		return w, growth
	}
	floor, took := measure(func() {
		if _, err := st.Get(ctx, store.KindWorkflow, "argo", "huge"); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("store.Get alone: %s; the heap grew by %d MiB", took.Round(time.Millisecond), floor>>20)
	got, growth := get("streamed", srv.Handler())
	want, oldGrowth := get("gateway", oldGetGateway(t, st, auth.ServerOnly()))
	if got.n != want.n || got.sum != want.sum {
		t.Errorf("the streamed body (%d bytes) differs from the gateway's (%d bytes)", got.n, want.n)
	}
	if growth > floor+64<<20 || growth > oldGrowth/2 {
		t.Errorf("the heap grew by %d MiB for a GET of %d nodes: more than 64 MiB over the store's read (%d MiB), or over half the gateway's (%d MiB)",
			growth>>20, nodes, floor>>20, oldGrowth>>20)
	}
}
