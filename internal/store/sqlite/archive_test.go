package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// archived builds a finished workflow to archive; started is minutes after
// a fixed time, and finishes a minute later.
func archived(ns, name string, started int, lbl map[string]string) *v1alpha1.Workflow {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(started) * time.Minute)
	return &v1alpha1.Workflow{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: "Workflow"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name),
			Labels: lbl, CreationTimestamp: metav1.NewTime(t0),
		},
		Spec: v1alpha1.WorkflowSpec{Entrypoint: "main"},
		Status: v1alpha1.WorkflowStatus{
			Phase:      v1alpha1.WorkflowSucceeded,
			StartedAt:  metav1.NewTime(t0),
			FinishedAt: metav1.NewTime(t0.Add(time.Minute)),
			Nodes: v1alpha1.Nodes{name: {
				ID: name, Name: name, Type: v1alpha1.NodeTypePod, Phase: v1alpha1.NodeSucceeded,
			}},
		},
	}
}

func archivedNames(wfs []v1alpha1.Workflow) []string {
	var out []string
	for _, wf := range wfs {
		out = append(out, wf.Name)
	}
	return out
}

func TestArchiveGetDelete(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)

	// A large workflow: its nodes are stored compressed and come back whole.
	big := bigWorkflow("big", 500)
	big.Namespace, big.UID = "argo", "uid-big"
	big.Labels = map[string]string{"app": "x"}
	big.APIVersion, big.Kind = v1alpha1.APIVersion, "Workflow"
	must(t, s.Archive(ctx, big), "archive big")
	var raw []byte
	must(t, s.r.QueryRowContext(ctx, `SELECT nodes FROM archived WHERE uid = 'uid-big'`).Scan(&raw), "read nodes column")
	if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Errorf("nodes of a large workflow are not gzip-compressed")
	}
	got, err := s.GetArchived(ctx, "uid-big")
	must(t, err, "get big")
	if d := diffJSON(t, big, got); d != "" {
		t.Errorf("archived workflow differs (-want +got):\n%s", d)
	}

	// Archiving again (same uid) replaces the copy, labels included.
	small := archived("argo", "small", 1, map[string]string{"app": "a", "tier": "1"})
	must(t, s.Archive(ctx, small), "archive small")
	small.Labels = map[string]string{"app": "b"}
	small.Status.Phase = v1alpha1.WorkflowFailed
	must(t, s.Archive(ctx, small), "archive small again")
	got, err = s.GetArchived(ctx, string(small.UID))
	must(t, err, "get small")
	if d := diffJSON(t, small, got); d != "" {
		t.Errorf("re-archived workflow differs (-want +got):\n%s", d)
	}
	keys, err := s.ArchivedLabelKeys(ctx, "argo")
	must(t, err, "label keys")
	if !slices.Equal(keys, []string{"app"}) {
		t.Errorf("label keys after re-archive = %v, want [app]", keys)
	}
	var n int
	must(t, s.r.QueryRowContext(ctx, `SELECT count(*) FROM archived`).Scan(&n), "count")
	if n != 2 {
		t.Errorf("%d archived rows, want 2", n)
	}

	must(t, s.DeleteArchived(ctx, "uid-big"), "delete")
	_, err = s.GetArchived(ctx, "uid-big")
	isErr(t, err, store.ErrNotFound, "get deleted")
	isErr(t, s.DeleteArchived(ctx, "uid-big"), store.ErrNotFound, "delete again")
	must(t, s.r.QueryRowContext(ctx, `SELECT count(*) FROM archived_labels WHERE archive_id NOT IN (SELECT id FROM archived)`).Scan(&n), "orphans")
	if n != 0 {
		t.Errorf("%d label rows outlive their workflow", n)
	}

	for _, bad := range []*v1alpha1.Workflow{nil, {ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "argo"}}} {
		isErr(t, s.Archive(ctx, bad), ErrInvalid, "archive without uid")
	}
}

