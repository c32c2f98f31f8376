package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/store"
)

// MemoStore keeps the memoization caches (template memoize); the embedded
// SQLite store implements it. The driver loads the entries a pass asks for
// (engine.Result.Need) into the next pass's snapshot, and saves outputs
// and records hits after it has persisted the status (Plan.Memoize).
type MemoStore interface {
	// LoadMemo returns the entry under (namespace, cache, key); ok is false
	// when there is none.
	LoadMemo(ctx context.Context, namespace, cache, key string) (e store.MemoEntry, ok bool, err error)
	// SaveMemo stores an entry, created now; saving the same node's entry
	// again changes nothing.
	SaveMemo(ctx context.Context, e store.MemoEntry) error
	// HitMemo records that an entry was used now.
	HitMemo(ctx context.Context, namespace, cache, key string) error
}

// MemoPruner deletes the memoization entries nobody has used since a time.
type MemoPruner interface {
	PruneMemos(ctx context.Context, before time.Time) (int64, error)
}

// loadMemos reads the memoization entries a pass asked for
// (engine.Result.Need), for the next pass's snapshot. A failed read is
// recorded in the entry: the node that looked it up ends Error with it.
func (d *driver) loadMemos(ctx context.Context, keys []engine.MemoKey) map[engine.MemoKey]engine.MemoLookup {
	if len(keys) == 0 || d.c.memos == nil {
		return nil
	}
	out := make(map[engine.MemoKey]engine.MemoLookup, len(keys))
	for _, k := range keys {
		e, ok, err := d.c.memos.LoadMemo(ctx, d.wf.Namespace, k.Cache, k.Key)
		switch {
		case err != nil:
			out[k] = engine.MemoLookup{Err: err.Error()}
		case ok:
			out[k] = engine.MemoLookup{Found: true, Entry: engine.MemoEntry{NodeID: e.NodeID, Outputs: e.Outputs, CreatedAt: e.CreatedAt}}
		default:
			out[k] = engine.MemoLookup{}
		}
	}
	return out
}

// saveMemos carries out the memoization writes of a persisted plan: the
// outputs of memoized nodes that succeeded, and the hits. A failed write
// is logged and does not fail the workflow (Argo's does not either): the
// next run misses and runs the step again.
func (d *driver) saveMemos(ctx context.Context, saves []engine.MemoSave) {
	if d.c.memos == nil {
		return
	}
	for _, s := range saves {
		if err := d.saveMemo(ctx, s); err != nil {
			d.log.Warn("memoization cache", "node", s.NodeID, "err", err)
		}
	}
}

func (d *driver) saveMemo(ctx context.Context, s engine.MemoSave) error {
	ns := d.wf.Namespace
	if s.Hit {
		if err := d.c.memos.HitMemo(ctx, ns, s.Cache, s.Key); err != nil {
			return fmt.Errorf("record the hit of %s/%s: %w", s.Cache, s.Key, err)
		}
		return nil
	}
	e := store.MemoEntry{Namespace: ns, Cache: s.Cache, Key: s.Key, NodeID: s.NodeID, Outputs: s.Outputs}
	if err := d.c.memos.SaveMemo(ctx, e); err != nil {
		return fmt.Errorf("save %s/%s: %w", s.Cache, s.Key, err)
	}
	return nil
}

// PruneMemos deletes the memoization entries not used for notUsedFor (a
// cache's garbage collection) and returns how many it deleted; 0 when the
// controller's cache cannot prune.
func (c *Controller) PruneMemos(ctx context.Context, notUsedFor time.Duration) (int64, error) {
	if c.pruner == nil {
		return 0, nil
	}
	n, err := c.pruner.PruneMemos(ctx, c.now().Add(-notUsedFor))
	if err != nil {
		return 0, fmt.Errorf("prune memoization caches: %w", err)
	}
	return n, nil
}
