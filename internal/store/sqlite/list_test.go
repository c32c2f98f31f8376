package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seedWorkflows creates, in this order (so oldest first):
//
//	argo/a  Succeeded  app=x,team=red
//	argo/b  Running    app=x
//	dev/c   Failed     app=y,team=red
//	dev/d   Running    (no labels)
//	argo/e  Running    app=y,team=blue
func seedWorkflows(t *testing.T, s *Store) {
	t.Helper()
	for _, w := range []struct {
		ns, name string
		phase    v1alpha1.WorkflowPhase
		labels   map[string]string
	}{
		{"argo", "a", v1alpha1.WorkflowSucceeded, map[string]string{"app": "x", "team": "red"}},
		{"argo", "b", v1alpha1.WorkflowRunning, map[string]string{"app": "x"}},
		{"dev", "c", v1alpha1.WorkflowFailed, map[string]string{"app": "y", "team": "red"}},
		{"dev", "d", v1alpha1.WorkflowRunning, nil},
		{"argo", "e", v1alpha1.WorkflowRunning, map[string]string{"app": "y", "team": "blue"}},
	} {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: w.name, Labels: w.labels}}
		wf.Status.Phase = w.phase
		wf.Status.Nodes = v1alpha1.Nodes{w.name: {ID: w.name, Name: w.name, Type: v1alpha1.NodeTypePod}}
		must(t, s.Create(context.Background(), wf), "Create "+w.name)
	}
}

func names(objs []store.Object) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func TestListFilters(t *testing.T) {
	s := testStore(t)
	seedWorkflows(t, s)
	tests := []struct {
		name      string
		namespace string
		labels    string
		fields    string
		want      []string // newest first
	}{
		{name: "all namespaces, newest first", want: []string{"e", "d", "c", "b", "a"}},
		{name: "one namespace", namespace: "dev", want: []string{"d", "c"}},
		{name: "label equals", labels: "app=x", want: []string{"b", "a"}},
		{name: "label not equals", labels: "app!=x", want: []string{"e", "d", "c"}},
		{name: "label exists", labels: "team", want: []string{"e", "c", "a"}},
		{name: "label does not exist", labels: "!team", want: []string{"d", "b"}},
		{name: "label set", labels: "team in (red,green)", want: []string{"c", "a"}},
		{name: "labels and", labels: "app=y,team=red", want: []string{"c"}},
		{name: "label and namespace", namespace: "argo", labels: "app=y", want: []string{"e"}},
		{name: "phase", fields: "status.phase=Running", want: []string{"e", "d", "b"}},
		{name: "phase ==", fields: "status.phase==Failed", want: []string{"c"}},
		{name: "phase not", fields: "status.phase!=Running", want: []string{"c", "a"}},
		{name: "name", fields: "metadata.name=b", want: []string{"b"}},
		{name: "name not", fields: "metadata.name!=b", want: []string{"e", "d", "c", "a"}},
		{name: "namespace field", fields: "metadata.namespace=dev", want: []string{"d", "c"}},
		{name: "namespace field not", fields: "metadata.namespace!=dev", want: []string{"e", "b", "a"}},
		{name: "fields and", fields: "metadata.namespace=argo,status.phase=Running", want: []string{"e", "b"}},
		{name: "fields and labels", fields: "status.phase=Running", labels: "app", want: []string{"e", "b"}},
		{name: "nothing matches", labels: "app=z", want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, next, err := s.List(context.Background(), store.KindWorkflow, tt.namespace,
				store.ListOptions{LabelSelector: tt.labels, FieldSelector: tt.fields})
			must(t, err, "List")
			if g := names(got); !slices.Equal(g, tt.want) {
				t.Errorf("got %v, want %v", g, tt.want)
			}
			if next != "" {
				t.Errorf("continue token %q without a limit", next)
			}
		})
	}
}