func TestArchiveList(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	fixtures := []*v1alpha1.Workflow{
		archived("argo", "build-1", 1, map[string]string{"app": "build", "n": "1"}),
		archived("argo", "build-2", 2, map[string]string{"app": "build", "n": "20"}),
		archived("argo", "test-1", 3, map[string]string{"app": "test", "n": "3", "ci": "true"}),
		archived("argo", "deploy-1", 4, nil),
		archived("other", "build-1", 5, map[string]string{"app": "build", "n": "x"}),
	}
	// Archived in one transaction, as the controller may batch them.
	must(t, s.Tx(ctx, func(tx *Tx) error {
		for _, wf := range fixtures {
			if err := tx.Archive(wf); err != nil {
				return err
			}
		}
		return nil
	}), "archive")
	at := func(min int) time.Time { return time.Date(2026, 5, 1, 0, min, 0, 0, time.UTC) }

	tests := []struct {
		name string
		opts ArchiveListOptions
		want []string // newest first
		more bool
	}{
		{"all", ArchiveListOptions{}, []string{"build-1", "deploy-1", "test-1", "build-2", "build-1"}, false},
		{"namespace", ArchiveListOptions{Namespace: "argo"}, []string{"deploy-1", "test-1", "build-2", "build-1"}, false},
		{"equals", ArchiveListOptions{LabelSelector: "app=build"}, []string{"build-1", "build-2", "build-1"}, false},
		{"equals in ns", ArchiveListOptions{Namespace: "argo", LabelSelector: "app==build"}, []string{"build-2", "build-1"}, false},
		{"not equals keeps unlabelled", ArchiveListOptions{Namespace: "argo", LabelSelector: "app!=build"}, []string{"deploy-1", "test-1"}, false},
		{"in", ArchiveListOptions{LabelSelector: "app in (test,nothing)"}, []string{"test-1"}, false},
		{"notin", ArchiveListOptions{Namespace: "argo", LabelSelector: "app notin (build,test)"}, []string{"deploy-1"}, false},
		{"exists", ArchiveListOptions{LabelSelector: "ci"}, []string{"test-1"}, false},
		{"does not exist", ArchiveListOptions{Namespace: "argo", LabelSelector: "!app"}, []string{"deploy-1"}, false},
		{"and", ArchiveListOptions{LabelSelector: "app=build,n=20"}, []string{"build-2"}, false},
		{"gt skips non-integers", ArchiveListOptions{LabelSelector: "n>2"}, []string{"test-1", "build-2"}, false},
		{"lt", ArchiveListOptions{LabelSelector: "n<3"}, []string{"build-1"}, false},
		{"exact name", ArchiveListOptions{Name: "build-1"}, []string{"build-1", "build-1"}, false},
		{"prefix filter", ArchiveListOptions{Namespace: "argo", Name: "build", NameFilter: NamePrefix}, []string{"build-2", "build-1"}, false},
		{"name prefix", ArchiveListOptions{NamePrefix: "de"}, []string{"deploy-1"}, false},
		{"contains", ArchiveListOptions{Name: "-1", NameFilter: NameContains, Namespace: "argo"}, []string{"deploy-1", "test-1", "build-1"}, false},
		{"not equals name", ArchiveListOptions{Name: "build-1", NameFilter: NameNotEquals}, []string{"deploy-1", "test-1", "build-2"}, false},
		{"created after", ArchiveListOptions{CreatedAfter: at(3)}, []string{"build-1", "deploy-1"}, false},
		{"created before", ArchiveListOptions{CreatedBefore: at(3)}, []string{"build-2", "build-1"}, false},
		{"finished before", ArchiveListOptions{FinishedBefore: at(4)}, []string{"build-2", "build-1"}, false},
		{"first page", ArchiveListOptions{Limit: 2}, []string{"build-1", "deploy-1"}, true},
		{"second page", ArchiveListOptions{Limit: 2, Offset: 2}, []string{"test-1", "build-2"}, true},
		{"last page", ArchiveListOptions{Limit: 2, Offset: 4}, []string{"build-1"}, false},
		{"exact page", ArchiveListOptions{Limit: 5}, []string{"build-1", "deploy-1", "test-1", "build-2", "build-1"}, false},
		{"offset only", ArchiveListOptions{Offset: 3}, []string{"build-2", "build-1"}, false},
		{"labelled page", ArchiveListOptions{LabelSelector: "app=build", Limit: 1, Offset: 1}, []string{"build-2"}, true},
		{"nothing", ArchiveListOptions{LabelSelector: "app=none"}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, more, err := s.ListArchived(ctx, tc.opts)
			must(t, err, "list")
			if !slices.Equal(archivedNames(got), tc.want) || more != tc.more {
				t.Errorf("got %v more=%v, want %v more=%v", archivedNames(got), more, tc.want, tc.more)
			}
			for _, wf := range got {
				if wf.Status.Nodes != nil {
					t.Errorf("%s listed with nodes", wf.Name)
				}
				if wf.Kind != "Workflow" || wf.UID == "" || wf.Status.Phase != v1alpha1.WorkflowSucceeded {
					t.Errorf("%s listed as %s uid %q phase %q", wf.Name, wf.Kind, wf.UID, wf.Status.Phase)
				}
			}
			count := tc.opts
			count.Limit, count.Offset = 0, 0
			n, err := s.CountArchived(ctx, count)
			must(t, err, "count")
			all, _, err := s.ListArchived(ctx, count)
			must(t, err, "list all")
			if int(n) != len(all) {
				t.Errorf("count = %d, list without limit = %d", n, len(all))
			}
		})
	}

	for _, bad := range []ArchiveListOptions{
		{LabelSelector: "a in in"}, {Name: "x", NameFilter: "Regex"}, {Limit: -1}, {LabelSelector: "n>x"},
	} {
		_, _, err := s.ListArchived(ctx, bad)
		isErr(t, err, ErrInvalid, fmt.Sprintf("list %+v", bad))
	}

	keys, err := s.ArchivedLabelKeys(ctx, "")
	must(t, err, "keys")
	if !slices.Equal(keys, []string{"app", "ci", "n"}) {
		t.Errorf("keys = %v", keys)
	}
	keys, err = s.ArchivedLabelKeys(ctx, "other")
	must(t, err, "keys of other")
	if !slices.Equal(keys, []string{"app", "n"}) {
		t.Errorf("keys of other = %v", keys)
	}
	vals, err := s.ArchivedLabelValues(ctx, "argo", "n")
	must(t, err, "values")
	if !slices.Equal(vals, []string{"1", "20", "3"}) {
		t.Errorf("values of n in argo = %v", vals)
	}
	vals, err = s.ArchivedLabelValues(ctx, "", "app")
	must(t, err, "values")
	if !slices.Equal(vals, []string{"build", "test"}) {
		t.Errorf("values of app = %v", vals)
	}
}

