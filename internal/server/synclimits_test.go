package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	syncapi "github.com/braidwf/braid/pkg/apiclient/sync"
)

var _ SyncLimits = (*sqlite.Store)(nil)

// startSyncServer serves a SQLite store that also keeps the sync limits
// (wrap may change how); it returns the REST base URL and a gRPC client.
func startSyncServer(t *testing.T, wrap func(*sqlite.Store) SyncLimits) (string, syncapi.SyncServiceClient) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	opts := Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion}
	if wrap != nil {
		opts.SyncLimits = wrap(st)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveOn(t, srv)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return "http://" + addr, syncapi.NewSyncServiceClient(conn)
}

func withStore(st *sqlite.Store) SyncLimits { return st }

func grpcCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wantStatus checks a gRPC error's code and that its message holds msg.
func wantStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Errorf("got %v %q, want %v with %q", st.Code(), st.Message(), code, msg)
	}
}

// wantREST checks an HTTP answer's status and that its body holds msg.
func wantREST(t *testing.T, res response, code int, msg string) {
	t.Helper()
	if res.status != code || !strings.Contains(string(res.body), msg) {
		t.Errorf("got %d %s, want %d with %q", res.status, res.body, code, msg)
	}
}

// create -> get -> update -> get -> delete -> get, over REST, of a
// ConfigMap limit.
func TestSyncLimitsREST(t *testing.T) {
	base, _ := startSyncServer(t, withStore)
	url := base + "/api/v1/sync/argo"
	res := do(t, "POST", url, `{"type":"CONFIGMAP","cmName":"limits","key":"workers","limit":2}`)
	if res.status != 200 {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	got := decodeInto[syncapi.SyncLimitResponse](t, res.body)
	if want := (syncapi.SyncLimitResponse{Type: syncapi.SyncConfigType_CONFIGMAP, Namespace: "argo", CmName: "limits", Key: "workers", Limit: 2}); got != want {
		t.Errorf("create answered %+v, want %+v", got, want)
	}
	wantREST(t, do(t, "POST", url, `{"cmName":"limits","key":"workers","limit":3}`), 409,
		"sync limit cannot be created as it already exists")

	res = do(t, "GET", url+"/workers?cmName=limits", "")
	if res.status != 200 || decodeInto[syncapi.SyncLimitResponse](t, res.body).Limit != 2 {
		t.Fatalf("get: %d %s", res.status, res.body)
	}
	res = do(t, "PUT", url+"/workers", `{"cmName":"limits","limit":5}`)
	if res.status != 200 || decodeInto[syncapi.SyncLimitResponse](t, res.body).Limit != 5 {
		t.Fatalf("update: %d %s", res.status, res.body)
	}
	res = do(t, "GET", url+"/workers?cmName=limits&type=CONFIGMAP", "")
	if got := decodeInto[syncapi.SyncLimitResponse](t, res.body); res.status != 200 || got.Limit != 5 || got.Key != "workers" {
		t.Fatalf("get after update: %d %s", res.status, res.body)
	}
	if res := do(t, "DELETE", url+"/workers?cmName=limits", ""); res.status != 200 || string(res.body) != "{}" {
		t.Fatalf("delete: %d %s", res.status, res.body)
	}
	wantREST(t, do(t, "GET", url+"/workers?cmName=limits", ""), 404, "key workers not found in configmap argo/limits")
	wantREST(t, do(t, "PUT", url+"/workers", `{"cmName":"limits","limit":5}`), 404, "please create it first")

	// A database limit, its type by number as Argo's JSON writes it.
	res = do(t, "POST", url, `{"type":1,"key":"db","limit":4}`)
	if got := decodeInto[syncapi.SyncLimitResponse](t, res.body); res.status != 200 || got.Type != syncapi.SyncConfigType_DATABASE || got.CmName != "" || got.Limit != 4 {
		t.Fatalf("create a database limit: %d %s", res.status, res.body)
	}
	res = do(t, "GET", url+"/db?type=DATABASE", "")
	if res.status != 200 || decodeInto[syncapi.SyncLimitResponse](t, res.body).Limit != 4 {
		t.Fatalf("get a database limit: %d %s", res.status, res.body)
	}
	wantREST(t, do(t, "GET", url+"/db?cmName=db", ""), 404, "key db not found in configmap argo/db")
}

// The same over gRPC, of a database limit; then the other answers.
func TestSyncLimitsGRPC(t *testing.T) {
	_, c := startSyncServer(t, withStore)
	ctx := grpcCtx(t)
	db := syncapi.SyncConfigType_DATABASE
	r, err := c.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Type: db, Namespace: "argo", Key: "k", Limit: 2})
	if err != nil || r.Limit != 2 || r.Type != db || r.Key != "k" || r.Namespace != "argo" {
		t.Fatalf("create: %+v %v", r, err)
	}
	_, err = c.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Type: db, Namespace: "argo", Key: "k", Limit: 9})
	wantStatus(t, err, codes.AlreadyExists, `Database sync limit already exists in namespace "argo".`)
	get := &syncapi.GetSyncLimitRequest{Type: db, Namespace: "argo", Key: "k"}
	if r, err := c.GetSyncLimit(ctx, get); err != nil || r.Limit != 2 {
		t.Fatalf("get: %+v %v", r, err)
	}
	if r, err := c.UpdateSyncLimit(ctx, &syncapi.UpdateSyncLimitRequest{Type: db, Namespace: "argo", Key: "k", Limit: 7}); err != nil || r.Limit != 7 {
		t.Fatalf("update: %+v %v", r, err)
	}
	if r, err := c.GetSyncLimit(ctx, get); err != nil || r.Limit != 7 {
		t.Fatalf("get after update: %+v %v", r, err)
	}
	if _, err := c.DeleteSyncLimit(ctx, &syncapi.DeleteSyncLimitRequest{Type: db, Namespace: "argo", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSyncLimit(ctx, get)
	wantStatus(t, err, codes.NotFound, `Database sync limit not found in namespace "argo".`)
	_, err = c.UpdateSyncLimit(ctx, &syncapi.UpdateSyncLimitRequest{Type: db, Namespace: "argo", Key: "k", Limit: 1})
	wantStatus(t, err, codes.NotFound, `Database sync limit not found in namespace "argo".`)
	// As argo-server: deleting a database limit that is not there is done.
	if _, err := c.DeleteSyncLimit(ctx, &syncapi.DeleteSyncLimitRequest{Type: db, Namespace: "argo", Key: "k"}); err != nil {
		t.Errorf("delete of a missing database limit: %v", err)
	}
	// A ConfigMap that does not exist (the store has no key of it).
	_, err = c.DeleteSyncLimit(ctx, &syncapi.DeleteSyncLimitRequest{Namespace: "argo", CmName: "none", Key: "k"})
	wantStatus(t, err, codes.NotFound, `configmaps "none" not found`)
	// A ConfigMap limit and a database limit of one key are two limits.
	if _, err := c.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Namespace: "argo", CmName: "cm", Key: "k", Limit: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSyncLimit(ctx, get)
	wantStatus(t, err, codes.NotFound, "Database sync limit not found")
}

// Bad requests are InvalidArgument (400), checked before the store.
func TestSyncLimitsBadInput(t *testing.T) {
	base, c := startSyncServer(t, withStore)
	ctx := grpcCtx(t)
	cases := []struct {
		req *syncapi.CreateSyncLimitRequest
		msg string
	}{
		{&syncapi.CreateSyncLimitRequest{Namespace: "argo", CmName: "cm", Key: "k"}, "limit must be greater than zero"},
		{&syncapi.CreateSyncLimitRequest{Namespace: "argo", CmName: "cm", Key: "k", Limit: -3}, "limit must be greater than zero"},
		{&syncapi.CreateSyncLimitRequest{Type: 7, Namespace: "argo", Key: "k", Limit: 1}, "unsupported sync config type: 7"},
		{&syncapi.CreateSyncLimitRequest{Namespace: "argo", Key: "k", Limit: 1}, "cmName: Required value"},
		{&syncapi.CreateSyncLimitRequest{Namespace: "argo", CmName: "cm", Limit: 1}, "key: Required value"},
		{&syncapi.CreateSyncLimitRequest{Type: syncapi.SyncConfigType_DATABASE, Namespace: "argo", Limit: 1}, "key: Required value"},
		{&syncapi.CreateSyncLimitRequest{CmName: "cm", Key: "k", Limit: 1}, "namespace: Required value"},
		{&syncapi.CreateSyncLimitRequest{Namespace: "Not A Namespace", CmName: "cm", Key: "k", Limit: 1}, `namespace: Invalid value: "Not A Namespace"`},
		{&syncapi.CreateSyncLimitRequest{Namespace: "argo", CmName: "Bad_Name", Key: "k", Limit: 1}, `cmName: Invalid value: "Bad_Name"`},
		{&syncapi.CreateSyncLimitRequest{Namespace: "argo", CmName: "cm", Key: "a key", Limit: 1}, `key: Invalid value: "a key"`},
		{&syncapi.CreateSyncLimitRequest{Type: syncapi.SyncConfigType_DATABASE, Namespace: "argo", Key: "a/b", Limit: 1}, "must not contain '/'"},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err := c.CreateSyncLimit(ctx, tc.req)
			wantStatus(t, err, codes.InvalidArgument, tc.msg)
			_, err = c.UpdateSyncLimit(ctx, &syncapi.UpdateSyncLimitRequest{Type: tc.req.Type, Namespace: tc.req.Namespace,
				CmName: tc.req.CmName, Key: tc.req.Key, Limit: tc.req.Limit})
			wantStatus(t, err, codes.InvalidArgument, tc.msg)
		})
	}
	_, err := c.GetSyncLimit(ctx, &syncapi.GetSyncLimitRequest{Namespace: "argo", Key: "k"})
	wantStatus(t, err, codes.InvalidArgument, "cmName: Required value")
	_, err = c.DeleteSyncLimit(ctx, &syncapi.DeleteSyncLimitRequest{Type: 2, Namespace: "argo", Key: "k"})
	wantStatus(t, err, codes.InvalidArgument, "unsupported sync config type: 2")

	wantREST(t, do(t, "POST", base+"/api/v1/sync/argo", `{"cmName":"cm","key":"k","limit":0}`), 400, "limit must be greater than zero")
	wantREST(t, do(t, "POST", base+"/api/v1/sync/argo", `{"cmName":"cm","key":"k","limit":"many"}`), 400, "request body is not valid JSON")
	wantREST(t, do(t, "GET", base+"/api/v1/sync/argo/k", ""), 400, "cmName: Required value")
	wantREST(t, do(t, "GET", base+"/api/v1/sync/argo/k?cmName=cm&type=NEITHER", ""), 400, "invalid sync.SyncConfigType")
	// Nothing was written.
	res := do(t, "GET", base+"/api/v1/sync/argo/k?cmName=cm", "")
	wantREST(t, res, 404, "not found")
	var body struct {
		Code int `json:"code"`
	}
	if err := json.Unmarshal(res.body, &body); err != nil || body.Code != int(codes.NotFound) {
		t.Errorf("error body %s: %v", res.body, err)
	}
}

