package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
)

// BenchmarkAuthOverhead is a cheap authorized request (list the workflows
// of an empty namespace) with the server-mode gatekeeper (no checks) and
// with client mode and a named token: the difference is what auth adds
// per request, over REST (in-process handler) and gRPC (loopback).
func BenchmarkAuthOverhead(b *testing.B) {
	dir := b.TempDir()
	tokens, err := auth.OpenTokens(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	cred, err := tokens.Create(auth.Token{Name: "ci", Grant: auth.Grant{Namespaces: []string{"a"}, Verbs: []string{"list"}}}, 0)
	if err != nil {
		b.Fatal(err)
	}
	client, err := auth.NewGatekeeper(auth.Config{Modes: []auth.Mode{auth.ModeClient}, Client: tokens})
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		gk   *auth.Gatekeeper
	}{{"server-mode", auth.ServerOnly()}, {"client-mode", client}} {
		st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "braid.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Auth: mode.gk})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("rest/"+mode.name, func(b *testing.B) {
			h := srv.Handler()
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/v1/workflows/a", nil)
				req.Header.Set("Authorization", cred)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
		b.Run("grpc/"+mode.name, func(b *testing.B) {
			addr, _ := startServerStore(b, Options{Auth: mode.gk})
			cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Close()
			wfc := workflow.NewWorkflowServiceClient(cc)
			ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", cred)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := wfc.ListWorkflows(ctx, &workflow.WorkflowListRequest{Namespace: "a"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		_ = st.Close()
	}
}
