package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/braidwf/braid/internal/store"
)

func TestSyncLimitsCRUD(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	cm := store.SyncLimitRef{Namespace: "ns", ConfigMap: "limits", Key: "workers"}
	db := store.SyncLimitRef{Namespace: "ns", Key: "workers"} // the same key, a database limit

	_, err := s.GetSyncLimit(ctx, cm)
	isErr(t, err, store.ErrNotFound, "Get before Create")
	isErr(t, s.UpdateSyncLimit(ctx, cm, 3), store.ErrNotFound, "Update before Create")
	isErr(t, s.DeleteSyncLimit(ctx, cm), store.ErrNotFound, "Delete before Create")

	must(t, s.CreateSyncLimit(ctx, cm, 2), "Create ConfigMap limit")
	isErr(t, s.CreateSyncLimit(ctx, cm, 5), store.ErrAlreadyExists, "Create twice")
	must(t, s.CreateSyncLimit(ctx, db, 7), "Create database limit of the same key")
	if n, err := s.GetSyncLimit(ctx, cm); err != nil || n != 2 {
		t.Fatalf("Get ConfigMap limit: %d, %v; want 2 (a second Create must not change it)", n, err)
	}
	if n, err := s.GetSyncLimit(ctx, db); err != nil || n != 7 {
		t.Fatalf("Get database limit: %d, %v; want 7", n, err)
	}

	must(t, s.UpdateSyncLimit(ctx, cm, 4), "Update")
	if n, err := s.GetSyncLimit(ctx, cm); err != nil || n != 4 {
		t.Fatalf("Get after Update: %d, %v; want 4", n, err)
	}
	if n, _ := s.GetSyncLimit(ctx, db); n != 7 {
		t.Fatalf("the database limit changed with the ConfigMap key's: %d", n)
	}

	must(t, s.DeleteSyncLimit(ctx, cm), "Delete")
	_, err = s.GetSyncLimit(ctx, cm)
	isErr(t, err, store.ErrNotFound, "Get after Delete")
	isErr(t, s.DeleteSyncLimit(ctx, cm), store.ErrNotFound, "Delete twice")
	if n, _ := s.GetSyncLimit(ctx, db); n != 7 {
		t.Fatalf("the database limit went with the ConfigMap key: %d", n)
	}
}

func TestSyncLimitsInvalid(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	for _, c := range []struct {
		r store.SyncLimitRef
		n int
	}{
		{store.SyncLimitRef{ConfigMap: "cm", Key: "k"}, 1},
		{store.SyncLimitRef{Namespace: "ns", ConfigMap: "cm"}, 1},
		{store.SyncLimitRef{Namespace: "ns", ConfigMap: "cm", Key: "k"}, 0},
		{store.SyncLimitRef{Namespace: "ns", Key: "k"}, -1},
	} {
		isErr(t, s.CreateSyncLimit(ctx, c.r, c.n), ErrInvalid, fmt.Sprintf("Create %v %d", c.r, c.n))
	}
	must(t, s.CreateSyncLimit(ctx, store.SyncLimitRef{Namespace: "ns", Key: "k"}, 1), "Create")
	isErr(t, s.UpdateSyncLimit(ctx, store.SyncLimitRef{Namespace: "ns", Key: "k"}, 0), ErrInvalid, "Update to 0")
	if n, _ := s.GetSyncLimit(ctx, store.SyncLimitRef{Namespace: "ns", Key: "k"}); n != 1 {
		t.Errorf("a refused Update changed the limit to %d", n)
	}
}

func TestSyncLimitKeys(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	for _, r := range []store.SyncLimitRef{
		{Namespace: "ns", ConfigMap: "cm", Key: "b"}, {Namespace: "ns", ConfigMap: "cm", Key: "a"},
		{Namespace: "ns", ConfigMap: "other", Key: "c"}, {Namespace: "ns2", ConfigMap: "cm", Key: "d"},
		{Namespace: "ns", Key: "db"},
	} {
		must(t, s.CreateSyncLimit(ctx, r, 1), "Create "+r.String())
	}
	for _, c := range []struct {
		ns, cm string
		want   []string
	}{{"ns", "cm", []string{"a", "b"}}, {"ns", "", []string{"db"}}, {"ns2", "cm", []string{"d"}}, {"ns", "none", nil}} {
		got, err := s.SyncLimitKeys(ctx, c.ns, c.cm)
		must(t, err, "SyncLimitKeys")
		if !slices.Equal(got, c.want) {
			t.Errorf("SyncLimitKeys(%s, %s) = %q, want %q", c.ns, c.cm, got, c.want)
		}
	}
}

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

func TestSyncLimitsClosed(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "braid.db"), Options{})
	must(t, err, "Open")
	must(t, s.Close(), "Close")
	r := store.SyncLimitRef{Namespace: "ns", Key: "k"}
	_, err = s.GetSyncLimit(ctx, r)
	isErr(t, err, ErrClosed, "Get after Close")
	_, err = s.SyncLimitKeys(ctx, "ns", "")
	isErr(t, err, ErrClosed, "SyncLimitKeys after Close")
	isErr(t, s.CreateSyncLimit(ctx, r, 1), ErrClosed, "Create after Close")
	isErr(t, s.UpdateSyncLimit(ctx, r, 1), ErrClosed, "Update after Close")
	isErr(t, s.DeleteSyncLimit(ctx, r), ErrClosed, "Delete after Close")
}
