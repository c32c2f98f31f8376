package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seedOrder creates, one second apart (the fake clock), in this order:
// a, b, c, d, e, f; then finishes b at 10:00:30, d at 10:00:50 and e at
// 10:00:30 (tied with b, and created after it), and f at 10:00:40.5 and
// then retries it (finishedAt cleared again). Argo's order is then: the
// unfinished newest first (f, c, a), then the latest finished first (d,
// then the tie e and b, newest created first).
func seedOrder(t *testing.T, s *Store) []string {
	t.Helper()
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: n, Labels: map[string]string{"app": n}}}
		wf.Spec.Entrypoint = "main"
		wf.Spec.Suspend = new(true)
		must(t, s.Create(ctx, wf), "Create "+n)
	}
	at := func(sec float64) metav1.Time {
		return metav1.NewTime(time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC).Add(time.Duration(sec * float64(time.Second))))
	}
	for _, f := range []struct {
		name string
		at   metav1.Time
	}{{"b", at(30)}, {"d", at(50)}, {"e", at(30.7)}, {"f", at(40.5)}, {"f", metav1.Time{}}} {
		o, err := s.Get(ctx, store.KindWorkflow, "argo", f.name)
		must(t, err, "Get "+f.name)
		wf := o.(*v1alpha1.Workflow)
		wf.Status.FinishedAt, wf.Status.Phase = f.at, v1alpha1.WorkflowSucceeded
		must(t, s.Update(ctx, wf), "Update "+f.name)
	}
	return []string{"f", "c", "a", "d", "e", "b"}
}

func TestListArgoOrder(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	want := seedOrder(t, s)
	for _, limit := range []int64{0, 1, 2, 4, 100} {
		var got []string
		token := ""
		for pages := 0; ; pages++ {
			objs, next, err := s.List(ctx, store.KindWorkflow, "argo", store.ListOptions{Order: store.OrderArgo, Limit: limit, Continue: token})
			must(t, err, "List")
			got = append(got, names(objs)...)
			if next == "" || pages > 10 {
				break
			}
			token = next
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: got %v, want %v", limit, got, want)
		}
	}
	// Every namespace, with a filter: the same order.
	objs, _, err := s.List(ctx, store.KindWorkflow, "", store.ListOptions{Order: store.OrderArgo, LabelSelector: "app in (a,b,d,f)"})
	must(t, err, "List all namespaces")
	if got := names(objs); !slices.Equal(got, []string{"f", "a", "d", "b"}) {
		t.Errorf("all namespaces, filtered: got %v", got)
	}
	// A token is good for the order that issued it only.
	_, newest, err := s.List(ctx, store.KindWorkflow, "argo", store.ListOptions{Limit: 1})
	must(t, err, "List newest")
	_, argo, err := s.List(ctx, store.KindWorkflow, "argo", store.ListOptions{Order: store.OrderArgo, Limit: 1})
	must(t, err, "List argo")
	for _, c := range []struct {
		token string
		order store.ListOrder
	}{{newest, store.OrderArgo}, {argo, store.OrderNewest}} {
		_, _, err := s.List(ctx, store.KindWorkflow, "argo", store.ListOptions{Order: c.order, Continue: c.token})
		isErr(t, err, ErrInvalid, "a token of the other order")
	}
	_, _, err = s.List(ctx, store.KindWorkflow, "argo", store.ListOptions{Order: "Oldest"})
	isErr(t, err, ErrInvalid, "an unknown order")
}

