package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The archive TTL deletes the archived workflows that finished longer ago
// than it, in batches, and keeps the others.
func TestSweepArchive(t *testing.T) {
	st, _ := openStoreAndRuntime(t, t.TempDir())
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ages := map[string]time.Duration{"old-1": 30 * time.Hour, "old-2": 25 * time.Hour, "old-3": 48 * time.Hour, "young": time.Hour, "edge": 23 * time.Hour}
	for name, age := range ages {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(now.Add(-age - time.Minute))}}
		wf.Status.Phase = v1alpha1.WorkflowSucceeded
		wf.Status.StartedAt, wf.Status.FinishedAt = metav1.NewTime(now.Add(-age-time.Minute)), metav1.NewTime(now.Add(-age))
		if err := st.Archive(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	defer func(n int) { archiveSweepBatch = n }(archiveSweepBatch)
	archiveSweepBatch = 2
	n, err := sweepArchive(ctx, st, 24*time.Hour, now)
	if err != nil || n != 3 {
		t.Fatalf("deleted %d (%v), want 3", n, err)
	}
	left, _, err := st.ListArchived(ctx, store.ArchiveListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, wf := range left {
		names = append(names, wf.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"edge", "young"}) {
		t.Fatalf("left %v", names)
	}
	if n, err := sweepArchive(ctx, st, 24*time.Hour, now); err != nil || n != 0 {
		t.Fatalf("a second sweep deleted %d (%v)", n, err)
	}
}
