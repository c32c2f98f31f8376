package kube_test

import (
	"context"
	"errors"
	"testing"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/kube"
)

var _ server.SyncLimits = (*kube.ConfigMapLimits)(nil)

// TestConfigMapLimits: a semaphore limit is a ConfigMap key on a real
// apiserver, written as argo-server's sync service does, next to keys it
// does not touch. (What every store's limits do is in TestContract.)
func TestConfigMapLimits(t *testing.T) {
	c := newCluster(t)
	client, err := kubernetes.NewForConfig(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	cms := client.CoreV1().ConfigMaps(c.ns)
	t.Cleanup(func() {
		_ = cms.DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	l := kube.NewConfigMapLimits(client)
	r := store.SyncLimitRef{Namespace: c.ns, ConfigMap: "limits", Key: "workers"}
	isErr := func(err, want error, what string) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
	}

	if err := l.CreateSyncLimit(ctx, r, 3); err != nil {
		t.Fatal(err)
	}
	cm, err := cms.Get(ctx, "limits", metav1.GetOptions{})
	if err != nil || cm.Data["workers"] != "3" {
		t.Fatalf("the ConfigMap after Create: %v, %v", cm.Data, err)
	}

	// Another key of the same ConfigMap, set by hand, and a value that is
	// not a number.
	cm.Data["other"], cm.Data["bad"] = "9", "many"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = l.GetSyncLimit(ctx, store.SyncLimitRef{Namespace: c.ns, ConfigMap: "limits", Key: "bad"})
	isErr(err, store.ErrInvalid, "Get of a value that is not a number")
	isErr(l.UpdateSyncLimit(ctx, store.SyncLimitRef{Namespace: c.ns, ConfigMap: "limits", Key: "missing"}, 1),
		store.ErrNotFound, "Update of a missing key")

	if err := l.DeleteSyncLimit(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteSyncLimit(ctx, r); err != nil {
		t.Errorf("Delete of a key that is gone, in a ConfigMap that exists: %v (argo-server answers done)", err)
	}
	cm, err = cms.Get(ctx, "limits", metav1.GetOptions{})
	if err != nil || len(cm.Data) != 2 || cm.Data["other"] != "9" {
		t.Fatalf("the other keys after Delete: %v, %v", cm.Data, err)
	}

	// Create in a ConfigMap that exists with no data.
	empty := &apiv1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: c.ns}}
	if _, err := cms.Create(ctx, empty, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := l.CreateSyncLimit(ctx, store.SyncLimitRef{Namespace: c.ns, ConfigMap: "empty", Key: "k"}, 1); err != nil {
		t.Fatalf("Create in a ConfigMap without data: %v", err)
	}
	isErr(l.CreateSyncLimit(ctx, store.SyncLimitRef{Namespace: c.ns, Key: "k"}, 1), store.ErrInvalid, "a database limit")
}
