package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func runMemos(t *testing.T, b Backend) {
	t.Run("SaveLoad", func(t *testing.T) { b.memoSaveLoad(t) })
	t.Run("SaveInvalid", func(t *testing.T) { b.memoSaveInvalid(t) })
	t.Run("HitPrune", func(t *testing.T) { b.memoHitPrune(t) })
	t.Run("Delete", func(t *testing.T) { b.memoDelete(t) })
	t.Run("Reopen", func(t *testing.T) { b.memoReopen(t) })
}

// openMemos opens the case's store as Memos.
func (b Backend) openMemos(t *testing.T, name string) (Env, Memos) {
	t.Helper()
	env, s := b.open(t, "Memos/"+name)
	return env, as[Memos](t, s, "memo")
}

func memoOutputs(params ...string) *v1alpha1.Outputs {
	exit := "0"
	out := &v1alpha1.Outputs{ExitCode: &exit}
	for i := 0; i+1 < len(params); i += 2 {
		out.Parameters = append(out.Parameters, v1alpha1.Parameter{Name: params[i], Value: v1alpha1.AnyStringPtr(params[i+1])})
	}
	return out
}

func loadMemo(t *testing.T, s Memos, ns, cache, key string) (store.MemoEntry, bool) {
	t.Helper()
	e, ok, err := s.LoadMemo(context.Background(), ns, cache, key)
	must(t, err, "LoadMemo "+key)
	return e, ok
}

// An entry is saved once per node: the same node saved again changes
// nothing, another node replaces it; times are UTC.
func (b Backend) memoSaveLoad(t *testing.T) {
	ctx := context.Background()
	env, s := b.openMemos(t, "SaveLoad")
	ns := env.Namespace
	if _, ok := loadMemo(t, s, ns, "c", "k"); ok {
		t.Fatal("an empty store has an entry")
	}
	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: ns, Cache: "c", Key: "k", NodeID: "wf-1", Outputs: memoOutputs("hello", "world")}), "SaveMemo")
	e, ok := loadMemo(t, s, ns, "c", "k")
	if !ok {
		t.Fatal("saved entry not found")
	}
	if e.NodeID != "wf-1" || e.Namespace != ns || e.Cache != "c" || e.Key != "k" {
		t.Errorf("entry %+v", e)
	}
	if got := e.Outputs.Parameters[0].Value.String(); got != "world" || *e.Outputs.ExitCode != "0" {
		t.Errorf("outputs %+v", e.Outputs)
	}
	if e.CreatedAt.IsZero() || !e.LastHitAt.Equal(e.CreatedAt) || e.CreatedAt.Location().String() != "UTC" {
		t.Errorf("created %v, last hit %v: want equal, set and UTC", e.CreatedAt, e.LastHitAt)
	}

	// Other namespaces, caches and keys are other entries.
	for _, k := range [][3]string{{env.Other, "c", "k"}, {ns, "d", "k"}, {ns, "c", "k2"}} {
		if _, ok := loadMemo(t, s, k[0], k[1], k[2]); ok {
			t.Errorf("entry found under %v", k)
		}
	}

	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: ns, Cache: "c", Key: "k", NodeID: "wf-1", Outputs: memoOutputs("hello", "again")}), "SaveMemo again")
	again, _ := loadMemo(t, s, ns, "c", "k")
	if !again.CreatedAt.Equal(e.CreatedAt) || again.Outputs.Parameters[0].Value.String() != "world" {
		t.Errorf("a repeated save changed the entry: %+v", again)
	}

	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: ns, Cache: "c", Key: "k", NodeID: "wf2-1", Outputs: memoOutputs("hello", "newer")}), "SaveMemo other node")
	newer, _ := loadMemo(t, s, ns, "c", "k")
	if newer.NodeID != "wf2-1" || newer.Outputs.Parameters[0].Value.String() != "newer" || !newer.CreatedAt.After(e.CreatedAt) {
		t.Errorf("replaced entry %+v (first created %v)", newer, e.CreatedAt)
	}

	// A node without outputs is cached too.
	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: ns, Cache: "c", Key: "none", NodeID: "wf-2"}), "SaveMemo without outputs")
	none, ok := loadMemo(t, s, ns, "c", "none")
	if !ok || none.Outputs != nil {
		t.Errorf("entry without outputs: ok %v, outputs %+v", ok, none.Outputs)
	}
}

