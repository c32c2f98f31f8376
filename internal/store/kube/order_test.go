package kube

import (
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
