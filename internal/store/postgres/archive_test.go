package postgres

import (
	"context"
	"testing"

	"github.com/braidwf/braid/internal/store/storetest"
)

// The archive's contract (get, list, labels, batches, reopen, closed) is
// in internal/store/storetest; this is PostgreSQL's own: how it lays the
// archive out.

// A large workflow's nodes are stored compressed, a small one's as plain
// JSON; a deleted workflow's label rows go with it.
func TestArchiveStorage(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	big := storetest.BigWorkflow("argo", "big", 500)
	must(t, s.Archive(ctx, big), "archive big")
	var raw []byte
	must(t, s.pool.QueryRow(ctx, `SELECT nodes FROM braid_archived_workflows WHERE uid = $1`, big.UID).Scan(&raw), "read nodes column")
	if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Errorf("nodes of a large workflow are not gzip-compressed")
	}
	small := storetest.Archived("argo", "small", 1, map[string]string{"app": "a"})
	must(t, s.Archive(ctx, small), "archive small")
	must(t, s.pool.QueryRow(ctx, `SELECT nodes FROM braid_archived_workflows WHERE uid = $1`, small.UID).Scan(&raw), "read nodes column")
	if len(raw) == 0 || raw[0] != '{' {
		t.Errorf("nodes of a small workflow stored as %q, want plain JSON", raw)
	}
	must(t, s.DeleteArchived(ctx, string(big.UID)), "delete")
	var n int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM braid_archived_labels`).Scan(&n), "count labels")
	if n != 1 {
		t.Errorf("%d label rows after deleting big, want 1 (small's app)", n)
	}
}
