package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func memoOutputs(params ...string) *v1alpha1.Outputs {
	exit := "0"
	out := &v1alpha1.Outputs{ExitCode: &exit}
	for i := 0; i+1 < len(params); i += 2 {
		out.Parameters = append(out.Parameters, v1alpha1.Parameter{Name: params[i], Value: v1alpha1.AnyStringPtr(params[i+1])})
	}
	return out
}

func loadMemo(t *testing.T, s *Store, ns, cache, key string) (store.MemoEntry, bool) {
	t.Helper()
	e, ok, err := s.LoadMemo(context.Background(), ns, cache, key)
	must(t, err, "LoadMemo "+key)
	return e, ok
}

func TestMemoSaveLoad(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	if _, ok := loadMemo(t, s, "ns", "c", "k"); ok {
		t.Fatal("an empty store has an entry")
	}
	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: "ns", Cache: "c", Key: "k", NodeID: "wf-1", Outputs: memoOutputs("hello", "world")}), "SaveMemo")
	e, ok := loadMemo(t, s, "ns", "c", "k")
	if !ok {
		t.Fatal("saved entry not found")
	}
	if e.NodeID != "wf-1" || e.Namespace != "ns" || e.Cache != "c" || e.Key != "k" {
		t.Errorf("entry %+v", e)
	}
	if got := e.Outputs.Parameters[0].Value.String(); got != "world" || *e.Outputs.ExitCode != "0" {
		t.Errorf("outputs %+v", e.Outputs)
	}
	if e.CreatedAt.IsZero() || !e.LastHitAt.Equal(e.CreatedAt) || e.CreatedAt.Location().String() != "UTC" {
		t.Errorf("created %v, last hit %v: want equal, set and UTC", e.CreatedAt, e.LastHitAt)
	}

	// Other namespaces, caches and keys are other entries.
	for _, k := range [][3]string{{"other", "c", "k"}, {"ns", "d", "k"}, {"ns", "c", "k2"}} {
		if _, ok := loadMemo(t, s, k[0], k[1], k[2]); ok {
			t.Errorf("entry found under %v", k)
		}
	}

	// The same node saved again: nothing changes.
	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: "ns", Cache: "c", Key: "k", NodeID: "wf-1", Outputs: memoOutputs("hello", "again")}), "SaveMemo again")
	again, _ := loadMemo(t, s, "ns", "c", "k")
	if !again.CreatedAt.Equal(e.CreatedAt) || again.Outputs.Parameters[0].Value.String() != "world" {
		t.Errorf("a repeated save changed the entry: %+v", again)
	}

	// Another node replaces it.
	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: "ns", Cache: "c", Key: "k", NodeID: "wf2-1", Outputs: memoOutputs("hello", "newer")}), "SaveMemo other node")
	newer, _ := loadMemo(t, s, "ns", "c", "k")
	if newer.NodeID != "wf2-1" || newer.Outputs.Parameters[0].Value.String() != "newer" || !newer.CreatedAt.After(e.CreatedAt) {
		t.Errorf("replaced entry %+v (first created %v)", newer, e.CreatedAt)
	}

	// A node without outputs is cached too.
	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: "ns", Cache: "c", Key: "none", NodeID: "wf-2"}), "SaveMemo without outputs")
	none, ok := loadMemo(t, s, "ns", "c", "none")
	if !ok || none.Outputs != nil {
		t.Errorf("entry without outputs: ok %v, outputs %+v", ok, none.Outputs)
	}
}

func TestMemoSaveInvalid(t *testing.T) {
	s := testStore(t)
	for _, e := range []store.MemoEntry{
		{Cache: "c", Key: "k", NodeID: "n"},
		{Namespace: "ns", Key: "k", NodeID: "n"},
		{Namespace: "ns", Cache: "c", NodeID: "n"},
		{Namespace: "ns", Cache: "c", Key: "k"},
	} {
		isErr(t, s.SaveMemo(context.Background(), e), ErrInvalid, fmt.Sprintf("SaveMemo %+v", e))
	}
}

// maxAge is the caller's decision from CreatedAt; a hit moves LastHitAt
// only, and pruning goes by LastHitAt.
func TestMemoHitPruneDelete(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	for _, k := range []string{"a", "b", "c"} {
		must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: "ns", Cache: "c1", Key: k, NodeID: "n-" + k}), "SaveMemo "+k)
	}
	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: "ns", Cache: "c2", Key: "a", NodeID: "n-x"}), "SaveMemo c2")
	a, _ := loadMemo(t, s, "ns", "c1", "a")
	must(t, s.HitMemo(ctx, "ns", "c1", "a"), "HitMemo")
	must(t, s.HitMemo(ctx, "ns", "c1", "gone"), "HitMemo of a missing entry")
	hit, _ := loadMemo(t, s, "ns", "c1", "a")
	if !hit.LastHitAt.After(hit.CreatedAt) || !hit.CreatedAt.Equal(a.CreatedAt) {
		t.Errorf("after a hit: created %v (was %v), last hit %v", hit.CreatedAt, a.CreatedAt, hit.LastHitAt)
	}

	// Nothing was unused before the first save.
	n, err := s.PruneMemos(ctx, a.CreatedAt)
	must(t, err, "PruneMemos before everything")
	if n != 0 {
		t.Errorf("pruned %d entries older than the first, want 0", n)
	}
	// Everything not used since a's hit goes; a stays.
	n, err = s.PruneMemos(ctx, hit.LastHitAt)
	must(t, err, "PruneMemos")
	if n != 3 {
		t.Errorf("pruned %d entries, want 3", n)
	}
	for _, k := range [][2]string{{"c1", "b"}, {"c1", "c"}, {"c2", "a"}} {
		if _, ok := loadMemo(t, s, "ns", k[0], k[1]); ok {
			t.Errorf("%v survived the prune", k)
		}
	}
	if _, ok := loadMemo(t, s, "ns", "c1", "a"); !ok {
		t.Error("the entry hit last was pruned")
	}

	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: "other", Cache: "c1", Key: "a", NodeID: "n-o"}), "SaveMemo other ns")
	n, err = s.DeleteMemos(ctx, "ns", "c1")
	must(t, err, "DeleteMemos")
	if n != 1 {
		t.Errorf("deleted %d entries, want 1", n)
	}
	if _, ok := loadMemo(t, s, "ns", "c1", "a"); ok {
		t.Error("entry survived DeleteMemos")
	}
	if _, ok := loadMemo(t, s, "other", "c1", "a"); !ok {
		t.Error("DeleteMemos deleted another namespace's cache")
	}
}