func TestListOmitsNodes(t *testing.T) {
	s := testStore(t)
	seedWorkflows(t, s)
	got, _, err := s.List(context.Background(), store.KindWorkflow, "", store.ListOptions{})
	must(t, err, "List")
	for _, o := range got {
		wf := o.(*v1alpha1.Workflow)
		if wf.Status.Nodes != nil {
			t.Errorf("%s: List loaded %d nodes", wf.Name, len(wf.Status.Nodes))
		}
		if wf.Status.Phase == "" || wf.ResourceVersion != "1" || wf.Kind != "Workflow" {
			t.Errorf("%s: listed workflow lacks its status or metadata: %+v", wf.Name, wf.ObjectMeta)
		}
	}
	// Update of a listed workflow keeps its nodes (nil means "not loaded").
	wf := got[0].(*v1alpha1.Workflow)
	wf.Labels = map[string]string{"touched": "yes"}
	must(t, s.Update(context.Background(), wf), "Update listed workflow")
	full, err := s.Get(context.Background(), store.KindWorkflow, wf.Namespace, wf.Name)
	must(t, err, "Get")
	if n := len(full.(*v1alpha1.Workflow).Status.Nodes); n != 1 {
		t.Errorf("after updating a listed workflow: %d nodes, want 1", n)
	}
}

func TestListPagination(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	var all []string
	for i := range 23 {
		wf := &v1alpha1.Workflow{}
		wf.Namespace, wf.Name = "argo", fmt.Sprintf("wf-%02d", i)
		if i%3 == 0 {
			wf.Labels = map[string]string{"every": "third"}
		}
		must(t, s.Create(ctx, wf), "Create")
		all = append([]string{wf.Name}, all...) // newest first
	}
	var third []string
	for _, n := range all {
		var i int
		_, _ = fmt.Sscanf(n, "wf-%d", &i)
		if i%3 == 0 {
			third = append(third, n)
		}
	}
	tests := []struct {
		name   string
		labels string
		limit  int64
		want   []string
	}{
		{"pages of 5", "", 5, all},
		{"pages of 1", "", 1, all},
		{"one page exactly", "", 23, all},
		{"limit above count", "", 100, all},
		{"label filter, pages of 3", "every=third", 3, third},
		{"label filter, pages of 8", "every=third", 8, third},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			token, pages := "", 0
			for {
				objs, next, err := s.List(ctx, store.KindWorkflow, "argo",
					store.ListOptions{LabelSelector: tt.labels, Limit: tt.limit, Continue: token})
				must(t, err, "List")
				pages++
				if int64(len(objs)) > tt.limit {
					t.Fatalf("page of %d, limit %d", len(objs), tt.limit)
				}
				got = append(got, names(objs)...)
				if next == "" {
					break
				}
				if int64(len(objs)) != tt.limit {
					t.Errorf("short page (%d) with a continue token", len(objs))
				}
				token = next
				if pages > 100 {
					t.Fatalf("pagination does not end")
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if wantPages := (int64(len(tt.want)) + tt.limit - 1) / tt.limit; int64(pages) != max(wantPages, 1) {
				t.Errorf("%d pages, want %d", pages, wantPages)
			}
		})
	}

	// Objects created while paging are newer than the cursor: they do not
	// show up on later pages, and nothing is repeated or skipped.
	first, next, err := s.List(ctx, store.KindWorkflow, "argo", store.ListOptions{Limit: 10})
	must(t, err, "List")
	late := &v1alpha1.Workflow{}
	late.Namespace, late.Name = "argo", "late"
	must(t, s.Create(ctx, late), "Create during paging")
	must(t, s.Delete(ctx, store.KindWorkflow, "argo", all[0]), "Delete an already listed object")
	rest, _, err := s.List(ctx, store.KindWorkflow, "argo", store.ListOptions{Continue: next})
	must(t, err, "List rest")
	if got := append(names(first), names(rest)...); !slices.Equal(got, all) {
		t.Errorf("paging across writes: got %v, want %v", got, all)
	}
}

