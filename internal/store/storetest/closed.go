package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// closed: Close may be called twice, and after it every call of every API
// the store has is Backend.ErrClosed.
func (b Backend) closed(t *testing.T) {
	_, s := b.open(t, "Closed")
	c := as[Closer](t, s, "Close")
	if b.ErrClosed == nil {
		t.Fatal("Backend.ErrClosed is not set")
	}
	must(t, c.Close(), "close")
	must(t, c.Close(), "close twice")
	ctx := context.Background()
	calls := map[string]error{}
	if a, ok := s.(Archive); ok {
		archiveCalls(ctx, a, calls)
	}
	if m, ok := s.(Memos); ok {
		memoCalls(ctx, m, calls)
	}
	if d, ok := s.(MemoDeleter); ok {
		_, calls["DeleteMemos"] = d.DeleteMemos(ctx, "ns", "c")
	}
	if l, ok := s.(SyncLimits); ok {
		limitCalls(ctx, l, calls)
	}
	if k, ok := s.(SyncLimitKeyLister); ok {
		_, calls["SyncLimitKeys"] = k.SyncLimitKeys(ctx, "ns", "")
	}
	for name, err := range calls {
		isErr(t, err, b.ErrClosed, name+" after Close")
	}
}

func archiveCalls(ctx context.Context, a Archive, calls map[string]error) {
	calls["Archive"] = a.Archive(ctx, Archived("argo", "a", 1, nil))
	calls["ArchiveBatch"] = a.ArchiveBatch(ctx, []*v1alpha1.Workflow{Archived("argo", "a", 1, nil)})
	_, calls["GetArchived"] = a.GetArchived(ctx, "u")
	_, _, calls["ListArchived"] = a.ListArchived(ctx, store.ArchiveListOptions{})
	_, calls["CountArchived"] = a.CountArchived(ctx, store.ArchiveListOptions{})
	calls["DeleteArchived"] = a.DeleteArchived(ctx, "u")
	_, calls["ArchivedLabelKeys"] = a.ArchivedLabelKeys(ctx, "")
	_, calls["ArchivedLabelValues"] = a.ArchivedLabelValues(ctx, "", "k")
}

func memoCalls(ctx context.Context, m Memos, calls map[string]error) {
	_, _, calls["LoadMemo"] = m.LoadMemo(ctx, "ns", "c", "k")
	calls["SaveMemo"] = m.SaveMemo(ctx, store.MemoEntry{Namespace: "ns", Cache: "c", Key: "k", NodeID: "n"})
	calls["HitMemo"] = m.HitMemo(ctx, "ns", "c", "k")
	_, calls["PruneMemos"] = m.PruneMemos(ctx, time.Now())
}

func limitCalls(ctx context.Context, l SyncLimits, calls map[string]error) {
	r := store.SyncLimitRef{Namespace: "ns", Key: "k"}
	_, calls["GetSyncLimit"] = l.GetSyncLimit(ctx, r)
	calls["CreateSyncLimit"] = l.CreateSyncLimit(ctx, r, 1)
	calls["UpdateSyncLimit"] = l.UpdateSyncLimit(ctx, r, 1)
	calls["DeleteSyncLimit"] = l.DeleteSyncLimit(ctx, r)
}
