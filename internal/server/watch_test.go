package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// updateGolden rewrites testdata/*.golden instead of comparing.
func updateGolden() bool { return os.Getenv("BRAID_UPDATE_GOLDEN") == "1" }

// normalise replaces what differs between runs (uids, times, versions).
func normalise(b []byte) []byte {
	for _, r := range []struct{ re, with string }{
		{`"uid":"[^"]*"`, `"uid":"UID"`},
		{`"creationTimestamp":"[^"]*"`, `"creationTimestamp":"TIME"`},
		{`"resourceVersion":"[^"]*"`, `"resourceVersion":"RV"`},
	} {
		b = regexp.MustCompile(r.re).ReplaceAll(b, []byte(r.with))
	}
	return b
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updateGolden() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (BRAID_UPDATE_GOLDEN=1 writes it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs:\n got %q\nwant %q", path, got, want)
	}
}

func createWorkflow(t *testing.T, st *sqlite.Store, ns, name string, labels map[string]string) *v1alpha1.Workflow {
	t.Helper()
	wf := &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec:       v1alpha1.WorkflowSpec{Entrypoint: "main", Templates: []v1alpha1.Template{{Name: "main", Suspend: &v1alpha1.SuspendTemplate{}}}},
	}
	if err := st.Create(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
	return wf
}

// runWorkflow moves a stored workflow to Running with one node.
func runWorkflow(t *testing.T, st *sqlite.Store, ns, name string) {
	t.Helper()
	o, err := st.Get(context.Background(), store.KindWorkflow, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	wf := o.(*v1alpha1.Workflow)
	at := metav1.NewTime(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	wf.Status.Phase = v1alpha1.WorkflowRunning
	wf.Status.StartedAt = at
	wf.Status.Nodes = v1alpha1.Nodes{name: {ID: name, Name: name, DisplayName: name, Type: v1alpha1.NodeTypeSuspend, Phase: v1alpha1.NodeRunning, StartedAt: at}}
	if err := st.Update(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
}

// watchStream opens a REST watch and returns a reader of its frames.
type watchStream struct {
	res *http.Response
	rd  *bufio.Reader
	raw bytes.Buffer // every byte read
}

func openWatch(t *testing.T, url, accept string) *watchStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Body.Close() })
	w := &watchStream{res: res}
	w.rd = bufio.NewReader(io.TeeReader(res.Body, &w.raw))
	return w
}

// next reads one message line (skipping SSE blank lines) and returns it.
func (w *watchStream) next(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = w.res.Body.Close()
		}
	}()
	for {
		line, err := w.rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (read %q)", err, w.raw.String())
		}
		if len(line) > 6 { // the argo CLI's own rule
			return line
		}
	}
}

func TestWatchFraming(t *testing.T) {
	for _, tc := range []struct {
		name, accept, golden string
	}{
		{"sse", "text/event-stream", "watch-sse.golden"},
		{"ndjson", "", "watch-ndjson.golden"},
		{"sse accept not exact", "text/event-stream, */*", "watch-ndjson.golden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, st := startServerStore(t, Options{})
			createWorkflow(t, st, "argo", "other", nil)
			createWorkflow(t, st, "argo", "wf-1", map[string]string{"app": "a"})
			w := openWatch(t, "http://"+addr+"/api/v1/workflow-events/argo?listOptions.fieldSelector=metadata.name%3Dwf-1&listOptions.resourceVersion=0&listOptions.timeoutSeconds=1", tc.accept)
			if w.res.StatusCode != 200 {
				t.Fatalf("status %d", w.res.StatusCode)
			}
			if te := w.res.TransferEncoding; len(te) != 1 || te[0] != "chunked" {
				t.Errorf("Transfer-Encoding = %v, want chunked", te)
			}
			wantCT := map[bool]string{true: "text/event-stream", false: "application/json"}[tc.accept == "text/event-stream"]
			if ct := w.res.Header.Get("Content-Type"); ct != wantCT {
				t.Errorf("Content-Type = %q, want %q", ct, wantCT)
			}
			if !strings.Contains(w.next(t), `"type":"ADDED"`) {
				t.Fatalf("first event is not ADDED: %q", w.raw.String())
			}
			runWorkflow(t, st, "argo", "other") // filtered out by the name selector
			runWorkflow(t, st, "argo", "wf-1")
			if !strings.Contains(w.next(t), `"type":"MODIFIED"`) {
				t.Fatalf("second event is not MODIFIED: %q", w.raw.String())
			}
			if err := st.Delete(context.Background(), store.KindWorkflow, "argo", "wf-1"); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(w.next(t), `"type":"DELETED"`) {
				t.Fatalf("third event is not DELETED: %q", w.raw.String())
			}
			// listOptions.timeoutSeconds ends the stream cleanly: no error
			// frame, only the end of the DELETED frame.
			wantRest := map[bool]string{true: "\n\n", false: ""}[tc.accept == "text/event-stream"]
			if rest, err := io.ReadAll(w.rd); err != nil || string(rest) != wantRest {
				t.Errorf("after DELETED: %q, %v", rest, err)
			}
			golden(t, tc.golden, normalise(w.raw.Bytes()))
		})
	}
}

