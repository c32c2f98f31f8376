package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/store"
)

// MemoStore keeps the memoization caches (template memoize); the embedded
// SQLite store implements it. The engine looks entries up through it
// during a reconcile; the driver saves outputs and records hits after it
// has persisted the status (Plan.Memoize).
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

// memoCache is the engine's view of a MemoStore for one reconcile: it
// binds the context the look-ups run with.
type memoCache struct {
	ctx context.Context
	st  MemoStore
}

var _ engine.MemoCache = memoCache{}

// Load implements engine.MemoCache.
func (m memoCache) Load(namespace, cache, key string) (engine.MemoEntry, bool, error) {
	e, ok, err := m.st.LoadMemo(m.ctx, namespace, cache, key)
	if err != nil || !ok {
		return engine.MemoEntry{}, false, err
	}
	return engine.MemoEntry{NodeID: e.NodeID, Outputs: e.Outputs, CreatedAt: e.CreatedAt}, true, nil
}

// memoCache returns the cache for the engine; nil when the controller has
// none, so that every look-up misses.
func (d *driver) memoCache(ctx context.Context) engine.MemoCache {
	if d.c.memos == nil {
		return nil
	}
	return memoCache{ctx: ctx, st: d.c.memos}
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
			d.c.log.Warn("memoization cache", "workflow", d.wf.Name, "node", s.NodeID, "err", err)
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
	p, ok := c.memos.(MemoPruner)
	if !ok {
		return 0, nil
	}
	n, err := p.PruneMemos(ctx, c.now().Add(-notUsedFor))
	if err != nil {
		return 0, fmt.Errorf("prune memoization caches: %w", err)
	}
	return n, nil
}
