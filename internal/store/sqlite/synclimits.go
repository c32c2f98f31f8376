package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/braidwf/braid/internal/store"
)

// Semaphore limits set through the sync API: where Argo keeps a
// configMapKeyRef semaphore's limit in a ConfigMap key and a database
// semaphore's in its limit table, braid on one machine keeps one row of
// sync_limits per limit (config_map '' for a database semaphore). A
// ConfigMap here is only its keys: it exists while it has one. Limits are
// not watched: these methods publish no event, and whoever reads the
// limits (the controller's semaphores) reads them again when told.

// GetSyncLimit returns the limit r names; store.ErrNotFound when it is not
// set.
func (s *Store) GetSyncLimit(ctx context.Context, r store.SyncLimitRef) (int, error) {
	if s.shut.Load() {
		return 0, fmt.Errorf("get sync limit %s: %w", r, ErrClosed)
	}
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT sync_limit FROM sync_limits
		WHERE namespace = ? AND config_map = ? AND key = ?`, r.Namespace, r.ConfigMap, r.Key).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("sync limit %s: %w", r, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("get sync limit %s: %w", r, err)
	}
	return n, nil
}

// SyncLimitKeys lists the keys of the limits set in one ConfigMap of a
// namespace (configMap "": the namespace's database limits), in byte
// order; none when the ConfigMap does not exist.
func (s *Store) SyncLimitKeys(ctx context.Context, namespace, configMap string) ([]string, error) {
	if s.shut.Load() {
		return nil, fmt.Errorf("list sync limits of %s/%s: %w", namespace, configMap, ErrClosed)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT key FROM sync_limits WHERE namespace = ? AND config_map = ?
		ORDER BY key`, namespace, configMap)
	if err != nil {
		return nil, fmt.Errorf("list sync limits of %s/%s: %w", namespace, configMap, err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("list sync limits of %s/%s: %w", namespace, configMap, err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sync limits of %s/%s: %w", namespace, configMap, err)
	}
	return keys, nil
}

// CreateSyncLimit sets the limit r names to n; store.ErrAlreadyExists when
// it is set, ErrInvalid without a namespace or key or with n < 1.
func (s *Store) CreateSyncLimit(ctx context.Context, r store.SyncLimitRef, n int) error {
	if err := checkSyncLimit(r, n); err != nil {
		return fmt.Errorf("create sync limit %s: %w", r, err)
	}
	return s.Tx(ctx, func(tx *Tx) error {
		res, err := tx.tx.ExecContext(tx.ctx, `INSERT INTO sync_limits (namespace, config_map, key, sync_limit)
			VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, r.Namespace, r.ConfigMap, r.Key, n)
		return syncLimitWritten(res, err, "create", r, store.ErrAlreadyExists)
	})
}

// UpdateSyncLimit changes the limit r names to n; store.ErrNotFound when
// it is not set, ErrInvalid with n < 1.
func (s *Store) UpdateSyncLimit(ctx context.Context, r store.SyncLimitRef, n int) error {
	if err := checkSyncLimit(r, n); err != nil {
		return fmt.Errorf("update sync limit %s: %w", r, err)
	}
	return s.Tx(ctx, func(tx *Tx) error {
		res, err := tx.tx.ExecContext(tx.ctx, `UPDATE sync_limits SET sync_limit = ?
			WHERE namespace = ? AND config_map = ? AND key = ?`, n, r.Namespace, r.ConfigMap, r.Key)
		return syncLimitWritten(res, err, "update", r, store.ErrNotFound)
	})
}

// DeleteSyncLimit removes the limit r names; store.ErrNotFound when it is
// not set.
func (s *Store) DeleteSyncLimit(ctx context.Context, r store.SyncLimitRef) error {
	return s.Tx(ctx, func(tx *Tx) error {
		res, err := tx.tx.ExecContext(tx.ctx, `DELETE FROM sync_limits
			WHERE namespace = ? AND config_map = ? AND key = ?`, r.Namespace, r.ConfigMap, r.Key)
		return syncLimitWritten(res, err, "delete", r, store.ErrNotFound)
	})
}

// syncLimitWritten is the outcome of a write of one row: none says
// missing.
func syncLimitWritten(res sql.Result, err error, verb string, r store.SyncLimitRef, missing error) error {
	if err != nil {
		return fmt.Errorf("%s sync limit %s: %w", verb, r, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s sync limit %s: %w", verb, r, err)
	}
	if n == 0 {
		return fmt.Errorf("%s sync limit %s: %w", verb, r, missing)
	}
	return nil
}

func checkSyncLimit(r store.SyncLimitRef, n int) error {
	switch {
	case r.Namespace == "" || r.Key == "":
		return fmt.Errorf("a namespace and a key are required: %w", ErrInvalid)
	case n < 1:
		return fmt.Errorf("the limit %d is not positive: %w", n, ErrInvalid)
	}
	return nil
}
