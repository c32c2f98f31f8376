package controller

import (
	"context"
	"errors"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// archivePruner is an archive the archive TTL can sweep.
type archivePruner interface {
	ListArchived(ctx context.Context, opts store.ArchiveListOptions) ([]v1alpha1.Workflow, bool, error)
	DeleteArchived(ctx context.Context, uid string) error
}

// archiveSweepBatch is how many archived workflows one query of a sweep
// deletes at most.
var archiveSweepBatch = 500

// archiveSweepPeriod is how often the archive TTL is applied: a tenth of
// the TTL, between a minute and a day (Argo sweeps once a day).
func archiveSweepPeriod(ttl time.Duration) time.Duration {
	return min(max(ttl/10, time.Minute), 24*time.Hour)
}

// sweepArchive deletes from the archive every workflow that finished more
// than ttl before now (persistence.archiveTTL), and returns how many.
func sweepArchive(ctx context.Context, a archivePruner, ttl time.Duration, now time.Time) (int, error) {
	before := now.Add(-ttl)
	deleted := 0
	for {
		wfs, _, err := a.ListArchived(ctx, store.ArchiveListOptions{FinishedBefore: before, Limit: archiveSweepBatch})
		if err != nil {
			return deleted, err
		}
		for _, wf := range wfs {
			if err := a.DeleteArchived(ctx, string(wf.UID)); err != nil && !errors.Is(err, store.ErrNotFound) {
				return deleted, err
			}
			deleted++
		}
		if len(wfs) < archiveSweepBatch {
			return deleted, nil
		}
	}
}

// pruneArchive applies the archive TTL now and then every sweep period,
// until ctx ends.
func (m *Manager) pruneArchive(ctx context.Context, a archivePruner, ttl time.Duration) {
	for {
		n, err := sweepArchive(ctx, a, ttl, m.c.now())
		switch {
		case err != nil && ctx.Err() == nil:
			m.c.log.Warn("archive TTL: cannot delete expired archived workflows", "err", err)
		case n > 0:
			m.c.log.Info("archive TTL: deleted expired archived workflows", "count", n, "archiveTTL", ttl.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-m.c.wakeAt(m.c.now().Add(archiveSweepPeriod(ttl))):
		}
	}
}
