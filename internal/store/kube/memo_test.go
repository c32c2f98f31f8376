package kube_test

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// TestMemosConfigMap: the memoization cache lives in a ConfigMap per cache,
// Argo's way, on a real apiserver.
func TestMemosConfigMap(t *testing.T) {
	c := newCluster(t)
	client, err := kubernetes.NewForConfig(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	t.Cleanup(func() {
		_ = client.CoreV1().ConfigMaps(c.ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m := kube.NewMemos(client, func() time.Time { return now }, c.ns)
	val := v1alpha1.AnyStringPtr("hello")
	out := &v1alpha1.Outputs{Parameters: []v1alpha1.Parameter{{Name: "p", Value: val}}}

	if _, ok, err := m.LoadMemo(ctx, c.ns, "my-cache", "k1"); ok || err != nil {
		t.Fatalf("load from a missing cache: ok %v err %v", ok, err)
	}
	if err := m.SaveMemo(ctx, store.MemoEntry{Namespace: c.ns, Cache: "my-cache", Key: "k1", NodeID: "n1", Outputs: out}); err != nil {
		t.Fatal(err)
	}
	e, ok, err := m.LoadMemo(ctx, c.ns, "my-cache", "k1")
	if err != nil || !ok || e.NodeID != "n1" || e.Outputs == nil || e.Outputs.Parameters[0].Value.String() != "hello" || !e.CreatedAt.Equal(now) {
		t.Fatalf("load after save: %+v ok %v err %v", e, ok, err)
	}
	cm, err := client.CoreV1().ConfigMaps(c.ns).Get(ctx, "my-cache", metav1.GetOptions{})
	if err != nil || cm.Labels[kube.LabelConfigMapType] != kube.ConfigMapTypeCache {
		t.Fatalf("cache ConfigMap: %v %v", cm.GetLabels(), err)
	}
	rv := cm.ResourceVersion

	now = now.Add(time.Hour)
	if err := m.SaveMemo(ctx, store.MemoEntry{Namespace: c.ns, Cache: "my-cache", Key: "k1", NodeID: "n1", Outputs: out}); err != nil {
		t.Fatal(err)
	}
	if cm, _ := client.CoreV1().ConfigMaps(c.ns).Get(ctx, "my-cache", metav1.GetOptions{}); cm.ResourceVersion != rv {
		t.Error("saving the same node's entry again wrote the ConfigMap")
	}
	if err := m.HitMemo(ctx, c.ns, "my-cache", "k1"); err != nil {
		t.Fatal(err)
	}
	if e, _, _ := m.LoadMemo(ctx, c.ns, "my-cache", "k1"); !e.LastHitAt.Equal(now) || !e.CreatedAt.Equal(now.Add(-time.Hour)) {
		t.Errorf("after a hit: created %v last hit %v", e.CreatedAt, e.LastHitAt)
	}
	if err := m.HitMemo(ctx, c.ns, "no-such-cache", "k1"); err != nil {
		t.Errorf("hit on a missing cache: %v", err)
	}
	now = now.Add(time.Hour) // k1 last hit an hour ago, k2 saved now
	if err := m.SaveMemo(ctx, store.MemoEntry{Namespace: c.ns, Cache: "my-cache", Key: "k2", NodeID: "n2"}); err != nil {
		t.Fatal(err)
	}
	n, err := m.PruneMemos(ctx, now.Add(-30*time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("prune: %d %v, want 1", n, err)
	}
	if _, ok, _ := m.LoadMemo(ctx, c.ns, "my-cache", "k1"); ok {
		t.Error("k1 survived the prune")
	}
	if _, ok, _ := m.LoadMemo(ctx, c.ns, "my-cache", "k2"); !ok {
		t.Error("k2 was pruned")
	}

	bad := []store.MemoEntry{
		{Namespace: c.ns, Cache: "my-cache", Key: "has space", NodeID: "n"},
		{Namespace: c.ns, Cache: "Bad_Cache", Key: "k", NodeID: "n"},
		{Namespace: c.ns, Cache: "my-cache", Key: "k"},
	}
	for _, e := range bad {
		if err := m.SaveMemo(ctx, e); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("save %+v: %v, want ErrInvalid", e, err)
		}
	}
}
