package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Everything written is there after the store is closed and opened again.
func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "home", "braid.db") // Open creates the directory
	s := openStore(t, path)
	var written []store.Object
	for _, f := range fixtures() {
		obj := f.new(t)
		must(t, s.Create(ctx, obj), "Create")
		f.editOther(obj)
		must(t, s.Update(ctx, obj), "Update")
		written = append(written, obj)
	}
	wf := bigWorkflow("big", 1000)
	must(t, s.Create(ctx, wf), "Create big")
	id := wf.Status.Nodes["big"].Children[10]
	n := wf.Status.Nodes[id]
	n.Phase = v1alpha1.NodeError
	wf.Status.Nodes[id] = n
	must(t, s.UpdateWorkflowStatus(ctx, wf, []string{id}), "UpdateWorkflowStatus")
	written = append(written, wf)
	must(t, s.Close(), "Close")

	s2 := openStore(t, path)
	for _, want := range written {
		k, _ := kindOf(want)
		got, err := s2.Get(ctx, k.kind, want.GetNamespace(), want.GetName())
		must(t, err, "Get after reopen")
		if d := diffJSON(t, want, got); d != "" {
			t.Errorf("%s after reopen (-written +read):\n%.3000s", k.key(want.GetNamespace(), want.GetName()), d)
		}
	}
	// Writing continues from the stored resourceVersions.
	must(t, s2.UpdateWorkflowStatus(ctx, wf, nil), "UpdateWorkflowStatus after reopen")
	if wf.ResourceVersion != "3" {
		t.Errorf("rv %q after reopen and update, want 3", wf.ResourceVersion)
	}
}

func TestOpenSettings(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	for _, tt := range []struct {
		db     *sql.DB
		pragma string
		want   string
	}{
		{s.w, "journal_mode", "wal"},
		{s.w, "synchronous", "1"}, // NORMAL
		{s.w, "foreign_keys", "1"},
		{s.w, "busy_timeout", "5000"},
		{s.w, "user_version", fmt.Sprint(schemaVersion)},
		{s.r, "query_only", "1"},
		{s.r, "busy_timeout", "5000"},
	} {
		var got string
		must(t, tt.db.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&got), tt.pragma)
		if got != tt.want {
			t.Errorf("PRAGMA %s = %s, want %s", tt.pragma, got, tt.want)
		}
	}
	if _, err := s.r.ExecContext(ctx, `DELETE FROM objects`); err == nil {
		t.Errorf("the read pool can write")
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "braid.db")
	s, err := Open(context.Background(), path, Options{})
	must(t, err, "Open")
	must(t, s.Close(), "Close")
	db, err := sql.Open("sqlite", path)
	must(t, err, "sql.Open")
	_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion+1))
	must(t, err, "bump user_version")
	must(t, db.Close(), "close")
	_, err = Open(context.Background(), path, Options{})
	isErr(t, err, ErrSchemaTooNew, "Open of a newer schema")
}

// Many writers updating one object: each write either wins or gets
// ErrConflict, and no increment is lost.
func TestConcurrentUpdates(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	wf := bigWorkflow("counter", 3)
	must(t, s.Create(ctx, wf), "Create")

	const workers, each = 8, 20
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				for {
					o, err := s.Get(ctx, store.KindWorkflow, "argo", "counter")
					if err != nil {
						t.Errorf("Get: %v", err)
						return
					}
					cur := o.(*v1alpha1.Workflow)
					cur.Status.Progress = v1alpha1.Progress(fmt.Sprint(len(cur.Status.Message) + 1))
					cur.Status.Message += "x"
					err = s.UpdateWorkflowStatus(ctx, cur, nil)
					if errors.Is(err, store.ErrConflict) {
						conflicts.Add(1)
						continue
					}
					if err != nil {
						t.Errorf("UpdateWorkflowStatus: %v", err)
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	got := getWF(t, s, "argo", "counter")
	if len(got.Status.Message) != workers*each || got.ResourceVersion != fmt.Sprint(workers*each+1) {
		t.Errorf("message length %d rv %s, want %d and %d", len(got.Status.Message), got.ResourceVersion, workers*each, workers*each+1)
	}
	t.Logf("%d updates, %d conflicts retried", workers*each, conflicts.Load())

	// The conflict itself, deterministically: two readers, two writers.
	a, b := getWF(t, s, "argo", "counter"), getWF(t, s, "argo", "counter")
	a.Status.Message, b.Status.Message = "a", "b"
	must(t, s.UpdateWorkflowStatus(ctx, a, nil), "first writer")
	isErr(t, s.UpdateWorkflowStatus(ctx, b, nil), store.ErrConflict, "second writer")
	isErr(t, s.Update(ctx, b), store.ErrConflict, "second writer, Update")
	if got := getWF(t, s, "argo", "counter"); got.Status.Message != "a" {
		t.Errorf("message %q, want the first writer's", got.Status.Message)
	}
}

// A path is a path, whatever characters it holds: not URI syntax.
func TestOpenOddPath(t *testing.T) {
	for _, dir := range []string{"with space", "q?x=1", "pct%41", "hash#frag"} {
		t.Run(dir, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), dir, "braid.db")
			s := openStore(t, path)
			must(t, s.Create(context.Background(), bigWorkflow("w", 2)), "Create")
			if s.Path() != path {
				t.Errorf("Path() = %q, want %q", s.Path(), path)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("the file is not where asked: %v", err)
			}
		})
	}
}
