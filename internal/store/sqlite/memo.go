package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The memoization caches (template memoize): where Argo keeps one
// ConfigMap per cache and one ConfigMap key per entry, braid keeps one row
// of the table memo per (namespace, cache name, key) with the saved
// outputs as JSON. Entries are not watched: these methods publish no event.
// Whether an entry is too old for a template's maxAge is for the caller to
// decide; PruneMemos deletes the entries nobody has used for a while.

// LoadMemo returns the entry under (namespace, cache, key); ok is false
// when there is none.
func (s *Store) LoadMemo(ctx context.Context, namespace, cache, key string) (store.MemoEntry, bool, error) {
	what := memoName(namespace, cache, key)
	if s.shut.Load() {
		return store.MemoEntry{}, false, fmt.Errorf("load memo %s: %w", what, ErrClosed)
	}
	var (
		nodeID           string
		outputs          []byte
		created, lastHit int64
	)
	err := s.r.QueryRowContext(ctx, `SELECT node_id, outputs, created_at, last_hit_at FROM memo
		WHERE namespace = ? AND cache = ? AND key = ?`, namespace, cache, key).Scan(&nodeID, &outputs, &created, &lastHit)
	if errors.Is(err, sql.ErrNoRows) {
		return store.MemoEntry{}, false, nil
	}
	if err != nil {
		return store.MemoEntry{}, false, fmt.Errorf("load memo %s: %w", what, err)
	}
	e := store.MemoEntry{Namespace: namespace, Cache: cache, Key: key, NodeID: nodeID,
		CreatedAt: time.Unix(0, created).UTC(), LastHitAt: time.Unix(0, lastHit).UTC()}
	if outputs != nil {
		e.Outputs = &v1alpha1.Outputs{}
		if err := json.Unmarshal(outputs, e.Outputs); err != nil {
			return store.MemoEntry{}, false, fmt.Errorf("load memo %s: decode outputs: %w", what, err)
		}
	}
	return e, true, nil
}

// SaveMemo stores e.Outputs under (e.Namespace, e.Cache, e.Key) for
// e.NodeID, created now by the store's clock, replacing an entry saved by
// another node. Saving the entry of the same node again changes nothing,
// so that a caller may repeat a save. Namespace, Cache, Key and NodeID are
// required; CreatedAt and LastHitAt are ignored.
func (s *Store) SaveMemo(ctx context.Context, e store.MemoEntry) error {
	what := memoName(e.Namespace, e.Cache, e.Key)
	if e.Namespace == "" || e.Cache == "" || e.Key == "" || e.NodeID == "" {
		return fmt.Errorf("save memo %s: namespace, cache, key and node ID are required: %w", what, ErrInvalid)
	}
	var outputs []byte
	if e.Outputs != nil {
		var err error
		if outputs, err = json.Marshal(e.Outputs); err != nil {
			return fmt.Errorf("save memo %s: encode outputs: %w", what, err)
		}
	}
	return s.Tx(ctx, func(tx *Tx) error {
		now := tx.s.clock().UnixNano()
		_, err := tx.tx.ExecContext(tx.ctx, `INSERT INTO memo
			(namespace, cache, key, node_id, outputs, created_at, last_hit_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (namespace, cache, key) DO UPDATE SET node_id = excluded.node_id,
				outputs = excluded.outputs, created_at = excluded.created_at, last_hit_at = excluded.last_hit_at
			WHERE memo.node_id != excluded.node_id`,
			e.Namespace, e.Cache, e.Key, e.NodeID, outputs, now, now)
		if err != nil {
			return fmt.Errorf("save memo %s: %w", what, err)
		}
		return nil
	})
}

// HitMemo records that the entry under (namespace, cache, key) was used:
// its last hit time becomes now. An entry that is gone is not an error.
func (s *Store) HitMemo(ctx context.Context, namespace, cache, key string) error {
	return s.Tx(ctx, func(tx *Tx) error {
		_, err := tx.tx.ExecContext(tx.ctx, `UPDATE memo SET last_hit_at = ? WHERE namespace = ? AND cache = ? AND key = ?`,
			tx.s.clock().UnixNano(), namespace, cache, key)
		if err != nil {
			return fmt.Errorf("record memo hit %s: %w", memoName(namespace, cache, key), err)
		}
		return nil
	})
}

// PruneMemos deletes the entries not used (hit or saved) since before and
// returns how many it deleted: a cache's garbage collection, as Argo's
// deletes the entries not hit for a while.
func (s *Store) PruneMemos(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.Tx(ctx, func(tx *Tx) error {
		res, err := tx.tx.ExecContext(tx.ctx, `DELETE FROM memo WHERE last_hit_at < ?`, before.UnixNano())
		if err != nil {
			return fmt.Errorf("prune memos: %w", err)
		}
		n, err = res.RowsAffected()
		if err != nil {
			return fmt.Errorf("prune memos: %w", err)
		}
		return nil
	})
	return n, err
}

// DeleteMemos deletes every entry of one cache in a namespace (as deleting
// the cache's ConfigMap would) and returns how many it deleted.
func (s *Store) DeleteMemos(ctx context.Context, namespace, cache string) (int64, error) {
	var n int64
	err := s.Tx(ctx, func(tx *Tx) error {
		res, err := tx.tx.ExecContext(tx.ctx, `DELETE FROM memo WHERE namespace = ? AND cache = ?`, namespace, cache)
		if err != nil {
			return fmt.Errorf("delete memo cache %s/%s: %w", namespace, cache, err)
		}
		n, err = res.RowsAffected()
		if err != nil {
			return fmt.Errorf("delete memo cache %s/%s: %w", namespace, cache, err)
		}
		return nil
	})
	return n, err
}

func memoName(namespace, cache, key string) string { return namespace + "/" + cache + "/" + key }