// The list of every order is answered from an index, without sorting rows.
func TestListOrderUsesIndex(t *testing.T) {
	s := testStore(t)
	for _, ns := range []string{"argo", ""} {
		for _, o := range []store.ListOrder{store.OrderNewest, store.OrderArgo} {
			ord, err := orderOf(o)
			must(t, err, "orderOf")
			where, args := "o.kind = ?", []any{"Workflow"}
			if ns != "" {
				where, args = where+" AND o.namespace = ?", append(args, ns)
			}
			rows, err := s.r.Query("EXPLAIN QUERY PLAN SELECT o.id FROM objects o WHERE "+where+" AND "+ord.after+" ORDER BY "+ord.by,
				append(args, 1, 1, 1, 1)[:len(args)+strings.Count(ord.after, "?")]...)
			must(t, err, "explain")
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				must(t, rows.Scan(&id, &parent, &unused, &detail), "scan")
				plan = append(plan, detail)
			}
			must(t, rows.Close(), "close")
			if p := strings.Join(plan, "; "); strings.Contains(p, "TEMP B-TREE") || !strings.Contains(p, "INDEX") {
				t.Errorf("namespace %q, order %q: plan %q sorts or scans", ns, o, p)
			}
		}
	}
}

// With Fields, a list decodes only those paths: the rest of each object
// is empty, the spec table is read only for paths under spec.
func TestListFields(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	seedOrder(t, s)
	get := func(fields ...string) *v1alpha1.Workflow {
		t.Helper()
		objs, _, err := s.List(ctx, store.KindWorkflow, "argo", store.ListOptions{Fields: fields, FieldSelector: "metadata.name=d"})
		must(t, err, "List with fields")
		if len(objs) != 1 {
			t.Fatalf("%d objects", len(objs))
		}
		return objs[0].(*v1alpha1.Workflow)
	}
	wf := get("metadata.name", "status.finishedAt", "spec.suspend", "metadata.labels.app")
	if wf.Name != "d" || wf.Status.FinishedAt.IsZero() || wf.Spec.Suspend == nil || !*wf.Spec.Suspend || wf.Labels["app"] != "d" {
		t.Errorf("projected fields missing: %+v", wf)
	}
	if wf.Namespace != "" || wf.UID != "" || wf.Status.Phase != "" || wf.Spec.Entrypoint != "" {
		t.Errorf("fields that were not asked for are set: namespace %q uid %q phase %q entrypoint %q", wf.Namespace, wf.UID, wf.Status.Phase, wf.Spec.Entrypoint)
	}
	if wf.ResourceVersion == "" || wf.Kind != "Workflow" {
		t.Errorf("resourceVersion %q and kind %q come from the row", wf.ResourceVersion, wf.Kind)
	}
	whole := get("metadata", "spec", "status")
	o, err := s.Get(ctx, store.KindWorkflow, "argo", "d")
	must(t, err, "Get")
	full := o.(*v1alpha1.Workflow)
	full.Status.Nodes = nil
	if whole.Name != "d" || whole.UID != full.UID || whole.Spec.Entrypoint != "main" || whole.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Errorf("whole parts: %+v", whole)
	}
	// A path SQLite cannot name reads whole rows.
	if wf := get(`metadata.labels.a"b`); wf.Spec.Entrypoint != "main" {
		t.Errorf("a path with a quote: want the whole row, got %+v", wf)
	}
}

// A database of schema 3 gets the order columns filled in from its rows.
func TestOrderMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "braid.db")
	s, err := Open(ctx, path, Options{Clock: newFakeClock().Now})
	must(t, err, "Open")
	want := seedOrder(t, s)
	must(t, s.Close(), "Close")

	// Back to schema 3: no order columns, no order indexes (and none of
	// the later tables).
	db, err := sql.Open("sqlite", path)
	must(t, err, "sql.Open")
	for _, q := range []string{
		"DROP TABLE sync_limits", "DROP TABLE object_labels",
		"DROP INDEX objects_by_order", "DROP INDEX objects_by_ns_order",
		"ALTER TABLE objects DROP COLUMN unfinished", "ALTER TABLE objects DROP COLUMN order_at",
		"PRAGMA user_version = 3",
	} {
		_, err := db.Exec(q)
		must(t, err, q)
	}
	must(t, db.Close(), "close")

	s2 := openStore(t, path)
	objs, _, err := s2.List(ctx, store.KindWorkflow, "argo", store.ListOptions{Order: store.OrderArgo})
	must(t, err, "List after migration")
	if got := names(objs); !slices.Equal(got, want) {
		t.Errorf("after migration: got %v, want %v", got, want)
	}
}
