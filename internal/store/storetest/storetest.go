package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Archive is the archive API of a store (sqlite.Store, postgres.Store).
type Archive interface {
	Archive(ctx context.Context, wf *v1alpha1.Workflow) error
	ArchiveBatch(ctx context.Context, wfs []*v1alpha1.Workflow) error
	GetArchived(ctx context.Context, uid string) (*v1alpha1.Workflow, error)
	DeleteArchived(ctx context.Context, uid string) error
	ListArchived(ctx context.Context, opts store.ArchiveListOptions) ([]v1alpha1.Workflow, bool, error)
	CountArchived(ctx context.Context, opts store.ArchiveListOptions) (int64, error)
	ArchivedLabelKeys(ctx context.Context, namespace string) ([]string, error)
	ArchivedLabelValues(ctx context.Context, namespace, key string) ([]string, error)
}

// Memos is the memoization cache API of a store.
type Memos interface {
	LoadMemo(ctx context.Context, namespace, cache, key string) (store.MemoEntry, bool, error)
	SaveMemo(ctx context.Context, e store.MemoEntry) error
	HitMemo(ctx context.Context, namespace, cache, key string) error
	PruneMemos(ctx context.Context, before time.Time) (int64, error)
}

// MemoDeleter is a Memos that can drop a whole cache.
type MemoDeleter interface {
	DeleteMemos(ctx context.Context, namespace, cache string) (int64, error)
}

// SyncLimits is the semaphore limit API of a store.
type SyncLimits interface {
	GetSyncLimit(ctx context.Context, r store.SyncLimitRef) (int, error)
	CreateSyncLimit(ctx context.Context, r store.SyncLimitRef, n int) error
	UpdateSyncLimit(ctx context.Context, r store.SyncLimitRef, n int) error
	DeleteSyncLimit(ctx context.Context, r store.SyncLimitRef) error
}

// SyncLimitKeyLister is a SyncLimits that can list a ConfigMap's keys.
type SyncLimitKeyLister interface {
	SyncLimitKeys(ctx context.Context, namespace, configMap string) ([]string, error)
}

// Closer is a store that can be closed.
type Closer interface{ Close() error }

// Env is the storage one case runs on.
type Env struct {
	// Open opens a store on the storage; a second call opens another on
	// the same storage, as after a restart. The backend closes each when
	// the test ends. The store implements some of Archive, Memos and
	// SyncLimits (and MemoDeleter, SyncLimitKeyLister, Closer); the cases
	// of the others are skipped.
	Open func() any
	// Namespace and Other are two namespaces the case may write in; ""
	// means "ns" and "other".
	Namespace, Other string
}

// Backend is one store implementation under test.
type Backend struct {
	// New makes fresh, empty storage for one case, read through the
	// stores Env.Open opens with clock as their clock.
	New func(t *testing.T, clock func() time.Time) Env
	// ErrClosed is what a closed store's calls return.
	ErrClosed error
	// AfterLoad, when set, runs after a case has archived many workflows
	// (PostgreSQL: ANALYZE, so that the planner sees the data).
	AfterLoad func(t *testing.T, s any)
	// Skip maps the name of a case the backend does not support
	// ("SyncLimits/DeleteTwice") to the reason.
	Skip map[string]string
}

// Run runs every contract case against b, each as a subtest named
// "<API>/<case>".
func Run(t *testing.T, b Backend) {
	t.Run("Archive", func(t *testing.T) { runArchive(t, b) })
	t.Run("Memos", func(t *testing.T) { runMemos(t, b) })
	t.Run("SyncLimits", func(t *testing.T) { runSyncLimits(t, b) })
	t.Run("Closed", func(t *testing.T) { b.closed(t) })
}

// open runs the case name on fresh storage: it skips when the backend
// gives a reason, and returns the env and its first store.
func (b Backend) open(t *testing.T, name string) (Env, any) {
	t.Helper()
	if why, ok := b.Skip[name]; ok {
		t.Skip(why)
	}
	env := b.New(t, newClock().Now)
	if env.Namespace == "" {
		env.Namespace = "ns"
	}
	if env.Other == "" {
		env.Other = "other"
	}
	return env, env.Open()
}

// as is s as the API T, or skips the test when s lacks it.
func as[T any](t *testing.T, s any, api string) T {
	t.Helper()
	v, ok := s.(T)
	if !ok {
		t.Skipf("%T has no %s API", s, api)
	}
	return v
}

// clock moves one second forward at every reading, so that consecutive
// writes get increasing timestamps, whole seconds apart (a ConfigMap
// cache keeps seconds).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// diffJSON compares two values by their JSON, as the API shows them; ""
// when equal.
func diffJSON(t *testing.T, want, got any) string {
	t.Helper()
	enc := func(v any) []byte {
		b, err := json.Marshal(v) // map keys sorted: equal objects give equal bytes
		must(t, err, "marshal")
		return b
	}
	wb, gb := enc(want), enc(got)
	if bytes.Equal(wb, gb) {
		return ""
	}
	var w, g any
	must(t, json.Unmarshal(wb, &w), "unmarshal")
	must(t, json.Unmarshal(gb, &g), "unmarshal")
	return cmp.Diff(w, g)
}

// isErr fails the test unless err wraps target.
func isErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