func TestWatchErrorsBeforeStream(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	createWorkflow(t, st, "argo", "wf-1", nil)
	base := "http://" + addr + "/api/v1/workflow-events/"
	for _, tc := range []struct {
		name, path string
		status     int
		body       string
	}{
		{"unknown name", "argo?listOptions.fieldSelector=metadata.name%3Dnope", 404, `{"code":5,"message":"workflows.argoproj.io \"nope\" not found"}`},
		{"unknown name all namespaces", "?listOptions.fieldSelector=metadata.name%3Dnope", 404, `{"code":5,"message":"workflows.argoproj.io \"nope\" not found"}`},
		{"@latest of an empty namespace", "empty?listOptions.fieldSelector=metadata.name%3D@latest", 404, `{"code":5,"message":"no workflows found"}`},
		{"bad label selector", "argo?listOptions.labelSelector=a%3D%3D%3Db", 400, ""},
		{"unsupported field", "argo?listOptions.fieldSelector=spec.entrypoint%3Dx", 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := do(t, "GET", base+tc.path, "")
			if res.status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.status, tc.status, res.body)
			}
			if got := strings.TrimSpace(string(res.body)); tc.body != "" && got != tc.body {
				t.Errorf("body %s, want %s", got, tc.body)
			}
			if e := decodeInto[errJSON](t, res.body); e.Code == 0 || e.Message == "" {
				t.Errorf("error body %s", res.body)
			}
		})
	}
}

// watchEnvelope is one decoded watch message.
type watchEnvelope struct {
	Result struct {
		Type   string `json:"type"`
		Object struct {
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
			Status struct {
				Nodes map[string]any `json:"nodes"`
			} `json:"status"`
		} `json:"object"`
	} `json:"result"`
}

