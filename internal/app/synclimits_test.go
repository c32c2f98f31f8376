package app

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	syncapi "github.com/braidwf/braid/pkg/apiclient/sync"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"github.com/braidwf/braid/pkg/wirecodec"
)

const limitsConfig = `configMaps:
  file-limits: {from-file: "3"}
synchronization:
  limits: {"argo/file-db": 4}
`

// syncEnv is braid on one machine with its API server: the embedded
// backend, and a REST base URL and a gRPC client of the sync service.
type syncEnv struct {
	e    *Embedded
	base string
	grpc syncapi.SyncServiceClient
}

func newSyncEnv(t *testing.T) *syncEnv {
	t.Helper()
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgFile, []byte(limitsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := OpenEmbedded(context.Background(), EmbeddedConfig{DataDir: filepath.Join(dir, "data"), ConfigFile: cfgFile,
		Isolation: local.IsolationNone})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Store: e.Store, SyncLimits: e.limits})
	if err != nil {
		t.Fatal(errors.Join(err, e.Close()))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(wirecodec.CodecV2{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return &syncEnv{e: e, base: "http://" + l.Addr().String(), grpc: syncapi.NewSyncServiceClient(conn)}
}

// rest sends one request and returns the status and body.
func (s *syncEnv) rest(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

func (s *syncEnv) cmValue(t *testing.T, cm, key string) string {
	t.Helper()
	v, ok := s.e.limits.configMapValue("argo", cm, key)
	if !ok {
		return "<none>"
	}
	return v
}

// A limit set through the API is what the controller's semaphores read
// (Admission.ConfigMapValue and DatabaseLimit), over the config file's.
func TestEmbeddedSyncLimitsReachAdmission(t *testing.T) {
	s := newSyncEnv(t)
	ctx := context.Background()

	if v := s.cmValue(t, "limits", "workers"); v != "<none>" {
		t.Fatalf("before Create: %s", v)
	}
	code, body := s.rest(t, "POST", "/api/v1/sync/argo", `{"type":"CONFIGMAP","cmName":"limits","key":"workers","limit":2}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	if v := s.cmValue(t, "limits", "workers"); v != "2" {
		t.Fatalf("ConfigMapValue after Create: %s, want 2", v)
	}
	if _, err := s.grpc.UpdateSyncLimit(ctx, &syncapi.UpdateSyncLimitRequest{Namespace: "argo", CmName: "limits", Key: "workers", Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if v := s.cmValue(t, "limits", "workers"); v != "5" {
		t.Fatalf("ConfigMapValue after Update: %s, want 5", v)
	}
	if code, body := s.rest(t, "DELETE", "/api/v1/sync/argo/workers?cmName=limits", ""); code != 200 {
		t.Fatalf("delete: %d %s", code, body)
	}
	if v := s.cmValue(t, "limits", "workers"); v != "<none>" {
		t.Fatalf("ConfigMapValue after Delete: %s", v)
	}

	// Database limits.
	if _, err := s.grpc.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Type: syncapi.SyncConfigType_DATABASE, Namespace: "argo", Key: "db", Limit: 6}); err != nil {
		t.Fatal(err)
	}
	if n, ok := s.e.limits.databaseLimit("argo/db"); !ok || n != 6 {
		t.Fatalf("DatabaseLimit after Create: %d %v, want 6", n, ok)
	}
	if n, ok := s.e.limits.databaseLimit("argo/file-db"); !ok || n != 4 {
		t.Fatalf("DatabaseLimit of the file's limit: %d %v, want 4", n, ok)
	}
}

// The config file's limits show through the API; an update keeps the new
// value in the store, over the file's; a delete brings the file's back;
// the file's own cannot be deleted.
func TestEmbeddedSyncLimitsOverConfigFile(t *testing.T) {
	s := newSyncEnv(t)
	ctx := context.Background()
	get := &syncapi.GetSyncLimitRequest{Namespace: "argo", CmName: "file-limits", Key: "from-file"}
	if r, err := s.grpc.GetSyncLimit(ctx, get); err != nil || r.Limit != 3 {
		t.Fatalf("get the file's limit: %v, %v", r, err)
	}
	_, err := s.grpc.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Namespace: "argo", CmName: "file-limits", Key: "from-file", Limit: 1})
	wantCode(t, err, codes.AlreadyExists, "create over the file's key")
	if _, err := s.grpc.UpdateSyncLimit(ctx, &syncapi.UpdateSyncLimitRequest{Namespace: "argo", CmName: "file-limits", Key: "from-file", Limit: 7}); err != nil {
		t.Fatal(err)
	}
	if v := s.cmValue(t, "file-limits", "from-file"); v != "7" {
		t.Fatalf("ConfigMapValue after Update of the file's key: %s, want 7", v)
	}
	del := &syncapi.DeleteSyncLimitRequest{Namespace: "argo", CmName: "file-limits", Key: "from-file"}
	if _, err := s.grpc.DeleteSyncLimit(ctx, del); err != nil {
		t.Fatal(err)
	}
	if v := s.cmValue(t, "file-limits", "from-file"); v != "3" {
		t.Fatalf("ConfigMapValue after Delete: %s, want the file's 3", v)
	}
	_, err = s.grpc.DeleteSyncLimit(ctx, del)
	wantCode(t, err, codes.FailedPrecondition, "delete of the file's key")
	// A key the file's ConfigMap lacks: done, as argo-server (the ConfigMap exists).
	if _, err := s.grpc.DeleteSyncLimit(ctx, &syncapi.DeleteSyncLimitRequest{Namespace: "argo", CmName: "file-limits", Key: "nope"}); err != nil {
		t.Errorf("delete of a missing key of an existing ConfigMap: %v", err)
	}
	_, err = s.grpc.DeleteSyncLimit(ctx, &syncapi.DeleteSyncLimitRequest{Namespace: "argo", CmName: "nowhere", Key: "k"})
	wantCode(t, err, codes.NotFound, "delete in a missing ConfigMap")

	_, err = s.grpc.DeleteSyncLimit(ctx, &syncapi.DeleteSyncLimitRequest{Type: syncapi.SyncConfigType_DATABASE, Namespace: "argo", Key: "file-db"})
	wantCode(t, err, codes.FailedPrecondition, "delete of the file's database limit")
}

func wantCode(t *testing.T, err error, want codes.Code, what string) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Fatalf("%s: %v (%v), want %v", what, got, err, want)
	}
}

const semaphoreWF = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: sem-wait}
spec:
  entrypoint: main
  synchronization:
    semaphores: [{configMapKeyRef: {name: api-limits, key: wf}}]
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, "echo ran"]}
`

// A workflow waiting for a semaphore that has no limit runs once the limit
// is created through the API, with no restart and no config file change:
// the write tells the controller.
func TestEmbeddedSyncLimitReleasesWaitingWorkflow(t *testing.T) {
	s := newSyncEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	file := filepath.Join(t.TempDir(), "wf.yaml")
	if err := os.WriteFile(file, []byte(semaphoreWF), 0o600); err != nil {
		t.Fatal(err)
	}
	wf, cat, err := loadWorkflow(file)
	if err != nil {
		t.Fatal(err)
	}
	wf.Namespace = "argo"

	type result struct {
		wf  *v1alpha1.Workflow
		err error
	}
	done := make(chan result, 1)
	go func() {
		final, err := s.e.Run(ctx, wf, cat, nil, nil)
		done <- result{final, err}
	}()
	// The controller records why the workflow waits.
	waiting := make(chan struct{})
	go func() {
		for ctx.Err() == nil {
			obj, err := s.e.Store.Get(ctx, store.KindWorkflow, "argo", "sem-wait")
			if w, ok := obj.(*v1alpha1.Workflow); err == nil && ok {
				if strings.Contains(w.Status.Message, "failed to get semaphore limit") {
					close(waiting)
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	select {
	case <-waiting:
	case r := <-done:
		t.Fatalf("the workflow ended before the limit existed: %s, %v", phaseOf(r.wf), r.err)
	case <-ctx.Done():
		t.Fatal("the workflow never waited for the semaphore")
	}
	code, body := s.rest(t, "POST", "/api/v1/sync/argo", `{"cmName":"api-limits","key":"wf","limit":1}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	r := <-done
	if r.err != nil || r.wf == nil || r.wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("after the limit was created: %s, %v", phaseOf(r.wf), r.err)
	}
}

func phaseOf(wf *v1alpha1.Workflow) string {
	if wf == nil {
		return "<no workflow>"
	}
	return string(wf.Status.Phase) + " (" + wf.Status.Message + ")"
}

// loadWorkflow reads the one Workflow of file, with a catalog of the
// file's documents for its template references.
func loadWorkflow(file string) (*v1alpha1.Workflow, *spec.Catalog, error) {
	docs, err := spec.LoadFile(file, spec.Strict)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range docs {
		if wf, ok := d.Object.(*v1alpha1.Workflow); ok {
			return wf, spec.NewCatalog(docs), nil
		}
	}
	return nil, nil, errors.New(file + ": no Workflow")
}
