package postgres

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/braidwf/braid/internal/store"
)

func TestSyncLimitsCRUD(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	cm := store.SyncLimitRef{Namespace: "ns", ConfigMap: "limits", Key: "workers"}
	db := store.SyncLimitRef{Namespace: "ns", Key: "workers"} // the same key, a database limit

	_, err := s.GetSyncLimit(ctx, db)
	isErr(t, err, store.ErrNotFound, "Get before Create")
	isErr(t, s.UpdateSyncLimit(ctx, db, 3), store.ErrNotFound, "Update before Create")
	isErr(t, s.DeleteSyncLimit(ctx, db), store.ErrNotFound, "Delete before Create")

	must(t, s.CreateSyncLimit(ctx, db, 2), "Create database limit")
	isErr(t, s.CreateSyncLimit(ctx, db, 5), store.ErrAlreadyExists, "Create twice")
	must(t, s.CreateSyncLimit(ctx, cm, 7), "Create ConfigMap limit of the same key")
	if n, err := s.GetSyncLimit(ctx, db); err != nil || n != 2 {
		t.Fatalf("Get database limit: %d, %v; want 2 (a second Create must not change it)", n, err)
	}
	must(t, s.UpdateSyncLimit(ctx, db, 4), "Update")
	if n, err := s.GetSyncLimit(ctx, db); err != nil || n != 4 {
		t.Fatalf("Get after Update: %d, %v; want 4", n, err)
	}
	if n, _ := s.GetSyncLimit(ctx, cm); n != 7 {
		t.Fatalf("the ConfigMap limit changed with the database limit: %d", n)
	}
	keys, err := s.SyncLimitKeys(ctx, "ns", "")
	must(t, err, "SyncLimitKeys")
	if !slices.Equal(keys, []string{"workers"}) {
		t.Errorf("SyncLimitKeys(ns, '') = %q", keys)
	}
	must(t, s.DeleteSyncLimit(ctx, db), "Delete")
	_, err = s.GetSyncLimit(ctx, db)
	isErr(t, err, store.ErrNotFound, "Get after Delete")
	isErr(t, s.DeleteSyncLimit(ctx, db), store.ErrNotFound, "Delete twice")
	if n, _ := s.GetSyncLimit(ctx, cm); n != 7 {
		t.Fatalf("the ConfigMap limit went with the database limit: %d", n)
	}

	for _, c := range []struct {
		r store.SyncLimitRef
		n int
	}{{store.SyncLimitRef{Key: "k"}, 1}, {store.SyncLimitRef{Namespace: "ns"}, 1}, {store.SyncLimitRef{Namespace: "ns", Key: "k"}, 0}} {
		isErr(t, s.CreateSyncLimit(ctx, c.r, c.n), ErrInvalid, fmt.Sprintf("Create %v %d", c.r, c.n))
	}
	isErr(t, s.UpdateSyncLimit(ctx, cm, -1), ErrInvalid, "Update to -1")
}

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

func TestSyncLimitsClosed(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, testSchema(t))
	must(t, err, "Open")
	must(t, s.Close(), "Close")
	r := store.SyncLimitRef{Namespace: "ns", Key: "k"}
	_, err = s.GetSyncLimit(ctx, r)
	isErr(t, err, ErrClosed, "Get after Close")
	isErr(t, s.CreateSyncLimit(ctx, r, 1), ErrClosed, "Create after Close")
	isErr(t, s.UpdateSyncLimit(ctx, r, 1), ErrClosed, "Update after Close")
	isErr(t, s.DeleteSyncLimit(ctx, r), ErrClosed, "Delete after Close")
	_, err = s.SyncLimitKeys(ctx, "ns", "")
	isErr(t, err, ErrClosed, "SyncLimitKeys after Close")
}
