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
	st, rt := openStoreAndRuntime(t, t.TempDir())
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
	deleted, err := sweepArchive(ctx, st, 24*time.Hour, now)
	if err != nil || len(deleted) != 3 {
		t.Fatalf("deleted %v (%v), want 3", deleted, err)
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
	if again, err := sweepArchive(ctx, st, 24*time.Hour, now); err != nil || len(again) != 0 {
		t.Fatalf("a second sweep deleted %v (%v)", again, err)
	}

	// The step logs of those deleted go, unless a live workflow has the name.
	live := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "old-1", Namespace: "default"}}
	live.APIVersion, live.Kind = v1alpha1.APIVersion, "Workflow"
	if err := st.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	var forgotten []string
	c, err := New(Options{Store: st, Runtime: rt, Archive: st, ForgetWorkflow: func(ns, name string) error {
		forgotten = append(forgotten, ns+"/"+name)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.NewManager(st, StoreTemplates(st))
	if err != nil {
		t.Fatal(err)
	}
	m.forgetGone(ctx, st, deleted)
	slices.Sort(forgotten)
	if !slices.Equal(forgotten, []string{"default/old-2", "default/old-3"}) {
		t.Fatalf("forgotten %v", forgotten)
	}
}
