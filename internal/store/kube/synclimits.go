package kube

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/braidwf/braid/internal/store"
)

// ConfigMapLimits keeps semaphore limits where Argo's sync service keeps
// them: the key of a ConfigMap (configMapKeyRef) whose value is the limit,
// written through client, read-modify-write under optimistic concurrency.
// A ConfigMap that is missing is created by CreateSyncLimit. It keeps only
// ConfigMap limits: a database limit's ref (ConfigMap "") is
// store.ErrInvalid.
type ConfigMapLimits struct {
	client kubernetes.Interface
}

// NewConfigMapLimits returns the ConfigMap limits reached through client.
func NewConfigMapLimits(client kubernetes.Interface) *ConfigMapLimits {
	return &ConfigMapLimits{client: client}
}

// GetSyncLimit reads the key's limit: store.ErrNotFound when the
// ConfigMap or the key is missing, store.ErrInvalid when the value is not
// an integer.
func (c *ConfigMapLimits) GetSyncLimit(ctx context.Context, r store.SyncLimitRef) (int, error) {
	if err := checkLimitRef(r); err != nil {
		return 0, err
	}
	cm, err := c.client.CoreV1().ConfigMaps(r.Namespace).Get(ctx, r.ConfigMap, metav1.GetOptions{})
	if err != nil {
		return 0, limitErr(err, r)
	}
	v, ok := cm.Data[r.Key]
	if !ok {
		return 0, fmt.Errorf("sync limit %s: the ConfigMap has no such key: %w", r, store.ErrNotFound)
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("sync limit %s: %q is not an integer: %w", r, v, store.ErrInvalid)
	}
	return n, nil
}

// CreateSyncLimit sets the key to limit, creating the ConfigMap when it is
// missing; store.ErrAlreadyExists when the key is set.
func (c *ConfigMapLimits) CreateSyncLimit(ctx context.Context, r store.SyncLimitRef, limit int) error {
	return c.update(ctx, r, true, func(data map[string]string) (bool, error) {
		if _, ok := data[r.Key]; ok {
			return false, fmt.Errorf("sync limit %s: %w", r, store.ErrAlreadyExists)
		}
		data[r.Key] = strconv.Itoa(limit)
		return true, nil
	})
}

// UpdateSyncLimit sets the key to limit; store.ErrNotFound when the
// ConfigMap or the key is missing.
func (c *ConfigMapLimits) UpdateSyncLimit(ctx context.Context, r store.SyncLimitRef, limit int) error {
	return c.update(ctx, r, false, func(data map[string]string) (bool, error) {
		if _, ok := data[r.Key]; !ok {
			return false, fmt.Errorf("sync limit %s: the ConfigMap has no such key: %w", r, store.ErrNotFound)
		}
		v := strconv.Itoa(limit)
		changed := data[r.Key] != v
		data[r.Key] = v
		return changed, nil
	})
}

// DeleteSyncLimit removes the key; one that is not set is no error, a
// ConfigMap that is missing is store.ErrNotFound (as argo-server).
func (c *ConfigMapLimits) DeleteSyncLimit(ctx context.Context, r store.SyncLimitRef) error {
	return c.update(ctx, r, false, func(data map[string]string) (bool, error) {
		_, ok := data[r.Key]
		delete(data, r.Key)
		return ok, nil
	})
}

// update applies change to the ConfigMap's data and writes it when change
// reports a change, retrying on a conflict; create makes a missing
// ConfigMap, else a missing one is store.ErrNotFound.
func (c *ConfigMapLimits) update(ctx context.Context, r store.SyncLimitRef, create bool,
	change func(map[string]string) (bool, error)) error {
	if err := checkLimitRef(r); err != nil {
		return err
	}
	cms := c.client.CoreV1().ConfigMaps(r.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, r.ConfigMap, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && create {
			cm = &apiv1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: r.ConfigMap, Namespace: r.Namespace}, Data: map[string]string{}}
			if _, err := change(cm.Data); err != nil {
				return err
			}
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(apiv1.Resource("configmaps"), r.ConfigMap, err) // made meanwhile: again
			}
			return limitErr(err, r)
		}
		if err != nil {
			return limitErr(err, r)
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		changed, err := change(cm.Data)
		if err != nil || !changed {
			return err
		}
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			return err
		}
		return limitErr(err, r)
	})
}

func checkLimitRef(r store.SyncLimitRef) error {
	if r.Namespace == "" || r.ConfigMap == "" || r.Key == "" {
		return fmt.Errorf("sync limit %s: a ConfigMap limit needs a namespace, a ConfigMap and a key: %w", r, store.ErrInvalid)
	}
	return nil
}

// limitErr wraps an API server's error with the store's sentinel for it.
func limitErr(err error, r store.SyncLimitRef) error {
	var sentinel error
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		sentinel = store.ErrNotFound
	case apierrors.IsForbidden(err):
		sentinel = store.ErrForbidden
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		sentinel = store.ErrInvalid
	default:
		return fmt.Errorf("sync limit %s: ConfigMap: %w", r, err)
	}
	return fmt.Errorf("sync limit %s: ConfigMap: %w", r, errors.Join(sentinel, err))
}
