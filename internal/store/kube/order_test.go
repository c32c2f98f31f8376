package kube

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The cache's list in Argo's order, a page at a time: unfinished newest
// created first, then latest finished first (to the second; ties newest
// created first), and a token good for its own order only.
func TestPageArgoOrder(t *testing.T) {
	base := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	var objs []store.Object
	for i, w := range []struct {
		name     string
		finished float64 // seconds after base; 0: unfinished
	}{{"a", 0}, {"b", 30}, {"c", 0}, {"d", 50}, {"e", 30.7}, {"f", 0}} {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: w.name,
			CreationTimestamp: metav1.NewTime(base.Add(time.Duration(i) * time.Second))}}
		if w.finished != 0 {
			wf.Status.FinishedAt = metav1.NewTime(base.Add(time.Duration(w.finished * float64(time.Second))))
		}
		objs = append(objs, wf)
	}
	want := []string{"f", "c", "a", "d", "e", "b"}
	for _, limit := range []int64{0, 1, 4} {
		opts := store.ListOptions{Order: store.OrderArgo, Limit: limit}
		sorted := slices.Clone(objs)
		sort.Slice(sorted, func(i, j int) bool {
			return positionOf(sorted[i], opts.Order).before(positionOf(sorted[j], opts.Order))
		})
		var got []string
		for pages := 0; pages < 10; pages++ {
			page, next, err := page(sorted, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page {
				got = append(got, o.GetName())
			}
			if next == "" {
				break
			}
			opts.Continue = next
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: got %v, want %v", limit, got, want)
		}
	}
	_, next, err := page(objs, store.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := page(objs, store.ListOptions{Order: store.OrderArgo, Continue: next}); err == nil {
		t.Error("a token of the newest-first order was taken for Argo's order")
	}
}

// The server's Counter (internal/server), which gives a list page its
// remainingItemCount.
var _ interface {
	Count(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) (int64, error)
} = (*Store)(nil)

// countAfter agrees with the pages that follow each token, in both
// orders; and finishedBefore keeps finished workflows before it, to the
// second.
func TestCountAfterAndFinishedBefore(t *testing.T) {
	base := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	var objs []store.Object
	for i, fin := range []float64{0, 30, 0, 50, 30.7, 0, 10} {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: string(rune('a' + i)),
			CreationTimestamp: metav1.NewTime(base.Add(time.Duration(i) * time.Second))}}
		if fin != 0 {
			wf.Status.FinishedAt = metav1.NewTime(base.Add(time.Duration(fin * float64(time.Second))))
		}
		objs = append(objs, wf)
	}
	for _, order := range []store.ListOrder{store.OrderNewest, store.OrderArgo} {
		sorted := slices.Clone(objs)
		sort.Slice(sorted, func(i, j int) bool { return positionOf(sorted[i], order).before(positionOf(sorted[j], order)) })
		opts := store.ListOptions{Order: order, Limit: 2}
		seen := 0
		for {
			pg, next, err := page(sorted, opts)
			if err != nil {
				t.Fatal(err)
			}
			seen += len(pg)
			if next == "" {
				break
			}
			n, err := countAfter(objs, store.ListOptions{Order: order, Continue: next})
			if err != nil || n != int64(len(objs)-seen) {
				t.Errorf("order %q after %d: count %d (%v), want %d", order, seen, n, err, len(objs)-seen)
			}
			opts.Continue = next
		}
	}
	f, err := newFilter(store.ListOptions{FinishedBefore: base.Add(30*time.Second + time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, o := range objs {
		if f.matches(o) {
			kept = append(kept, o.GetName())
		}
	}
	if want := []string{"b", "e", "g"}; !slices.Equal(kept, want) { // 30, 30.7 (30 to the second), 10
		t.Errorf("finishedBefore kept %v, want %v", kept, want)
	}
}
