package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/store"
	kubestore "github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/internal/store/postgres"
	"github.com/braidwf/braid/internal/store/sqlite"
)

// limitReadTimeout bounds one read of a semaphore's limit by the
// controller.
const limitReadTimeout = 5 * time.Second

var (
	_ server.SyncLimits = (*embeddedLimits)(nil)
	_ server.SyncLimits = kubeLimits{}
)

// embeddedLimits are the semaphore limits of braid on one machine: those
// set through the sync API, kept in the SQLite store, over those of the
// config file (configMaps and synchronization.limits), which stand in for
// Kubernetes ConfigMaps and Argo's limit table. The store's value wins, so
// a limit set through the API changes the semaphore at once.
type embeddedLimits struct {
	store *sqlite.Store
	live  *config.Live
	// changed tells the controller that a limit changed (its
	// LimitsChanged); nil when no controller runs in this process.
	changed func()
}

// configMapValue is the controller's Admission.ConfigMapValue: the store's
// key, else the config file's.
func (l *embeddedLimits) configMapValue(namespace, name, key string) (string, bool) {
	if n, ok := l.stored(store.SyncLimitRef{Namespace: namespace, ConfigMap: name, Key: key}); ok {
		return strconv.Itoa(n), true
	}
	return l.live.ConfigMapValue(namespace, name, key)
}

// databaseLimit is the controller's Admission.DatabaseLimit of
// "namespace/key": the store's, else the config file's.
func (l *embeddedLimits) databaseLimit(key string) (int, bool) {
	if ns, k, ok := strings.Cut(key, "/"); ok {
		if n, ok := l.stored(store.SyncLimitRef{Namespace: ns, Key: k}); ok {
			return n, true
		}
	}
	return l.live.DatabaseLimit(key)
}

// stored reads a limit from the store; any error reads as not set, so
// that the config file's value applies.
func (l *embeddedLimits) stored(r store.SyncLimitRef) (int, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), limitReadTimeout)
	defer cancel()
	n, err := l.store.GetSyncLimit(ctx, r)
	return n, err == nil
}

// inFile is the config file's value of r.
func (l *embeddedLimits) inFile(r store.SyncLimitRef) (string, bool) {
	if r.Database() {
		n, ok := l.live.DatabaseLimit(r.String())
		return strconv.Itoa(n), ok
	}
	return l.live.ConfigMapValue(r.Namespace, r.ConfigMap, r.Key)
}

func (l *embeddedLimits) GetSyncLimit(ctx context.Context, r store.SyncLimitRef) (int, error) {
	n, err := l.store.GetSyncLimit(ctx, r)
	if !errors.Is(err, store.ErrNotFound) {
		return n, err
	}
	v, ok := l.inFile(r)
	if !ok {
		return 0, err
	}
	if n, perr := strconv.Atoi(strings.TrimSpace(v)); perr == nil {
		return n, nil
	}
	return 0, fmt.Errorf("sync limit %s: the config file's value %q is not an integer: %w", r, v, store.ErrInvalid)
}

// CreateSyncLimit refuses a limit the config file sets, as argo-server
// refuses a key its ConfigMap has.
func (l *embeddedLimits) CreateSyncLimit(ctx context.Context, r store.SyncLimitRef, n int) error {
	if _, ok := l.inFile(r); ok {
		return fmt.Errorf("sync limit %s: set in the config file: %w", r, store.ErrAlreadyExists)
	}
	return l.notify(l.store.CreateSyncLimit(ctx, r, n))
}

// UpdateSyncLimit of a limit that only the config file sets keeps the new
// value in the store, where it wins over the file's.
func (l *embeddedLimits) UpdateSyncLimit(ctx context.Context, r store.SyncLimitRef, n int) error {
	err := l.store.UpdateSyncLimit(ctx, r, n)
	if errors.Is(err, store.ErrNotFound) {
		if _, ok := l.inFile(r); ok {
			err = l.store.CreateSyncLimit(ctx, r, n)
		}
	}
	return l.notify(err)
}