func TestListBadOptions(t *testing.T) {
	s := testStore(t)
	for _, opts := range []store.ListOptions{
		{LabelSelector: "a=(b"},
		{FieldSelector: "spec.entrypoint=main"},
		{FieldSelector: "metadata.name"},
		{Continue: "not-a-token"},
		{Continue: "eyJ2Ijo5LCJ0IjoxLCJpIjoxfQ"}, // {"v":9,...}: another version
	} {
		_, _, err := s.List(context.Background(), store.KindWorkflow, "", opts)
		isErr(t, err, ErrInvalid, fmt.Sprintf("List %+v", opts))
	}
}

func TestListKinds(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	for _, f := range fixtures() {
		must(t, s.Create(ctx, f.new(t)), "Create")
	}
	for _, f := range fixtures() {
		got, _, err := s.List(ctx, f.kind, "", store.ListOptions{})
		must(t, err, "List")
		if len(got) != 1 || got[0].GetObjectKind().GroupVersionKind().Kind != string(f.kind) {
			t.Errorf("List %s: %v", f.kind, names(got))
		}
		// A namespace argument does not hide cluster-scoped objects.
		got, _, err = s.List(ctx, f.kind, "argo", store.ListOptions{})
		must(t, err, "List in argo")
		if len(got) != 1 {
			t.Errorf("List %s in argo: %v", f.kind, names(got))
		}
	}
	// CronWorkflows filter on their phase too.
	got, _, err := s.List(ctx, store.KindCronWorkflow, "", store.ListOptions{FieldSelector: "status.phase=Active"})
	must(t, err, "List")
	if len(got) != 1 {
		t.Errorf("cron workflows by phase: %v", names(got))
	}
}

// Name filters and creation-time ranges, as argo list's nameFilter,
// createdAfter and the spec.startedAt selectors need.
func TestListNameAndTime(t *testing.T) {
	s := testStore(t)
	for _, name := range []string{"build-1", "build-2", "test_1", "deploy"} {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		must(t, s.Create(context.Background(), wf), "Create "+name)
	}
	all, _, err := s.List(context.Background(), store.KindWorkflow, "ns", store.ListOptions{})
	must(t, err, "List")
	created := map[string]time.Time{}
	for _, o := range all {
		created[o.GetName()] = o.GetCreationTimestamp().Time
	}
	tests := []struct {
		name string
		opts store.ListOptions
		want []string
	}{
		{"exact", store.ListOptions{Name: "deploy"}, []string{"deploy"}},
		{"exact by default name", store.ListOptions{Name: "build-1", NameFilter: "Exact"}, []string{"build-1"}},
		{"prefix", store.ListOptions{Name: "build", NameFilter: "Prefix"}, []string{"build-2", "build-1"}},
		{"contains", store.ListOptions{Name: "-", NameFilter: "Contains"}, []string{"build-2", "build-1"}},
		{"like wildcards are literal", store.ListOptions{Name: "t_1", NameFilter: "Contains"}, []string{"test_1"}},
		{"not equals", store.ListOptions{Name: "deploy", NameFilter: "NotEquals"}, []string{"test_1", "build-2", "build-1"}},
		{"created after", store.ListOptions{CreatedAfter: created["build-2"]}, []string{"deploy", "test_1"}},
		{"created before", store.ListOptions{CreatedBefore: created["build-2"]}, []string{"build-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, _, err := s.List(context.Background(), store.KindWorkflow, "ns", tc.opts)
			must(t, err, "List")
			if got := names(objs); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	_, _, err = s.List(context.Background(), store.KindWorkflow, "ns", store.ListOptions{Name: "x", NameFilter: "Regex"})
	isErr(t, err, ErrInvalid, "an unknown name filter")
}

// seedCounted adds to seedWorkflows' five workflows two finished ones
// (argo/f finished before dev/g) and numeric labels:
//
//	argo/f  Succeeded  app=x,size=5    finished 2026-01-01T00:00:10Z
//	dev/g   Failed     size=12         finished 2026-01-01T00:00:20Z
func seedCounted(t *testing.T, s *Store) {
	t.Helper()
	seedWorkflows(t, s)
	for _, w := range []struct {
		ns, name string
		phase    v1alpha1.WorkflowPhase
		labels   map[string]string
		finished int
	}{
		{"argo", "f", v1alpha1.WorkflowSucceeded, map[string]string{"app": "x", "size": "5"}, 10},
		{"dev", "g", v1alpha1.WorkflowFailed, map[string]string{"size": "12"}, 20},
	} {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: w.name, Labels: w.labels}}
		wf.Status.Phase = w.phase
		wf.Status.FinishedAt = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, w.finished, 0, time.UTC))
		must(t, s.Create(context.Background(), wf), "Create "+w.name)
	}
}

