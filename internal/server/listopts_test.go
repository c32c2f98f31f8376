package server

import (
	"context"
	"net/url"
	"slices"
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
		time.Sleep(10 * time.Millisecond)
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
