package postgres

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/storetest"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const benchArchived = 100_000

// BenchmarkArchiveList archives 100,000 small workflows (ArchiveBatch, 1,000
// a batch, as the controller batches), then measures the first page (20)
// of a list with a label filter: a common label (app, one workflow in 10),
// a rare one (shard, one in 1,000), the two together, a namespace with a
// common label, a label nothing has; and the label keys and values the UI
// asks for. Each sub-benchmark reports the median and the 99th percentile
// of its iterations. Run with a bounded iteration count, e.g.
//
//	go test -run '^$' -bench ArchiveList -benchtime=200x ./internal/store/postgres/
func BenchmarkArchiveList(b *testing.B) {
	ctx := context.Background()
	s := testStore(b)
	start := time.Now()
	const batch = 1000
	wfs := make([]*v1alpha1.Workflow, batch)
	for i := 0; i < benchArchived; i += batch {
		for j := range batch {
			n := i + j
			wfs[j] = storetest.Archived(fmt.Sprintf("ns-%d", n%4), fmt.Sprintf("wf-%06d", n), n, map[string]string{
				"app":                         fmt.Sprintf("app-%d", n%10),
				"shard":                       fmt.Sprintf("s-%d", n%1000),
				"workflows.argoproj.io/phase": "Succeeded",
			})
		}
		must(b, s.ArchiveBatch(ctx, wfs), "archive batch")
	}
	b.Logf("archived %d workflows in %v", benchArchived, time.Since(start).Round(time.Millisecond))
	// What autovacuum would do after such a load; the planner needs the
	// statistics to tell a common label from a rare one.
	_, err := s.pool.Exec(ctx, `ANALYZE braid_archived_workflows; ANALYZE braid_archived_labels`)
	must(b, err, "analyze")

	lists := []struct {
		name string
		opts store.ArchiveListOptions
	}{
		{"common-label", store.ArchiveListOptions{LabelSelector: "app=app-3"}},
		{"rare-label", store.ArchiveListOptions{LabelSelector: "shard=s-7"}},
		{"common+rare", store.ArchiveListOptions{LabelSelector: "app=app-7,shard=s-7"}},
		{"ns+common-label", store.ArchiveListOptions{Namespace: "ns-1", LabelSelector: "app=app-1"}},
		{"no-match", store.ArchiveListOptions{LabelSelector: "app=none"}},
	}
	for _, bc := range lists {
		bc.opts.Limit = 20
		benchLatency(b, bc.name, func() error {
			got, _, err := s.ListArchived(ctx, bc.opts)
			if err == nil && len(got) == 0 && !strings.Contains(bc.name, "no-match") {
				return fmt.Errorf("empty page")
			}
			return err
		})
	}
	benchLatency(b, "label-keys", func() error {
		keys, err := s.ArchivedLabelKeys(ctx, "ns-2")
		if err == nil && len(keys) != 3 {
			return fmt.Errorf("keys %v", keys)
		}
		return err
	})
	benchLatency(b, "label-values", func() error {
		vals, err := s.ArchivedLabelValues(ctx, "", "app")
		if err == nil && len(vals) != 10 {
			return fmt.Errorf("values %v", vals)
		}
		return err
	})
}

// benchLatency runs f as a sub-benchmark and reports the median and the
// 99th percentile of its calls.
func benchLatency(b *testing.B, name string, f func() error) {
	b.Run(name, func(b *testing.B) {
		var lat []time.Duration
		for b.Loop() {
			t0 := time.Now()
			err := f()
			lat = append(lat, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "median-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	})
}
