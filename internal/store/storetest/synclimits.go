package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/braidwf/braid/internal/store"
)

func runSyncLimits(t *testing.T, b Backend) {
	t.Run("CRUD", func(t *testing.T) { b.limitsCRUD(t) })
	t.Run("DeleteTwice", func(t *testing.T) { b.limitsDeleteTwice(t) })
	t.Run("DatabaseLimits", func(t *testing.T) { b.limitsDatabase(t) })
	t.Run("InvalidRef", func(t *testing.T) { b.limitsInvalidRef(t) })
	t.Run("InvalidLimit", func(t *testing.T) { b.limitsInvalidLimit(t) })
	t.Run("Keys", func(t *testing.T) { b.limitsKeys(t) })
	t.Run("Reopen", func(t *testing.T) { b.limitsReopen(t) })
}

// openLimits opens the case's store as SyncLimits.
func (b Backend) openLimits(t *testing.T, name string) (Env, SyncLimits) {
	t.Helper()
	env, s := b.open(t, "SyncLimits/"+name)
	return env, as[SyncLimits](t, s, "sync limit")
}

// getLimit fails the test unless r's limit is want.
func getLimit(t *testing.T, s SyncLimits, r store.SyncLimitRef, want int, what string) {
	t.Helper()
	if n, err := s.GetSyncLimit(context.Background(), r); err != nil || n != want {
		t.Fatalf("%s: Get %s = %d, %v; want %d", what, r, n, err, want)
	}
}

// A ConfigMap limit is created once, read, changed and deleted; each
// call on a missing one is ErrNotFound.
func (b Backend) limitsCRUD(t *testing.T) {
	ctx := context.Background()
	env, s := b.openLimits(t, "CRUD")
	r := store.SyncLimitRef{Namespace: env.Namespace, ConfigMap: "limits", Key: "workers"}

	_, err := s.GetSyncLimit(ctx, r)
	isErr(t, err, store.ErrNotFound, "Get before Create")
	isErr(t, s.UpdateSyncLimit(ctx, r, 3), store.ErrNotFound, "Update before Create")
	isErr(t, s.DeleteSyncLimit(ctx, r), store.ErrNotFound, "Delete before Create")

	must(t, s.CreateSyncLimit(ctx, r, 2), "Create")
	isErr(t, s.CreateSyncLimit(ctx, r, 5), store.ErrAlreadyExists, "Create twice")
	getLimit(t, s, r, 2, "a second Create must not change it")
	other := store.SyncLimitRef{Namespace: env.Namespace, ConfigMap: "limits", Key: "other"}
	must(t, s.CreateSyncLimit(ctx, other, 9), "Create another key of the ConfigMap")

	must(t, s.UpdateSyncLimit(ctx, r, 4), "Update")
	getLimit(t, s, r, 4, "after Update")
	getLimit(t, s, other, 9, "the other key after Update")

	must(t, s.DeleteSyncLimit(ctx, r), "Delete")
	_, err = s.GetSyncLimit(ctx, r)
	isErr(t, err, store.ErrNotFound, "Get after Delete")
	isErr(t, s.UpdateSyncLimit(ctx, r, 1), store.ErrNotFound, "Update after Delete")
	getLimit(t, s, other, 9, "the other key after Delete")
}

// Deleting a limit that is gone is ErrNotFound.
func (b Backend) limitsDeleteTwice(t *testing.T) {
	ctx := context.Background()
	env, s := b.openLimits(t, "DeleteTwice")
	r := store.SyncLimitRef{Namespace: env.Namespace, ConfigMap: "limits", Key: "workers"}
	must(t, s.CreateSyncLimit(ctx, r, 2), "Create")
	must(t, s.DeleteSyncLimit(ctx, r), "Delete")
	isErr(t, s.DeleteSyncLimit(ctx, r), store.ErrNotFound, "Delete twice")
}

