package server

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// argo list's filters over REST: nameFilter on the name of the field
// selector, createdAfter, finishedBefore and spec.startedAt selectors.
func TestListFiltersREST(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	ctx := context.Background()
	var created []time.Time
	for i, name := range []string{"build-1", "build-2", "deploy"} {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: name}}
		wf.Spec.Entrypoint = "main"
		if i < 2 {
			wf.Status.Phase = v1alpha1.WorkflowSucceeded
			wf.Status.FinishedAt = metav1.NewTime(time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC))
		}
		if err := st.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
		created = append(created, wf.CreationTimestamp.Time)
	}
	list := func(query string) []string {
		t.Helper()
		res := do(t, "GET", "http://"+addr+"/api/v1/workflows/argo?"+query, "")
		if res.status != 200 {
			t.Fatalf("%s: %d %s", query, res.status, res.body)
		}
		got := decodeInto[v1alpha1.WorkflowList](t, res.body)
		var names []string
		for _, wf := range got.Items {
			names = append(names, wf.Name)
		}
		slices.Sort(names)
		return names
	}
	q := url.QueryEscape
	tests := []struct {
		query string
		want  []string
	}{
		{"listOptions.fieldSelector=" + q("metadata.name=build") + "&nameFilter=Prefix", []string{"build-1", "build-2"}},
		{"listOptions.fieldSelector=" + q("metadata.name=ploy") + "&nameFilter=Contains", []string{"deploy"}},
		{"listOptions.fieldSelector=" + q("metadata.name=deploy") + "&nameFilter=NotEquals", []string{"build-1", "build-2"}},
		{"finishedBefore=" + q("2026-01-01T12:00:00Z"), []string{"build-1"}},
		{"createdAfter=" + q(created[0].Add(-time.Hour).Format(time.RFC3339)), []string{"build-1", "build-2", "deploy"}},
		{"createdAfter=" + q(created[2].Add(time.Hour).Format(time.RFC3339)), nil},
		{"listOptions.fieldSelector=" + q("spec.startedAt<"+created[0].Add(-time.Hour).Format(time.RFC3339)), nil},
	}
	for _, tc := range tests {
		if got := list(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.query, got, tc.want)
		}
	}
	if res := do(t, "GET", "http://"+addr+"/api/v1/workflows/argo?createdAfter=yesterday", ""); res.status != 400 {
		t.Errorf("a bad createdAfter: %d %s", res.status, res.body)
	}
}

// GET answers from the archive once the live workflow is deleted.
func TestGetFallsBackToArchive(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	ctx := context.Background()
	wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: "gone"}}
	wf.Spec.Entrypoint = "main"
	wf.Status.Phase = v1alpha1.WorkflowSucceeded
	wf.Status.Nodes = v1alpha1.Nodes{"gone": {ID: "gone", Name: "gone", Type: v1alpha1.NodeTypePod, Phase: v1alpha1.NodeSucceeded}}
	if err := st.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	if err := st.Archive(ctx, wf); err != nil {
		t.Fatal(err)
	}
	if res := do(t, "DELETE", "http://"+addr+"/api/v1/workflows/argo/gone", ""); res.status != 200 {
		t.Fatalf("delete: %d %s", res.status, res.body)
	}
	res := do(t, "GET", "http://"+addr+"/api/v1/workflows/argo/gone", "")
	if res.status != 200 {
		t.Fatalf("get: %d %s", res.status, res.body)
	}
	got := decodeInto[v1alpha1.Workflow](t, res.body)
	if got.UID != wf.UID || len(got.Status.Nodes) != 1 {
		t.Fatalf("got uid %s with %d nodes", got.UID, len(got.Status.Nodes))
	}
	if res := do(t, "GET", "http://"+addr+"/api/v1/workflows/argo/gone?uid=other", ""); res.status != 404 {
		t.Fatalf("get with another uid: %d", res.status)
	}
	if res := do(t, "GET", "http://"+addr+"/api/v1/workflows/argo/never", ""); res.status != 404 {
		t.Fatalf("get of a workflow never seen: %d", res.status)
	}
}

