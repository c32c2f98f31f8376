package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server"
	kubestore "github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/internal/store/postgres"
	"github.com/braidwf/braid/internal/store/sqlite"
	syncapi "github.com/braidwf/braid/pkg/apiclient/sync"
	"github.com/braidwf/braid/pkg/wirecodec"
)

// kubeTestClient is a client of $KUBECONFIG's cluster, or skips the test.
func kubeTestClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		if os.Getenv("BRAID_REQUIRE_KUBE") == "1" {
			t.Fatal("KUBECONFIG is unset and BRAID_REQUIRE_KUBE=1")
		}
		t.Skip("KUBECONFIG is unset: start a cluster with `make kube-up` and export the KUBECONFIG it prints")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// testNamespace creates a namespace of the test's own and removes it (and
// its ConfigMaps) at the end; no namespace controller runs on the test
// node, so the test finalizes it.
func testNamespace(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ns := "braid-sync-" + hex.EncodeToString(b)
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &apiv1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		if n, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
			n.Spec.Finalizers = nil
			_, _ = client.CoreV1().Namespaces().Finalize(ctx, n, metav1.UpdateOptions{})
		}
	})
	return ns
}

// serveSyncLimits serves limits on 127.0.0.1 and returns a gRPC client.
func serveSyncLimits(t *testing.T, limits server.SyncLimits) syncapi.SyncServiceClient {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Store: st, SyncLimits: limits})
	if err != nil {
		t.Fatal(err)
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
		_ = st.Close()
	})
	return syncapi.NewSyncServiceClient(conn)
}

// On Kubernetes a ConfigMap limit is a key of a real ConfigMap, which the
// controller's ConfigMap reader sees; without a database, a database
// limit is refused with the reason.
func TestKubeSyncLimitsConfigMap(t *testing.T) {
	client := kubeTestClient(t)
	ns := testNamespace(t, client)
	c := serveSyncLimits(t, kubeLimits{configMaps: kubestore.NewConfigMapLimits(client)})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	if _, err := c.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Namespace: ns, CmName: "limits", Key: "workers", Limit: 2}); err != nil {
		t.Fatal(err)
	}
	cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "limits", metav1.GetOptions{})
	if err != nil || cm.Data["workers"] != "2" {
		t.Fatalf("the ConfigMap: %v, %v", cm.GetName(), err)
	}
	reader := &configMapValues{client: client, cfg: &config.Config{}}
	if _, err := c.UpdateSyncLimit(ctx, &syncapi.UpdateSyncLimitRequest{Namespace: ns, CmName: "limits", Key: "workers", Limit: 4}); err != nil {
		t.Fatal(err)
	}
	if v, ok := reader.value(ns, "limits", "workers"); !ok || v != "4" {
		t.Fatalf("the controller reads %q %v, want 4", v, ok)
	}
	if r, err := c.GetSyncLimit(ctx, &syncapi.GetSyncLimitRequest{Namespace: ns, CmName: "limits", Key: "workers"}); err != nil || r.Limit != 4 {
		t.Fatalf("get: %+v %v", r, err)
	}
	if _, err := c.DeleteSyncLimit(ctx, &syncapi.DeleteSyncLimitRequest{Namespace: ns, CmName: "limits", Key: "workers"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSyncLimit(ctx, &syncapi.GetSyncLimitRequest{Namespace: ns, CmName: "limits", Key: "workers"})
	wantCode(t, err, codes.NotFound, "get after delete")

	_, err = c.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Type: syncapi.SyncConfigType_DATABASE, Namespace: ns, Key: "k", Limit: 1})
	wantCode(t, err, codes.FailedPrecondition, "a database limit without a database")
}

// With the archive's PostgreSQL database, database limits live there, and
// the controller's DatabaseLimit reads them over the config file's.
func TestKubeSyncLimitsDatabase(t *testing.T) {
	dsn := os.Getenv("BRAID_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("BRAID_REQUIRE_POSTGRES") == "1" {
			t.Fatal("BRAID_TEST_POSTGRES is unset and BRAID_REQUIRE_POSTGRES=1")
		}
		t.Skip("BRAID_TEST_POSTGRES is unset: run `eval \"$(hack/postgres.sh up | tail -1)\"`")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ns := "braid-sync-" + hex.EncodeToString(b) // a namespace of this test's own in the shared table
	c := serveSyncLimits(t, kubeLimits{db: db})
	cfg := &config.Config{Synchronization: config.Synchronization{Limits: map[string]int{ns + "/from-file": 9, ns + "/k": 8}}}
	read := kubeDatabaseLimit(db, config.NewLive(cfg))

	if n, ok := read(ns + "/k"); !ok || n != 8 {
		t.Fatalf("before create, the file's limit: %d %v", n, ok)
	}
	db1 := syncapi.SyncConfigType_DATABASE
	if _, err := c.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Type: db1, Namespace: ns, Key: "k", Limit: 3}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteSyncLimit(context.Background(), &syncapi.DeleteSyncLimitRequest{Type: db1, Namespace: ns, Key: "k"})
	})
	_, err = c.CreateSyncLimit(ctx, &syncapi.CreateSyncLimitRequest{Type: db1, Namespace: ns, Key: "k", Limit: 3})
	wantCode(t, err, codes.AlreadyExists, "create twice")
	if _, err := c.UpdateSyncLimit(ctx, &syncapi.UpdateSyncLimitRequest{Type: db1, Namespace: ns, Key: "k", Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if n, ok := read(ns + "/k"); !ok || n != 5 {
		t.Fatalf("the controller reads %d %v, want 5", n, ok)
	}
	if n, ok := read(ns + "/from-file"); !ok || n != 9 {
		t.Fatalf("the file's limit: %d %v, want 9", n, ok)
	}
	if _, err := c.DeleteSyncLimit(ctx, &syncapi.DeleteSyncLimitRequest{Type: db1, Namespace: ns, Key: "k"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSyncLimit(ctx, &syncapi.GetSyncLimitRequest{Type: db1, Namespace: ns, Key: "k"})
	wantCode(t, err, codes.NotFound, "get after delete")
	if n, _ := read(ns + "/k"); n != 8 {
		t.Fatalf("after delete the controller reads %d, want the file's 8", n)
	}
}