// A database limit (no ConfigMap) and a ConfigMap limit of the same key
// are two limits.
func (b Backend) limitsDatabase(t *testing.T) {
	ctx := context.Background()
	env, s := b.openLimits(t, "DatabaseLimits")
	cm := store.SyncLimitRef{Namespace: env.Namespace, ConfigMap: "limits", Key: "workers"}
	db := store.SyncLimitRef{Namespace: env.Namespace, Key: "workers"}

	_, err := s.GetSyncLimit(ctx, db)
	isErr(t, err, store.ErrNotFound, "Get before Create")
	isErr(t, s.UpdateSyncLimit(ctx, db, 3), store.ErrNotFound, "Update before Create")
	isErr(t, s.DeleteSyncLimit(ctx, db), store.ErrNotFound, "Delete before Create")
	must(t, s.CreateSyncLimit(ctx, db, 2), "Create database limit")
	isErr(t, s.CreateSyncLimit(ctx, db, 5), store.ErrAlreadyExists, "Create twice")
	must(t, s.CreateSyncLimit(ctx, cm, 7), "Create ConfigMap limit of the same key")
	getLimit(t, s, db, 2, "a second Create must not change it")

	must(t, s.UpdateSyncLimit(ctx, db, 4), "Update database limit")
	getLimit(t, s, db, 4, "after Update")
	getLimit(t, s, cm, 7, "the ConfigMap limit after the database limit's Update")
	must(t, s.UpdateSyncLimit(ctx, cm, 8), "Update ConfigMap limit")
	getLimit(t, s, db, 4, "the database limit after the ConfigMap limit's Update")

	must(t, s.DeleteSyncLimit(ctx, db), "Delete")
	_, err = s.GetSyncLimit(ctx, db)
	isErr(t, err, store.ErrNotFound, "Get after Delete")
	isErr(t, s.DeleteSyncLimit(ctx, db), store.ErrNotFound, "Delete twice")
	getLimit(t, s, cm, 8, "the ConfigMap limit after the database limit's Delete")
}

// A ref needs a namespace and a key.
func (b Backend) limitsInvalidRef(t *testing.T) {
	ctx := context.Background()
	env, s := b.openLimits(t, "InvalidRef")
	for _, r := range []store.SyncLimitRef{
		{ConfigMap: "cm", Key: "k"}, {Namespace: env.Namespace, ConfigMap: "cm"}, {Key: "k"}, {Namespace: env.Namespace},
	} {
		isErr(t, s.CreateSyncLimit(ctx, r, 1), store.ErrInvalid, fmt.Sprintf("Create %v", r))
	}
}

// A limit is at least 1; a refused Update leaves the limit.
func (b Backend) limitsInvalidLimit(t *testing.T) {
	ctx := context.Background()
	env, s := b.openLimits(t, "InvalidLimit")
	r := store.SyncLimitRef{Namespace: env.Namespace, ConfigMap: "cm", Key: "k"}
	for _, n := range []int{0, -1} {
		isErr(t, s.CreateSyncLimit(ctx, r, n), store.ErrInvalid, fmt.Sprintf("Create %d", n))
	}
	must(t, s.CreateSyncLimit(ctx, r, 1), "Create")
	for _, n := range []int{0, -1} {
		isErr(t, s.UpdateSyncLimit(ctx, r, n), store.ErrInvalid, fmt.Sprintf("Update to %d", n))
	}
	getLimit(t, s, r, 1, "after refused Updates")
}

// The keys of a ConfigMap (or, ConfigMap "", the database limits of a
// namespace), sorted.
func (b Backend) limitsKeys(t *testing.T) {
	ctx := context.Background()
	env, s := b.openLimits(t, "Keys")
	k := as[SyncLimitKeyLister](t, s, "SyncLimitKeys")
	ns, other := env.Namespace, env.Other
	for _, r := range []store.SyncLimitRef{
		{Namespace: ns, ConfigMap: "cm", Key: "b"}, {Namespace: ns, ConfigMap: "cm", Key: "a"},
		{Namespace: ns, ConfigMap: "other", Key: "c"}, {Namespace: other, ConfigMap: "cm", Key: "d"},
		{Namespace: ns, Key: "db"},
	} {
		must(t, s.CreateSyncLimit(ctx, r, 1), "Create "+r.String())
	}
	for _, c := range []struct {
		ns, cm string
		want   []string
	}{{ns, "cm", []string{"a", "b"}}, {ns, "", []string{"db"}}, {other, "cm", []string{"d"}}, {ns, "none", nil}} {
		got, err := k.SyncLimitKeys(ctx, c.ns, c.cm)
		must(t, err, "SyncLimitKeys")
		if !slices.Equal(got, c.want) {
			t.Errorf("SyncLimitKeys(%s, %s) = %q, want %q", c.ns, c.cm, got, c.want)
		}
	}
}

// Limits are in the storage: a store opened again on it sees them.
func (b Backend) limitsReopen(t *testing.T) {
	ctx := context.Background()
	env, s := b.openLimits(t, "Reopen")
	r := store.SyncLimitRef{Namespace: env.Namespace, ConfigMap: "cm", Key: "k"}
	must(t, s.CreateSyncLimit(ctx, r, 9), "Create")
	if c, ok := s.(Closer); ok {
		must(t, c.Close(), "close")
	}
	getLimit(t, as[SyncLimits](t, env.Open(), "sync limit"), r, 9, "after reopen")
}
