package controller

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/types"

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
// than ttl before now (persistence.archiveTTL), and returns the namespace
// and name of each it deleted.
func sweepArchive(ctx context.Context, a archivePruner, ttl time.Duration, now time.Time) ([]types.NamespacedName, error) {
	before := now.Add(-ttl)
	var deleted []types.NamespacedName
	for {
		wfs, _, err := a.ListArchived(ctx, store.ArchiveListOptions{FinishedBefore: before, Limit: archiveSweepBatch})
		if err != nil {
			return deleted, err
		}
		for _, wf := range wfs {
			if err := a.DeleteArchived(ctx, string(wf.UID)); err != nil && !errors.Is(err, store.ErrNotFound) {
				return deleted, err
			}
			deleted = append(deleted, types.NamespacedName{Namespace: wf.Namespace, Name: wf.Name})
		}
		if len(wfs) < archiveSweepBatch {
			return deleted, nil
		}
	}
}

// forgetGone removes what the runtime keeps of each workflow that neither
// the live store nor the archive holds any more.
func (m *Manager) forgetGone(ctx context.Context, a archivePruner, wfs []types.NamespacedName) {
	if m.c.forget == nil {
		return
	}
	for _, w := range wfs {
		gone, err := store.WorkflowGone(ctx, m.st, a, w.Namespace, w.Name)
		if err == nil && gone {
			err = m.c.forget(w.Namespace, w.Name)
		}
		if err != nil {
			m.c.log.Warn("archive TTL: cannot remove the step logs of a deleted workflow", "workflow", w.String(), "err", err)
		}
	}
}

// pruneArchive applies the archive TTL now and then every sweep period,
// until ctx ends.
func (m *Manager) pruneArchive(ctx context.Context, a archivePruner, ttl time.Duration) {
	for {
		deleted, err := sweepArchive(ctx, a, ttl, m.c.now())
		switch {
		case err != nil && ctx.Err() == nil:
			m.c.log.Warn("archive TTL: cannot delete expired archived workflows", "err", err)
		case len(deleted) > 0:
			m.c.log.Info("archive TTL: deleted expired archived workflows", "count", len(deleted), "archiveTTL", ttl.String())
		}
		m.forgetGone(ctx, a, deleted)
		select {
		case <-ctx.Done():
			return
		case <-m.c.wakeAt(m.c.now().Add(archiveSweepPeriod(ttl))):
		}
	}
}