// The archive survives reopening the file (it is in the schema, migrated).
func TestArchiveReopen(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/braid.db"
	s, err := Open(ctx, path, Options{})
	must(t, err, "open")
	must(t, s.Archive(ctx, archived("argo", "a", 1, map[string]string{"k": "v"})), "archive")
	must(t, s.Close(), "close")
	s = openStore(t, path)
	got, _, err := s.ListArchived(ctx, ArchiveListOptions{LabelSelector: "k=v"})
	must(t, err, "list")
	if !slices.Equal(archivedNames(got), []string{"a"}) {
		t.Errorf("after reopen: %v", archivedNames(got))
	}
}

// Both plans of ListArchived give the same pages; so does the automatic
// choice.
func TestArchiveListPlans(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	must(t, s.Tx(ctx, func(tx *Tx) error {
		for j := range 3000 {
			lbl := map[string]string{"app": fmt.Sprintf("app-%d", j%10), "shard": fmt.Sprintf("s-%d", j%300)}
			if j%7 == 0 {
				lbl["odd"] = "yes"
			}
			// Equal start times in pairs: the id breaks the tie.
			if err := tx.Archive(archived(fmt.Sprintf("ns-%d", j%3), fmt.Sprintf("wf-%04d", j), j/2, lbl)); err != nil {
				return err
			}
		}
		return nil
	}), "archive")
	nonEmpty := 0
	for _, sel := range []string{"app=app-3", "shard=s-7", "app=app-7,shard=s-7", "app in (app-1,app-2),odd", "odd,app!=app-1", "!odd,shard in (s-1,s-2)"} {
		for _, o := range []ArchiveListOptions{
			{LabelSelector: sel, Limit: 20}, {LabelSelector: sel, Limit: 7, Offset: 5}, {LabelSelector: sel},
			{LabelSelector: sel, Namespace: "ns-1", Limit: 5, Offset: 10}, {LabelSelector: sel, NamePrefix: "wf-1", Limit: 3},
		} {
			walk, wmore, err := s.listArchived(ctx, o, planWalk)
			must(t, err, "walk")
			label, lmore, err := s.listArchived(ctx, o, planLabel)
			must(t, err, "label")
			auto, amore, err := s.ListArchived(ctx, o)
			must(t, err, "auto")
			w, l, a := archivedNames(walk), archivedNames(label), archivedNames(auto)
			if len(w) > 0 {
				nonEmpty++
			}
			if !slices.Equal(w, l) || !slices.Equal(w, a) || wmore != lmore || wmore != amore {
				t.Errorf("%+v:\nwalk  %v %v\nlabel %v %v\nauto  %v %v", o, w, wmore, l, lmore, a, amore)
			}
		}
	}
	if nonEmpty < 25 {
		t.Errorf("only %d of 30 lists found anything: the fixtures test little", nonEmpty)
	}
}

