package postgres

import (
	"context"
	"sync"
	"testing"
)

// Replicas opening a new database at once all succeed and migrate it
// once; opening a current database again writes nothing.
func TestOpenConcurrentIdempotent(t *testing.T) {
	ctx := context.Background()
	dsn := testSchema(t)
	const replicas = 6
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	stores := make([]*Store, replicas)
	for i := range replicas {
		wg.Go(func() { stores[i], errs[i] = Open(ctx, dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		must(t, err, "concurrent Open")
		defer func() { _ = stores[i].Close() }()
	}
	s := stores[0]
	var version int
	must(t, s.pool.QueryRow(ctx, `SELECT version FROM braid_schema_versions WHERE component = $1`, schemaComponent).Scan(&version), "version")
	if version != schemaVersion {
		t.Errorf("schema version %d, want %d", version, schemaVersion)
	}
	var tables int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()
		AND tablename IN ('braid_archived_workflows', 'braid_archived_labels', 'braid_memo', 'braid_schema_versions')`).Scan(&tables), "tables")
	if tables != 4 {
		t.Errorf("%d of the 4 tables in the schema", tables)
	}
	var migrated1, migrated2 string
	must(t, s.pool.QueryRow(ctx, `SELECT migrated_at::text FROM braid_schema_versions`).Scan(&migrated1), "migrated_at")
	again, err := Open(ctx, dsn)
	must(t, err, "Open again")
	defer func() { _ = again.Close() }()
	must(t, s.pool.QueryRow(ctx, `SELECT migrated_at::text FROM braid_schema_versions`).Scan(&migrated2), "migrated_at")
	if migrated1 != migrated2 {
		t.Errorf("opening a current database migrated it again (%s, then %s)", migrated1, migrated2)
	}
}

// A database a newer braid migrated is refused.
func TestOpenSchemaTooNew(t *testing.T) {
	ctx := context.Background()
	dsn := testSchema(t)
	s, err := Open(ctx, dsn)
	must(t, err, "Open")
	_, err = s.pool.Exec(ctx, `UPDATE braid_schema_versions SET version = $1 WHERE component = $2`, schemaVersion+1, schemaComponent)
	must(t, err, "bump version")
	must(t, s.Close(), "Close")
	_, err = Open(ctx, dsn)
	isErr(t, err, ErrSchemaTooNew, "Open a newer database")
}

func TestOpenBadDSN(t *testing.T) {
	testDSN(t)
	for _, dsn := range []string{"postgres://braid@127.0.0.1:1/braid?sslmode=disable&connect_timeout=2", "not a dsn ::: %"} {
		if s, err := Open(context.Background(), dsn); err == nil {
			_ = s.Close()
			t.Errorf("Open(%q) succeeded", dsn)
		}
	}
}
