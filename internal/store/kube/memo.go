package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// LabelConfigMapType marks a ConfigMap braid (and Argo) keeps a
// memoization cache in; its value is ConfigMapTypeCache.
const (
	LabelConfigMapType = "workflows.argoproj.io/configmap-type"
	ConfigMapTypeCache = "Cache"
)

// Memos keeps memoization caches (template memoize) where Argo keeps them:
// one ConfigMap per cache (memoize.cache.configMap.name) in the workflow's
// namespace, one key per entry, whose value is the JSON
// {"nodeID","outputs","creationTimestamp","lastHitTimestamp"}. A user can
// read or clear a cache with kubectl, as with Argo. Writes are
// read-modify-write under optimistic concurrency.
type Memos struct {
	client kubernetes.Interface
	now    func() time.Time
	// namespace, when set, is the only namespace PruneMemos visits.
	namespace string
}

// NewMemos returns the ConfigMap caches reached through client; clock nil
// means time.Now; namespace "" prunes every namespace.
func NewMemos(client kubernetes.Interface, clock func() time.Time, namespace string) *Memos {
	if clock == nil {
		clock = time.Now
	}
	return &Memos{client: client, now: clock, namespace: namespace}
}

// memoValue is one entry's value, in Argo's field names.
type memoValue struct {
	NodeID            string            `json:"nodeID"`
	Outputs           *v1alpha1.Outputs `json:"outputs,omitempty"`
	CreationTimestamp metav1.Time       `json:"creationTimestamp"`
	LastHitTimestamp  metav1.Time       `json:"lastHitTimestamp"`
}

// LoadMemo returns the entry under (namespace, cache, key); ok is false
// when the ConfigMap or the key is missing.
func (m *Memos) LoadMemo(ctx context.Context, namespace, cache, key string) (store.MemoEntry, bool, error) {
	cm, err := m.client.CoreV1().ConfigMaps(namespace).Get(ctx, cache, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return store.MemoEntry{}, false, nil
	}
	if err != nil {
		return store.MemoEntry{}, false, fmt.Errorf("load memo %s/%s[%s]: %w", namespace, cache, key, err)
	}
	raw, ok := cm.Data[key]
	if !ok {
		return store.MemoEntry{}, false, nil
	}
	var v memoValue
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return store.MemoEntry{}, false, fmt.Errorf("load memo %s/%s[%s]: the entry is not a cache entry: %w", namespace, cache, key, err)
	}
	return store.MemoEntry{Namespace: namespace, Cache: cache, Key: key, NodeID: v.NodeID, Outputs: v.Outputs,
		CreatedAt: v.CreationTimestamp.UTC(), LastHitAt: v.LastHitTimestamp.UTC()}, true, nil
}

// SaveMemo stores e.Outputs under e.Key for e.NodeID, created now, creating
// the cache's ConfigMap when it is missing. Saving the same node's entry
// again changes nothing.
func (m *Memos) SaveMemo(ctx context.Context, e store.MemoEntry) error {
	what := e.Namespace + "/" + e.Cache + "[" + e.Key + "]"
	if e.Namespace == "" || e.Cache == "" || e.Key == "" || e.NodeID == "" {
		return fmt.Errorf("save memo %s: namespace, cache, key and node ID are required: %w", what, store.ErrInvalid)
	}
	if err := checkCacheNames(e.Cache, e.Key); err != nil {
		return fmt.Errorf("save memo %s: %w", what, err)
	}
	now := metav1.NewTime(m.now().UTC().Truncate(time.Second))
	val, err := json.Marshal(memoValue{NodeID: e.NodeID, Outputs: e.Outputs, CreationTimestamp: now, LastHitTimestamp: now})
	if err != nil {
		return fmt.Errorf("save memo %s: encode: %w", what, err)
	}
	return m.update(ctx, e.Namespace, e.Cache, true, func(data map[string]string) bool {
		var old memoValue
		if raw, ok := data[e.Key]; ok && json.Unmarshal([]byte(raw), &old) == nil && old.NodeID == e.NodeID {
			return false
		}
		data[e.Key] = string(val)
		return true
	})
}

// HitMemo records that the entry was used now; a missing entry is no error.
func (m *Memos) HitMemo(ctx context.Context, namespace, cache, key string) error {
	now := metav1.NewTime(m.now().UTC().Truncate(time.Second))
	return m.update(ctx, namespace, cache, false, func(data map[string]string) bool {
		var v memoValue
		raw, ok := data[key]
		if !ok || json.Unmarshal([]byte(raw), &v) != nil || v.LastHitTimestamp.Equal(&now) {
			return false
		}
		v.LastHitTimestamp = now
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		data[key] = string(b)
		return true
	})
}

// PruneMemos deletes the entries not used since before, in every cache
// ConfigMap, and returns how many it deleted.
func (m *Memos) PruneMemos(ctx context.Context, before time.Time) (int64, error) {
	list, err := m.client.CoreV1().ConfigMaps(m.namespace).List(ctx, metav1.ListOptions{
		LabelSelector: LabelConfigMapType + "=" + ConfigMapTypeCache})
	if err != nil {
		return 0, fmt.Errorf("prune memos: list caches: %w", err)
	}
	var n int64
	var errs []error
	for _, cm := range list.Items {
		err := m.update(ctx, cm.Namespace, cm.Name, false, func(data map[string]string) bool {
			changed := false
			for k, raw := range data {
				var v memoValue
				if json.Unmarshal([]byte(raw), &v) == nil && v.LastHitTimestamp.Time.Before(before) {
					delete(data, k)
					n++
					changed = true
				}
			}
			return changed
		})
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// update applies change to the cache ConfigMap's data and writes it when
// change reports a change, retrying on a conflict; create makes a missing
// ConfigMap.
func (m *Memos) update(ctx context.Context, namespace, cache string, create bool, change func(map[string]string) bool) error {
	cms := m.client.CoreV1().ConfigMaps(namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, cache, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if !create {
				return nil
			}
			cm = &apiv1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cache, Namespace: namespace,
				Labels: map[string]string{LabelConfigMapType: ConfigMapTypeCache}}, Data: map[string]string{}}
			if !change(cm.Data) {
				return nil
			}
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(apiv1.Resource("configmaps"), cache, err) // someone else made it: retry
			}
			return wrapMemoErr(err, namespace, cache)
		}
		if err != nil {
			return wrapMemoErr(err, namespace, cache)
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		if !change(cm.Data) {
			return nil
		}
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			return err
		}
		return wrapMemoErr(err, namespace, cache)
	})
}

func wrapMemoErr(err error, namespace, cache string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("memo cache ConfigMap %s/%s: %w", namespace, cache, err)
}

// checkCacheNames refuses a cache name that cannot name a ConfigMap and a
// key that cannot be a ConfigMap key, as Argo does.
func checkCacheNames(cache, key string) error {
	if errs := validation.IsDNS1123Subdomain(cache); len(errs) > 0 {
		return fmt.Errorf("cache name %q is not a valid ConfigMap name: %s: %w", cache, strings.Join(errs, "; "), store.ErrInvalid)
	}
	if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
		return fmt.Errorf("memoization key %q is not a valid ConfigMap key: %s: %w", key, strings.Join(errs, "; "), store.ErrInvalid)
	}
	return nil
}