// An entry needs a namespace, a cache, a key and a node.
func (b Backend) memoSaveInvalid(t *testing.T) {
	env, s := b.openMemos(t, "SaveInvalid")
	ns := env.Namespace
	for _, e := range []store.MemoEntry{
		{Cache: "c", Key: "k", NodeID: "n"},
		{Namespace: ns, Key: "k", NodeID: "n"},
		{Namespace: ns, Cache: "c", NodeID: "n"},
		{Namespace: ns, Cache: "c", Key: "k"},
	} {
		isErr(t, s.SaveMemo(context.Background(), e), store.ErrInvalid, fmt.Sprintf("SaveMemo %+v", e))
	}
}

// A hit moves LastHitAt only (maxAge is the caller's decision from
// CreatedAt); pruning goes by LastHitAt.
func (b Backend) memoHitPrune(t *testing.T) {
	ctx := context.Background()
	env, s := b.openMemos(t, "HitPrune")
	ns := env.Namespace
	for _, k := range []string{"a", "b", "c"} {
		must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: ns, Cache: "c1", Key: k, NodeID: "n-" + k}), "SaveMemo "+k)
	}
	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: ns, Cache: "c2", Key: "a", NodeID: "n-x"}), "SaveMemo c2")
	a, _ := loadMemo(t, s, ns, "c1", "a")
	must(t, s.HitMemo(ctx, ns, "c1", "a"), "HitMemo")
	must(t, s.HitMemo(ctx, ns, "c1", "gone"), "HitMemo of a missing entry")
	must(t, s.HitMemo(ctx, ns, "no-such-cache", "a"), "HitMemo in a missing cache")
	hit, _ := loadMemo(t, s, ns, "c1", "a")
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
		if _, ok := loadMemo(t, s, ns, k[0], k[1]); ok {
			t.Errorf("%v survived the prune", k)
		}
	}
	if _, ok := loadMemo(t, s, ns, "c1", "a"); !ok {
		t.Error("the entry hit last was pruned")
	}
}

// DeleteMemos drops one cache of one namespace.
func (b Backend) memoDelete(t *testing.T) {
	ctx := context.Background()
	env, s := b.openMemos(t, "Delete")
	d := as[MemoDeleter](t, s, "DeleteMemos")
	ns := env.Namespace
	for _, e := range []store.MemoEntry{
		{Namespace: ns, Cache: "c1", Key: "a", NodeID: "n-a"}, {Namespace: ns, Cache: "c1", Key: "b", NodeID: "n-b"},
		{Namespace: ns, Cache: "c2", Key: "a", NodeID: "n-x"}, {Namespace: env.Other, Cache: "c1", Key: "a", NodeID: "n-o"},
	} {
		must(t, s.SaveMemo(ctx, e), "SaveMemo")
	}
	n, err := d.DeleteMemos(ctx, ns, "c1")
	must(t, err, "DeleteMemos")
	if n != 2 {
		t.Errorf("deleted %d entries, want 2", n)
	}
	if _, ok := loadMemo(t, s, ns, "c1", "a"); ok {
		t.Error("entry survived DeleteMemos")
	}
	if _, ok := loadMemo(t, s, ns, "c2", "a"); !ok {
		t.Error("DeleteMemos deleted another cache")
	}
	if _, ok := loadMemo(t, s, env.Other, "c1", "a"); !ok {
		t.Error("DeleteMemos deleted another namespace's cache")
	}
}

// Entries are in the storage: a store opened again on it sees them.
func (b Backend) memoReopen(t *testing.T) {
	ctx := context.Background()
	env, s := b.openMemos(t, "Reopen")
	must(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: env.Namespace, Cache: "c", Key: "k", NodeID: "old-1", Outputs: memoOutputs("p", "v")}), "SaveMemo")
	if c, ok := s.(Closer); ok {
		must(t, c.Close(), "close")
	}
	again := as[Memos](t, env.Open(), "memo")
	e, ok := loadMemo(t, again, env.Namespace, "c", "k")
	if !ok || e.NodeID != "old-1" || e.Outputs.Parameters[0].Value.String() != "v" {
		t.Errorf("after reopen: ok %v, entry %+v", ok, e)
	}
}