// Count agrees with List, for every filter List takes, and from every
// page's continue token on in both orders.
func TestCount(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	seedCounted(t, s)
	at := func(sec, nsec int) time.Time { return time.Date(2026, 1, 1, 0, 0, sec, nsec, time.UTC) }
	tests := []struct {
		name string
		ns   string
		opts store.ListOptions
		want int64
	}{
		{"all", "", store.ListOptions{}, 7},
		{"namespace", "dev", store.ListOptions{}, 3},
		{"label equals", "", store.ListOptions{LabelSelector: "app=x"}, 3},
		{"label ==", "", store.ListOptions{LabelSelector: "app==y"}, 2},
		{"label not equals (also without the label)", "", store.ListOptions{LabelSelector: "app!=x"}, 4},
		{"label in", "", store.ListOptions{LabelSelector: "team in (red,green)"}, 2},
		{"label notin", "", store.ListOptions{LabelSelector: "team notin (red)"}, 5},
		{"label exists", "", store.ListOptions{LabelSelector: "team"}, 3},
		{"label does not exist", "", store.ListOptions{LabelSelector: "!team"}, 4},
		{"label gt", "", store.ListOptions{LabelSelector: "size>6"}, 1},
		{"label lt, and another", "", store.ListOptions{LabelSelector: "size<20,app=x"}, 1},
		{"labels and namespace", "argo", store.ListOptions{LabelSelector: "app=y"}, 1},
		{"field selector", "", store.ListOptions{FieldSelector: "status.phase=Running"}, 3},
		{"field selector and label", "", store.ListOptions{FieldSelector: "metadata.namespace=argo", LabelSelector: "app=x"}, 3},
		{"name prefix", "", store.ListOptions{Name: "a", NameFilter: "Prefix"}, 1},
		{"finished before", "", store.ListOptions{FinishedBefore: at(20, 0)}, 1},
		{"finished before, a fraction after", "", store.ListOptions{FinishedBefore: at(20, 1)}, 2},
		{"nothing", "", store.ListOptions{LabelSelector: "app=z"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := s.Count(ctx, store.KindWorkflow, tc.ns, tc.opts)
			must(t, err, "Count")
			objs, _, err := s.List(ctx, store.KindWorkflow, tc.ns, tc.opts)
			must(t, err, "List")
			if n != tc.want || int64(len(objs)) != tc.want {
				t.Errorf("Count %d, List %d (%v), want %d", n, len(objs), names(objs), tc.want)
			}
			for _, order := range []store.ListOrder{store.OrderNewest, store.OrderArgo} {
				checkRemaining(t, s, tc.ns, tc.opts, order)
			}
		})
	}
	_, err := s.Count(ctx, store.KindWorkflow, "", store.ListOptions{LabelSelector: "a=(b"})
	isErr(t, err, ErrInvalid, "a bad selector")
	_, err = s.Count(ctx, store.KindWorkflow, "", store.ListOptions{Continue: "not-a-token"})
	isErr(t, err, ErrInvalid, "a bad token")
}

