package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/braidwf/braid/internal/store"
)

// The semaphore limits' contract is in internal/store/storetest; this is
// SQLite's own: its migration.

// Limits live in the file, and a database made before the table existed
// is migrated to have it.
func TestSyncLimitsPersistAndMigrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "braid.db")
	raw, err := sql.Open("sqlite", path)
	must(t, err, "sql.Open")
	for v := 0; v < 4; v++ {
		_, err := raw.Exec(migrations[v])
		must(t, err, fmt.Sprintf("migration %d", v+1))
	}
	_, err = raw.Exec("PRAGMA user_version = 4")
	must(t, err, "set user_version 4")
	must(t, raw.Close(), "close")

	s, err := Open(ctx, path, Options{})
	must(t, err, "Open a version 4 database")
	r := store.SyncLimitRef{Namespace: "ns", ConfigMap: "cm", Key: "k"}
	must(t, s.CreateSyncLimit(ctx, r, 9), "Create")
	must(t, s.Close(), "Close")

	s2 := openStore(t, path)
	if n, err := s2.GetSyncLimit(ctx, r); err != nil || n != 9 {
		t.Errorf("after reopen: %d, %v; want 9", n, err)
	}
}