// A label-selector watch over all namespaces: current matches first, an
// object that stops matching is DELETED, one that starts is ADDED, and
// workflow events carry their nodes; @latest resolves in the name selector.
func TestWatchSelectors(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	createWorkflow(t, st, "ns1", "a", map[string]string{"app": "x"})
	createWorkflow(t, st, "ns2", "b", map[string]string{"app": "y"})
	w := openWatch(t, "http://"+addr+"/api/v1/workflow-events/?listOptions.labelSelector=app%3Dx&fields=result.object.metadata.name,result.object.status.nodes", "")
	want := func(typ, name string, nodes bool) {
		t.Helper()
		line := w.next(t)
		ev := decodeInto[watchEnvelope](t, []byte(line))
		r := ev.Result
		if r.Type != typ || r.Object.Metadata.Name != name || (len(r.Object.Status.Nodes) > 0) != nodes {
			t.Fatalf("event %s, want %s %s (nodes %v)", line, typ, name, nodes)
		}
		if r.Object.Metadata.Namespace != "" {
			t.Errorf("fields kept metadata.namespace: %s", line)
		}
	}
	want("ADDED", "a", false)
	runWorkflow(t, st, "ns1", "a")
	want("MODIFIED", "a", true)
	relabel := func(ns, name, app string) {
		o, err := st.Get(context.Background(), store.KindWorkflow, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		o.SetLabels(map[string]string{"app": app})
		if err := st.Update(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	relabel("ns1", "a", "z")
	want("DELETED", "a", false) // DELETED carries the store's event object: no nodes
	relabel("ns2", "b", "x")
	want("ADDED", "b", false)
	createWorkflow(t, st, "ns3", "c", map[string]string{"app": "x"})
	want("ADDED", "c", false)

	// @latest is the newest workflow of the namespace.
	createWorkflow(t, st, "ns1", "newest", nil)
	w2 := openWatch(t, "http://"+addr+"/api/v1/workflow-events/ns1?listOptions.fieldSelector=metadata.name%3D@latest", "text/event-stream")
	if line := w2.next(t); !strings.HasPrefix(line, `data: {"result":{"type":"ADDED","object":{`) || !strings.Contains(line, `"name":"newest"`) {
		t.Errorf("@latest watch: %q", line)
	}
}

// A watch from a resourceVersion other than "0" (the UI's list-then-watch)
// sends no current objects; a workflow that starts to match its selector
// comes as ADDED, as does the first change of one the stream has not sent,
// and later changes as MODIFIED.
func TestWatchFromNowAddsWhatTheStreamHasNotSent(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	createWorkflow(t, st, "argo", "a", map[string]string{"app": "x"})
	createWorkflow(t, st, "argo", "b", map[string]string{"app": "y"})
	w := openWatch(t, "http://"+addr+"/api/v1/workflow-events/argo?listOptions.labelSelector=app%3Dx&listOptions.resourceVersion=123&fields=result.type,result.object.metadata.name", "")
	want := func(typ, name string) {
		t.Helper()
		line := w.next(t)
		if r := decodeInto[watchEnvelope](t, []byte(line)).Result; r.Type != typ || r.Object.Metadata.Name != name {
			t.Fatalf("event %s, want %s %s", line, typ, name)
		}
	}
	relabel := func(name, app string) {
		t.Helper()
		o, err := st.Get(context.Background(), store.KindWorkflow, "argo", name)
		if err != nil {
			t.Fatal(err)
		}
		o.SetLabels(map[string]string{"app": app, "touched": time.Now().String()})
		if err := st.Update(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	relabel("b", "x") // starts to match
	want("ADDED", "b")
	relabel("b", "x")
	want("MODIFIED", "b")
	relabel("a", "x") // matched all along, but never sent
	want("ADDED", "a")
	relabel("a", "x")
	want("MODIFIED", "a")
}

func TestWatchGRPC(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	createWorkflow(t, st, "argo", "wf-1", nil)
	runWorkflow(t, st, "argo", "wf-1")
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := workflow.NewWorkflowServiceClient(conn)

	if s, err := c.WatchWorkflows(ctx, &workflow.WatchWorkflowsRequest{Namespace: "argo", ListOptions: &metav1.ListOptions{FieldSelector: "metadata.name=nope"}}); err == nil {
		if _, err = s.Recv(); status.Code(err) != codes.NotFound {
			t.Errorf("unknown name: %v", err)
		}
	}
	s, err := c.WatchWorkflows(ctx, &workflow.WatchWorkflowsRequest{Namespace: "argo", ListOptions: &metav1.ListOptions{FieldSelector: "metadata.name=wf-1", ResourceVersion: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	wf := ev.GetObject()
	if wf == nil {
		t.Fatal("an event without its workflow")
	}
	if ev.GetType() != "ADDED" || wf.Name != "wf-1" || wf.Status.Phase != v1alpha1.WorkflowRunning || len(wf.Status.Nodes) != 1 {
		t.Errorf("first event %s %s %s with %d nodes", ev.GetType(), wf.Name, wf.Status.Phase, len(wf.Status.Nodes))
	}
	if err := st.Delete(ctx, store.KindWorkflow, "argo", "wf-1"); err != nil {
		t.Fatal(err)
	}
	if ev, err = s.Recv(); err != nil || ev.GetType() != "DELETED" {
		t.Errorf("second event %v, %v", ev, err)
	}
}

// WatchEvents opens and stays open, empty, until the client leaves.
func TestWatchEvents(t *testing.T) {
	addr, _ := startServerStore(t, Options{KeepAlive: 20 * time.Millisecond})
	w := openWatch(t, "http://"+addr+"/api/v1/stream/events/argo", "text/event-stream")
	if w.res.StatusCode != 200 || w.res.Header.Get("Content-Type") != "text/event-stream" || w.res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("status %d, headers %v", w.res.StatusCode, w.res.Header)
	}
	line, err := w.rd.ReadString('\n')
	if err != nil || line != ":\n" {
		t.Errorf("first line %q, %v; want a keep-alive", line, err)
	}
}

// Streams end when the server stops, so that Serve returns promptly.
func TestStreamsEndOnShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), ShutdownTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	w := openWatch(t, "http://"+l.Addr().String()+"/api/v1/workflow-events/argo", "")
	if w.res.StatusCode != 200 {
		t.Fatalf("status %d", w.res.StatusCode)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Serve took %v to stop with an open watch", d)
	}
}