// checkRemaining pages through a list, two at a time, and checks that
// Count from each continue token is what the later pages hold.
func checkRemaining(t *testing.T, s *Store, ns string, opts store.ListOptions, order store.ListOrder) {
	t.Helper()
	ctx := context.Background()
	opts.Order, opts.Limit = order, 2
	var tokens []string
	var sizes []int
	for {
		objs, next, err := s.List(ctx, store.KindWorkflow, ns, opts)
		must(t, err, "List")
		sizes = append(sizes, len(objs))
		if next == "" {
			break
		}
		tokens = append(tokens, next)
		opts.Continue = next
	}
	for i, tok := range tokens {
		rest := 0
		for _, n := range sizes[i+1:] {
			rest += n
		}
		o := opts
		o.Continue, o.Limit = tok, 0
		n, err := s.Count(ctx, store.KindWorkflow, ns, o)
		must(t, err, "Count after a page")
		if n != int64(rest) {
			t.Errorf("order %q, after page %d: Count %d, want %d", order, i+1, n, rest)
		}
	}
}

// Count follows label changes and deletes (checkFile also compares the
// label rows with the labels column after every test).
func TestCountFollowsWrites(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	seedWorkflows(t, s)
	count := func(sel string) int64 {
		t.Helper()
		n, err := s.Count(ctx, store.KindWorkflow, "", store.ListOptions{LabelSelector: sel})
		must(t, err, "Count")
		return n
	}
	o, err := s.Get(ctx, store.KindWorkflow, "argo", "b")
	must(t, err, "Get")
	wf := o.(*v1alpha1.Workflow)
	wf.Labels = map[string]string{"app": "y", "team": "red"}
	must(t, s.Update(ctx, wf), "Update labels")
	if a, b := count("app=x"), count("team=red"); a != 1 || b != 3 {
		t.Errorf("after relabelling: app=x %d, team=red %d; want 1, 3", a, b)
	}
	wf.Labels = nil
	must(t, s.UpdateWorkflowStatus(ctx, wf, nil), "drop the labels")
	if n := count("!app"); n != 2 {
		t.Errorf("after dropping the labels: !app %d, want 2", n)
	}
	must(t, s.Delete(ctx, store.KindWorkflow, "argo", "a"), "Delete")
	if n := count("app=x"); n != 0 {
		t.Errorf("after deleting: app=x %d, want 0", n)
	}
}

// A file made before the label rows existed gets them from the labels
// column when it is migrated.
func TestCountAfterMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "braid.db")
	s := openStore(t, path, noMonitor)
	seedWorkflows(t, s)
	must(t, s.Close(), "Close")
	db, err := sql.Open("sqlite", path)
	must(t, err, "sql.Open")
	_, err = db.Exec("DROP TABLE object_labels; PRAGMA user_version = 5")
	must(t, err, "back to version 5")
	must(t, db.Close(), "close")

	s2 := openStore(t, path)
	n, err := s2.Count(ctx, store.KindWorkflow, "", store.ListOptions{LabelSelector: "team in (red,blue)"})
	must(t, err, "Count")
	if n != 3 {
		t.Errorf("after migration: %d, want 3", n)
	}
}

// finishedBefore is a filter of the store's query: pages are full, and
// only the last one is short.
func TestListFinishedBeforePages(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	for i := range 12 {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: fmt.Sprintf("wf-%02d", i)}}
		if i%3 != 0 { // 8 finished, at second i
			wf.Status.FinishedAt = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC))
		}
		must(t, s.Create(ctx, wf), "Create")
	}
	before := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC) // leaves 1, 2, 4, 5, 7, 8
	opts := store.ListOptions{Limit: 4, FinishedBefore: before}
	var got []string
	for {
		objs, next, err := s.List(ctx, store.KindWorkflow, "argo", opts)
		must(t, err, "List")
		if next != "" && len(objs) != 4 {
			t.Errorf("a page of %d with more to come", len(objs))
		}
		got = append(got, names(objs)...)
		if next == "" {
			break
		}
		opts.Continue = next
	}
	if want := []string{"wf-08", "wf-07", "wf-05", "wf-04", "wf-02", "wf-01"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
