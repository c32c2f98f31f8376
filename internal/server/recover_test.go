package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
)

// panickyStore is the real SQLite store, except that reading from or
// watching namespace "boom" panics: a handler bug, which no real store
// produces on demand.
type panickyStore struct{ *sqlite.Store }

func (p panickyStore) Get(ctx context.Context, kind store.Kind, ns, name string) (store.Object, error) {
	if ns == "boom" {
		panic("a bug in a handler")
	}
	return p.Store.Get(ctx, kind, ns, name)
}

func (p panickyStore) Watch(ctx context.Context, kind store.Kind, ns string) (<-chan store.Event, error) {
	if ns == "boom" {
		panic(errors.New("a bug in a stream"))
	}
	return p.Store.Watch(ctx, kind, ns)
}

// A panic in a handler fails that request alone (gRPC Internal, HTTP 500
// with a short message), is counted, and the server goes on serving.
func TestHandlerPanicsAreRecovered(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	srv, err := New(Options{Store: panickyStore{st}, Capabilities: sqliteCaps(st), Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveOn(t, srv)
	base := "http://" + addr

	for _, path := range []string{"/api/v1/workflows/boom/x", "/api/v1/workflow-events/boom"} {
		res := do(t, "GET", base+path, "")
		if res.status != http.StatusInternalServerError {
			t.Fatalf("GET %s: %d %s, want 500", path, res.status, res.body)
		}
		e := decodeInto[errJSON](t, res.body)
		if e.Code != int(codes.Internal) || !strings.Contains(e.Message, "internal error") || strings.Contains(e.Message, "a bug") {
			t.Errorf("GET %s: body %s", path, res.body)
		}
	}

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c := workflow.NewWorkflowServiceClient(conn)
	ctx := context.Background()
	_, err = c.GetWorkflow(ctx, &workflow.WorkflowGetRequest{Namespace: "boom", Name: "x"})
	if status.Code(err) != codes.Internal {
		t.Fatalf("GetWorkflow: %v, want Internal", err)
	}
	ws, err := c.WatchWorkflows(ctx, &workflow.WatchWorkflowsRequest{Namespace: "boom"})
	if err == nil {
		_, err = ws.Recv()
	}
	if status.Code(err) != codes.Internal {
		t.Fatalf("WatchWorkflows: %v, want Internal", err)
	}

	// Still serving, over both protocols.
	if res := do(t, "GET", base+"/api/v1/workflows/argo/missing", ""); res.status != http.StatusNotFound {
		t.Fatalf("after the panics: %d %s", res.status, res.body)
	}
	if _, err := c.GetWorkflow(ctx, &workflow.WorkflowGetRequest{Namespace: "argo", Name: "missing"}); status.Code(err) != codes.NotFound {
		t.Fatalf("after the panics: %v", err)
	}
	if res := do(t, "GET", base+"/healthz", ""); res.status != http.StatusOK {
		t.Fatalf("healthz: %d", res.status)
	}
	// REST get, REST watch, gRPC get, gRPC watch.
	if got := srv.Panics(); got != 4 {
		t.Errorf("Panics() = %d, want 4", got)
	}
}

// /readyz answers 503 with Options.Ready's message until it returns nil;
// /healthz is 200 all along.
func TestReadyzFollowsReady(t *testing.T) {
	var left atomic.Int64
	left.Store(3)
	ready := func() error {
		if n := left.Load(); n > 0 {
			return fmt.Errorf("recovering %d workflows", n)
		}
		return nil
	}
	st := mustStore(t)
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion, Ready: ready})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + serveOn(t, srv)
	res := do(t, "GET", base+"/readyz", "")
	if res.status != http.StatusServiceUnavailable || !strings.Contains(string(res.body), "recovering 3 workflows") {
		t.Fatalf("readyz while recovering: %d %q", res.status, res.body)
	}
	if res := do(t, "GET", base+"/healthz", ""); res.status != http.StatusOK {
		t.Fatalf("healthz while recovering: %d", res.status)
	}
	left.Store(0)
	if res := do(t, "GET", base+"/readyz", ""); res.status != http.StatusOK {
		t.Fatalf("readyz after recovery: %d %q", res.status, res.body)
	}
}

func mustStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