// noDatabase keeps ConfigMap limits only, as braid on Kubernetes does
// without a database.
type noDatabase struct{ *sqlite.Store }

func (n noDatabase) check(r store.SyncLimitRef) error {
	if r.Database() {
		return fmt.Errorf("database sync limits need a database, and none is configured: %w", store.ErrUnavailable)
	}
	return nil
}

func (n noDatabase) GetSyncLimit(ctx context.Context, r store.SyncLimitRef) (int, error) {
	if err := n.check(r); err != nil {
		return 0, err
	}
	return n.Store.GetSyncLimit(ctx, r)
}

func (n noDatabase) CreateSyncLimit(ctx context.Context, r store.SyncLimitRef, l int) error {
	if err := n.check(r); err != nil {
		return err
	}
	return n.Store.CreateSyncLimit(ctx, r, l)
}

// A deployment that cannot keep a kind of limit answers FailedPrecondition
// (400) with its reason; one without SyncLimits, Unimplemented (501).
func TestSyncLimitsUnavailable(t *testing.T) {
	base, c := startSyncServer(t, func(st *sqlite.Store) SyncLimits { return noDatabase{st} })
	ctx := grpcCtx(t)
	_, err := c.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Type: syncapi.SyncConfigType_DATABASE, Namespace: "argo", Key: "k", Limit: 1})
	wantStatus(t, err, codes.FailedPrecondition, "none is configured")
	wantREST(t, do(t, "GET", base+"/api/v1/sync/argo/k?type=1", ""), 400, "none is configured")
	if _, err := c.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Namespace: "argo", CmName: "cm", Key: "k", Limit: 1}); err != nil {
		t.Errorf("a ConfigMap limit: %v", err)
	}

	base, c = startSyncServer(t, nil)
	_, err = c.GetSyncLimit(ctx, &syncapi.GetSyncLimitRequest{Namespace: "argo", CmName: "cm", Key: "k"})
	wantStatus(t, err, codes.Unimplemented, "the sync service (semaphore limits) is not available on this server")
	wantREST(t, do(t, "POST", base+"/api/v1/sync/argo", `{"cmName":"cm","key":"k","limit":1}`), 501, "not available on this server")
}
