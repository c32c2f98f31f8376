package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/braidwf/braid/internal/store"
)

// The semaphore limits' contract is in internal/store/storetest; this is
// PostgreSQL's own: its migration.

// A database of schema version 1 (before the sync limits) is migrated and
// keeps what it held.
func TestSyncLimitsMigrateFromV1(t *testing.T) {
	ctx := context.Background()
	dsn := testSchema(t)
	conn, err := pgx.Connect(ctx, dsn)
	must(t, err, "connect")
	_, err = conn.Exec(ctx, versionsTable)
	must(t, err, "versions table")
	_, err = conn.Exec(ctx, migrations[0], pgx.QueryExecModeSimpleProtocol)
	must(t, err, "migration 1")
	_, err = conn.Exec(ctx, `INSERT INTO braid_schema_versions (component, version) VALUES ($1, 1)`, schemaComponent)
	must(t, err, "version 1")
	_, err = conn.Exec(ctx, `INSERT INTO braid_memo (namespace, cache, key, node_id, created_at, last_hit_at)
		VALUES ('ns', 'c', 'k', 'n-1', now(), now())`)
	must(t, err, "a memo entry")
	must(t, conn.Close(ctx), "close")

	s, err := Open(ctx, dsn)
	must(t, err, "Open a version 1 database")
	defer func() { _ = s.Close() }()
	if _, ok, err := s.LoadMemo(ctx, "ns", "c", "k"); err != nil || !ok {
		t.Errorf("the memo entry after migration: %v, %v", ok, err)
	}
	r := store.SyncLimitRef{Namespace: "ns", Key: "k"}
	must(t, s.CreateSyncLimit(ctx, r, 3), "Create after migration")
	if n, err := s.GetSyncLimit(ctx, r); err != nil || n != 3 {
		t.Errorf("Get after migration: %d, %v", n, err)
	}
}
