package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The memo cache's contract is in internal/store/storetest; this is
// SQLite's own: its migration.

// A database made before the memo table existed is migrated and keeps its
// objects; the entries saved after live in the file.
func TestMemoPersistsAndMigrates(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "braid.db")
	db, err := sql.Open("sqlite", path)
	must(t, err, "sql.Open")
	for v := 0; v < 2; v++ {
		_, err := db.Exec(migrations[v])
		must(t, err, fmt.Sprintf("migration %d", v+1))
	}
	_, err = db.Exec("PRAGMA user_version = 2")
	must(t, err, "set user_version 2")
	must(t, db.Close(), "close")

	s, err := Open(ctx, path, Options{})
	must(t, err, "Open a version 2 database")
	wf := mustParse[v1alpha1.Workflow](t, "metadata: {name: old, namespace: ns}\nspec: {entrypoint: main}\n")
	must(t, s.Create(ctx, wf), "Create")
	out := &v1alpha1.Outputs{Parameters: []v1alpha1.Parameter{{Name: "p", Value: v1alpha1.AnyStringPtr("v")}}}
	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: "ns", Cache: "c", Key: "k", NodeID: "old-1", Outputs: out}), "SaveMemo")
	must(t, s.Close(), "Close")

	s2 := openStore(t, path)
	e, ok, err := s2.LoadMemo(ctx, "ns", "c", "k")
	must(t, err, "LoadMemo")
	if !ok || e.NodeID != "old-1" || e.Outputs.Parameters[0].Value.String() != "v" {
		t.Errorf("after reopen: ok %v, entry %+v", ok, e)
	}
	if _, err := s2.Get(ctx, store.KindWorkflow, "ns", "old"); err != nil {
		t.Errorf("Get after migration: %v", err)
	}
}