// DeleteSyncLimit removes the store's value (the config file's, if any,
// applies again). A limit that only the config file sets cannot be deleted
// here. As argo-server: a ConfigMap key that is not set is no error while
// the ConfigMap exists (the store or the file has a key of it).
func (l *embeddedLimits) DeleteSyncLimit(ctx context.Context, r store.SyncLimitRef) error {
	err := l.store.DeleteSyncLimit(ctx, r)
	if !errors.Is(err, store.ErrNotFound) {
		return l.notify(err)
	}
	if _, ok := l.inFile(r); ok {
		return fmt.Errorf("sync limit %s is set in the config file (%s): edit the file to remove it: %w",
			r, fileSection(r), store.ErrUnavailable)
	}
	if r.Database() {
		return err
	}
	cfg := l.live.Config()
	_, qualified := cfg.ConfigMaps[r.Namespace+"/"+r.ConfigMap]
	_, bare := cfg.ConfigMaps[r.ConfigMap]
	if qualified || bare {
		return nil
	}
	keys, kerr := l.store.SyncLimitKeys(ctx, r.Namespace, r.ConfigMap)
	if kerr != nil {
		return kerr
	}
	if len(keys) > 0 {
		return nil
	}
	return err
}

// notify tells the controller after a write that succeeded.
func (l *embeddedLimits) notify(err error) error {
	if err == nil && l.changed != nil {
		l.changed()
	}
	return err
}

func fileSection(r store.SyncLimitRef) string {
	if r.Database() {
		return "synchronization.limits"
	}
	return "configMaps"
}

// kubeLimits are the semaphore limits of braid on Kubernetes: ConfigMap
// limits in the cluster's ConfigMaps, database limits in the PostgreSQL
// database (the archive's, --archive-dsn) when one is configured.
type kubeLimits struct {
	configMaps *kubestore.ConfigMapLimits
	db         *postgres.Store // nil: none configured
}

func (k kubeLimits) pick(r store.SyncLimitRef) (server.SyncLimits, error) {
	if !r.Database() {
		return k.configMaps, nil
	}
	if k.db == nil {
		return nil, fmt.Errorf("database sync limits need a database, and none is configured "+
			"(give braid --archive-dsn or BRAID_ARCHIVE_DSN, a PostgreSQL database): %w", store.ErrUnavailable)
	}
	return k.db, nil
}

func (k kubeLimits) GetSyncLimit(ctx context.Context, r store.SyncLimitRef) (int, error) {
	l, err := k.pick(r)
	if err != nil {
		return 0, err
	}
	return l.GetSyncLimit(ctx, r)
}

func (k kubeLimits) CreateSyncLimit(ctx context.Context, r store.SyncLimitRef, n int) error {
	l, err := k.pick(r)
	if err != nil {
		return err
	}
	return l.CreateSyncLimit(ctx, r, n)
}

func (k kubeLimits) UpdateSyncLimit(ctx context.Context, r store.SyncLimitRef, n int) error {
	l, err := k.pick(r)
	if err != nil {
		return err
	}
	return l.UpdateSyncLimit(ctx, r, n)
}

func (k kubeLimits) DeleteSyncLimit(ctx context.Context, r store.SyncLimitRef) error {
	l, err := k.pick(r)
	if err != nil {
		return err
	}
	return l.DeleteSyncLimit(ctx, r)
}

// kubeDatabaseLimit is the kube controller's Admission.DatabaseLimit: the
// database's limit when one is configured, else the config file's
// synchronization.limits.
func kubeDatabaseLimit(db *postgres.Store, live *config.Live) func(string) (int, bool) {
	return func(key string) (int, bool) {
		if ns, k, ok := strings.Cut(key, "/"); ok && db != nil {
			ctx, cancel := context.WithTimeout(context.Background(), limitReadTimeout)
			defer cancel()
			if n, err := db.GetSyncLimit(ctx, store.SyncLimitRef{Namespace: ns, Key: k}); err == nil {
				return n, true
			}
		}
		return live.DatabaseLimit(key)
	}
}