// A live list page gives metadata.remainingItemCount when the field
// selector asks (ext.showRemainingItemCount=true): the workflows after it
// that pass the same filters, counted by the store; finishedBefore is a
// filter of the store's page, so pages are full until the last.
func TestListRemainingItemCount(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	ctx := context.Background()
	for i := range 9 {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: fmt.Sprintf("wf-%d", i),
			Labels: map[string]string{"parity": []string{"even", "odd"}[i%2]}}}
		if i%3 != 0 { // 6 finished, at 10:0i
			wf.Status.Phase = v1alpha1.WorkflowSucceeded
			wf.Status.FinishedAt = metav1.NewTime(time.Date(2026, 1, 1, 10, i, 0, 0, time.UTC))
		}
		if err := st.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	other := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "wf-9", Labels: map[string]string{"parity": "odd"}}}
	if err := st.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	get := func(query string) wfList {
		t.Helper()
		res := do(t, "GET", "http://"+addr+"/api/v1/workflows/argo?"+query, "")
		if res.status != 200 {
			t.Fatalf("%s: %d %s", query, res.status, res.body)
		}
		return decodeInto[wfList](t, res.body)
	}
	const remaining = "listOptions.fieldSelector=ext.showRemainingItemCount%3Dtrue"
	q := url.QueryEscape
	for _, tc := range []struct {
		filter string
		want   int
	}{
		{"", 9},
		{"listOptions.labelSelector=parity%3Dodd", 4},
		{"listOptions.labelSelector=" + q("parity in (even)") + "&finishedBefore=" + q("2026-01-01T10:05:00Z"), 2}, // 2, 4
		{"finishedBefore=" + q("2026-01-01T10:05:00Z"), 3},                                                         // 1, 2, 4
		{"nameFilter=Prefix&listOptions.fieldSelector=" + q("metadata.name=wf-,ext.showRemainingItemCount=true"), 9},
		{"nameFilter=NotEquals&listOptions.fieldSelector=" + q("metadata.name=wf-1,ext.showRemainingItemCount=true"), 8},
		{"createdAfter=" + q("2020-01-01T00:00:00Z"), 9},
	} {
		sel := remaining
		if strings.Contains(tc.filter, "fieldSelector") {
			sel = ""
		}
		seen, cont := 0, ""
		for pages := 0; ; pages++ {
			l := get(strings.Join([]string{tc.filter, sel, "listOptions.limit=2", "fields=metadata,items.metadata.name",
				"listOptions.continue=" + q(cont)}, "&"))
			seen += len(l.Items)
			if l.Metadata.Continue != "" && len(l.Items) != 2 {
				t.Errorf("%s: a page of %d with a continue token", tc.filter, len(l.Items))
			}
			if r := l.Metadata.RemainingItemCount; r == nil || seen+int(*r) != tc.want {
				t.Fatalf("%s: page %d: %d seen, remainingItemCount %v; want %d in all", tc.filter, pages+1, seen, r, tc.want)
			}
			if cont = l.Metadata.Continue; cont == "" || pages > 10 {
				break
			}
		}
		if seen != tc.want {
			t.Errorf("%s: %d listed, want %d", tc.filter, seen, tc.want)
		}
	}
	if l := get("listOptions.limit=2"); l.Metadata.RemainingItemCount != nil {
		t.Errorf("remainingItemCount %d without ext.showRemainingItemCount", *l.Metadata.RemainingItemCount)
	}
	if l := get(remaining + "&fields=metadata"); l.Metadata.RemainingItemCount == nil || *l.Metadata.RemainingItemCount != 0 || len(l.Items) != 0 {
		t.Errorf("a whole list: remainingItemCount %v, %d items; want 0, none kept", l.Metadata.RemainingItemCount, len(l.Items))
	}
}
