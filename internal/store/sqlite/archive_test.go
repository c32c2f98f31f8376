package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store/storetest"
)

// The archive's contract (get, list, labels, batches, reopen) is in
// internal/store/storetest; these are SQLite's own: how it lays the
// archive out, and its two list plans.

// A large workflow's nodes are stored compressed, and a deleted
// workflow's label rows go with it.
func TestArchiveStorage(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	big := storetest.BigWorkflow("argo", "big", 500)
	must(t, s.Archive(ctx, big), "archive big")
	var raw []byte
	must(t, s.r.QueryRowContext(ctx, `SELECT nodes FROM archived WHERE uid = ?`, string(big.UID)).Scan(&raw), "read nodes column")
	if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Errorf("nodes of a large workflow are not gzip-compressed")
	}
	must(t, s.Archive(ctx, storetest.Archived("argo", "small", 1, map[string]string{"app": "a"})), "archive small")
	must(t, s.DeleteArchived(ctx, string(big.UID)), "delete")
	var n int
	must(t, s.r.QueryRowContext(ctx, `SELECT count(*) FROM archived_labels WHERE archive_id NOT IN (SELECT id FROM archived)`).Scan(&n), "orphans")
	if n != 0 {
		t.Errorf("%d label rows outlive their workflow", n)
	}
	must(t, s.r.QueryRowContext(ctx, `SELECT count(*) FROM archived_labels`).Scan(&n), "label rows")
	if n != 1 {
		t.Errorf("%d label rows after deleting big, want 1 (small's app)", n)
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
			if err := tx.Archive(storetest.Archived(fmt.Sprintf("ns-%d", j%3), fmt.Sprintf("wf-%04d", j), j/2, lbl)); err != nil {
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
			w, l, a := storetest.Names(walk), storetest.Names(label), storetest.Names(auto)
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
				wf := storetest.Archived(fmt.Sprintf("ns-%d", j%4), fmt.Sprintf("wf-%06d", j), j, map[string]string{
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
