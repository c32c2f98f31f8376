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
// Argo's way, on a real apiserver. (What every memo cache does is in
// TestContract.)
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
	out := &v1alpha1.Outputs{Parameters: []v1alpha1.Parameter{{Name: "p", Value: v1alpha1.AnyStringPtr("hello")}}}

	if err := m.SaveMemo(ctx, store.MemoEntry{Namespace: c.ns, Cache: "my-cache", Key: "k1", NodeID: "n1", Outputs: out}); err != nil {
		t.Fatal(err)
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

	// A cache must name a ConfigMap, and a key be a ConfigMap key.
	bad := []store.MemoEntry{
		{Namespace: c.ns, Cache: "my-cache", Key: "has space", NodeID: "n"},
		{Namespace: c.ns, Cache: "Bad_Cache", Key: "k", NodeID: "n"},
	}
	for _, e := range bad {
		if err := m.SaveMemo(ctx, e); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("save %+v: %v, want ErrInvalid", e, err)
		}
	}
}