const benchArchived = 100_000

// BenchmarkArchiveList archives 100,000 small workflows, then measures the
// first page (20) of a list with a label filter: a common label (app, one
// workflow in 10), a rare one (shard, one in 1,000), the two together, and a
// namespace with a common label. Each sub-benchmark reports the median and
// the 99th percentile of its iterations (run with -benchtime=200x).
func BenchmarkArchiveList(b *testing.B) {
	ctx := context.Background()
	s := testStore(b, noMonitor)
	start := time.Now()
	const batch = 2000
	for i := 0; i < benchArchived; i += batch {
		must(b, s.Tx(ctx, func(tx *Tx) error {
			for j := i; j < i+batch; j++ {
				wf := archived(fmt.Sprintf("ns-%d", j%4), fmt.Sprintf("wf-%06d", j), j, map[string]string{
					"app":                         fmt.Sprintf("app-%d", j%10),
					"shard":                       fmt.Sprintf("s-%d", j%1000),
					"workflows.argoproj.io/phase": "Succeeded",
				})
				if err := tx.Archive(wf); err != nil {
					return err
				}
			}
			return nil
		}), "archive batch")
	}
	b.Logf("archived %d workflows in %v", benchArchived, time.Since(start).Round(time.Millisecond))

	for _, bc := range []struct {
		name string
		opts ArchiveListOptions
	}{
		{"common-label", ArchiveListOptions{LabelSelector: "app=app-3"}},
		{"rare-label", ArchiveListOptions{LabelSelector: "shard=s-7"}},
		{"common+rare", ArchiveListOptions{LabelSelector: "app=app-7,shard=s-7"}},
		{"ns+common-label", ArchiveListOptions{Namespace: "ns-1", LabelSelector: "app=app-1"}},
		{"no-match", ArchiveListOptions{LabelSelector: "app=none"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bc.opts.Limit = 20
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				got, _, err := s.ListArchived(ctx, bc.opts)
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if len(got) == 0 && !strings.Contains(bc.name, "no-match") {
					b.Fatal("empty page")
				}
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "median-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
