package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/braidwf/braid/internal/store"
)

// Semaphore limits set through the sync API, as the embedded store keeps
// them: one row of braid_sync_limits per limit, config_map '' for a
// database semaphore's (Argo's sync limit table, keyed "namespace/key").
// Limits are not watched; readers read them again.

// GetSyncLimit returns the limit r names; store.ErrNotFound when it is not
// set.
func (s *Store) GetSyncLimit(ctx context.Context, r store.SyncLimitRef) (int, error) {
	what := "get sync limit " + r.String()
	if err := s.open(what); err != nil {
		return 0, err
	}
	var n int
	err := s.pool.QueryRow(ctx, `SELECT sync_limit FROM braid_sync_limits
		WHERE namespace = $1 AND config_map = $2 AND key = $3`, r.Namespace, r.ConfigMap, r.Key).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("sync limit %s: %w", r, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return n, nil
}

// SyncLimitKeys lists the keys of the limits set in one ConfigMap of a
// namespace (configMap "": the namespace's database limits), in byte
// order; none when there are none.
func (s *Store) SyncLimitKeys(ctx context.Context, namespace, configMap string) ([]string, error) {
	what := fmt.Sprintf("list sync limits of %s/%s", namespace, configMap)
	if err := s.open(what); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT key FROM braid_sync_limits WHERE namespace = $1 AND config_map = $2
		ORDER BY key COLLATE "C"`, namespace, configMap)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return keys, nil
}

// CreateSyncLimit sets the limit r names to n; store.ErrAlreadyExists when
// it is set, ErrInvalid without a namespace or key or with n < 1.
func (s *Store) CreateSyncLimit(ctx context.Context, r store.SyncLimitRef, n int) error {
	what := "create sync limit " + r.String()
	if err := s.checkSyncLimit(what, r, n); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO braid_sync_limits (namespace, config_map, key, sync_limit)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, r.Namespace, r.ConfigMap, r.Key, n)
	return syncLimitWritten(what, tag, err, store.ErrAlreadyExists)
}

// UpdateSyncLimit changes the limit r names to n; store.ErrNotFound when
// it is not set, ErrInvalid with n < 1.
func (s *Store) UpdateSyncLimit(ctx context.Context, r store.SyncLimitRef, n int) error {
	what := "update sync limit " + r.String()
	if err := s.checkSyncLimit(what, r, n); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE braid_sync_limits SET sync_limit = $4
		WHERE namespace = $1 AND config_map = $2 AND key = $3`, r.Namespace, r.ConfigMap, r.Key, n)
	return syncLimitWritten(what, tag, err, store.ErrNotFound)
}

// DeleteSyncLimit removes the limit r names; store.ErrNotFound when it is
// not set.
func (s *Store) DeleteSyncLimit(ctx context.Context, r store.SyncLimitRef) error {
	what := "delete sync limit " + r.String()
	if err := s.open(what); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM braid_sync_limits
		WHERE namespace = $1 AND config_map = $2 AND key = $3`, r.Namespace, r.ConfigMap, r.Key)
	return syncLimitWritten(what, tag, err, store.ErrNotFound)
}

func (s *Store) checkSyncLimit(what string, r store.SyncLimitRef, n int) error {
	if err := s.open(what); err != nil {
		return err
	}
	switch {
	case r.Namespace == "" || r.Key == "":
		return fmt.Errorf("%s: a namespace and a key are required: %w", what, ErrInvalid)
	case n < 1:
		return fmt.Errorf("%s: the limit %d is not positive: %w", what, n, ErrInvalid)
	}
	return nil
}

// syncLimitWritten is the outcome of a write of one row: none says
// missing.
func syncLimitWritten(what string, tag pgconn.CommandTag, err error, missing error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, missing)
	}
	return nil
}
