package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The memoization caches (template memoize): where Argo keeps one
// ConfigMap per cache and one ConfigMap key per entry, braid keeps one row
// of braid_memo per (namespace, cache name, key) with the saved outputs as
// JSON. Whether an entry is too old for a template's maxAge is for the
// caller to decide; PruneMemos deletes the entries nobody has used for a
// while. Timestamps come from the Store's clock, to the microsecond.

// LoadMemo returns the entry under (namespace, cache, key); ok is false
// when there is none.
func (s *Store) LoadMemo(ctx context.Context, namespace, cache, key string) (store.MemoEntry, bool, error) {
	what := "load memo " + memoName(namespace, cache, key)
	if err := s.open(what); err != nil {
		return store.MemoEntry{}, false, err
	}
	e := store.MemoEntry{Namespace: namespace, Cache: cache, Key: key}
	var outputs []byte
	err := s.pool.QueryRow(ctx, `SELECT node_id, outputs, created_at, last_hit_at FROM braid_memo
		WHERE namespace = $1 AND cache = $2 AND key = $3`, namespace, cache, key).
		Scan(&e.NodeID, &outputs, &e.CreatedAt, &e.LastHitAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.MemoEntry{}, false, nil
	}
	if err != nil {
		return store.MemoEntry{}, false, fmt.Errorf("%s: %w", what, err)
	}
	e.CreatedAt, e.LastHitAt = e.CreatedAt.UTC(), e.LastHitAt.UTC()
	if outputs != nil {
		e.Outputs = &v1alpha1.Outputs{}
		if err := json.Unmarshal(outputs, e.Outputs); err != nil {
			return store.MemoEntry{}, false, fmt.Errorf("%s: decode outputs: %w", what, err)
		}
	}
	return e, true, nil
}

// SaveMemo stores e.Outputs under (e.Namespace, e.Cache, e.Key) for
// e.NodeID, created now by the store's clock, replacing an entry saved by
// another node. Saving the entry of the same node again changes nothing,
// so that a caller may repeat a save. Namespace, Cache, Key and NodeID are
// required (ErrInvalid); CreatedAt and LastHitAt are ignored.
func (s *Store) SaveMemo(ctx context.Context, e store.MemoEntry) error {
	what := "save memo " + memoName(e.Namespace, e.Cache, e.Key)
	if err := s.open(what); err != nil {
		return err
	}
	if e.Namespace == "" || e.Cache == "" || e.Key == "" || e.NodeID == "" {
		return fmt.Errorf("%s: namespace, cache, key and node ID are required: %w", what, ErrInvalid)
	}
	var outputs []byte
	if e.Outputs != nil {
		var err error
		if outputs, err = json.Marshal(e.Outputs); err != nil {
			return fmt.Errorf("%s: encode outputs: %w", what, err)
		}
	}
	now := s.now()
	_, err := s.pool.Exec(ctx, `INSERT INTO braid_memo
		(namespace, cache, key, node_id, outputs, created_at, last_hit_at) VALUES ($1, $2, $3, $4, $5, $6, $6)
		ON CONFLICT (namespace, cache, key) DO UPDATE SET node_id = excluded.node_id,
			outputs = excluded.outputs, created_at = excluded.created_at, last_hit_at = excluded.last_hit_at
		WHERE braid_memo.node_id <> excluded.node_id`,
		e.Namespace, e.Cache, e.Key, e.NodeID, outputs, now)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// HitMemo records that the entry under (namespace, cache, key) was used:
// its last hit time becomes now. An entry that is gone is not an error.
func (s *Store) HitMemo(ctx context.Context, namespace, cache, key string) error {
	what := "record memo hit " + memoName(namespace, cache, key)
	if err := s.open(what); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `UPDATE braid_memo SET last_hit_at = $1 WHERE namespace = $2 AND cache = $3 AND key = $4`,
		s.now(), namespace, cache, key)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// PruneMemos deletes the entries not used (hit or saved) since before and
// returns how many it deleted: a cache's garbage collection, as Argo's
// deletes the entries not hit for a while.
func (s *Store) PruneMemos(ctx context.Context, before time.Time) (int64, error) {
	if err := s.open("prune memos"); err != nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM braid_memo WHERE last_hit_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("prune memos: %w", err)
	}
	return tag.RowsAffected(), nil
}

// DeleteMemos deletes every entry of one cache in a namespace (as deleting
// the cache's ConfigMap would) and returns how many it deleted.
func (s *Store) DeleteMemos(ctx context.Context, namespace, cache string) (int64, error) {
	what := "delete memo cache " + namespace + "/" + cache
	if err := s.open(what); err != nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM braid_memo WHERE namespace = $1 AND cache = $2`, namespace, cache)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return tag.RowsAffected(), nil
}

func memoName(namespace, cache, key string) string { return namespace + "/" + cache + "/" + key }
