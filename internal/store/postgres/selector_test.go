package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// ListArchived agrees with Kubernetes' own selector matching, done in Go,
// over 3,000 workflows with common and rare labels, whatever plan
// PostgreSQL picks for each call (common labels favour walking the
// workflows newest first, rare ones the label index).
func TestArchiveListMatchesSelectors(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	const n = 3000
	wfs := make([]*v1alpha1.Workflow, n)
	for j := range n {
		lbl := map[string]string{"app": fmt.Sprintf("app-%d", j%10), "shard": fmt.Sprintf("s-%d", j%300)}
		if j%7 == 0 {
			lbl["odd"] = "yes"
		}
		// Equal start times in fours: the archive order breaks the tie.
		wfs[j] = archived(fmt.Sprintf("ns-%d", j%3), fmt.Sprintf("wf-%04d", j), j/4, lbl)
	}
	for i := 0; i < n; i += 500 {
		must(t, s.ArchiveBatch(ctx, wfs[i:i+500]), "archive")
	}
	_, err := s.pool.Exec(ctx, `ANALYZE braid_archived_workflows; ANALYZE braid_archived_labels`)
	must(t, err, "analyze")

	// want lists what opts selects, in Go: newest start first, then the
	// later archived first.
	want := func(o store.ArchiveListOptions) ([]string, bool) {
		sel, err := labels.Parse(o.LabelSelector)
		must(t, err, "parse")
		var out []string
		for j := n - 1; j >= 0; j-- { // j/4 descending, ties by j descending
			wf := wfs[j]
			if (o.Namespace == "" || wf.Namespace == o.Namespace) && strings.HasPrefix(wf.Name, o.NamePrefix) &&
				sel.Matches(labels.Set(wf.Labels)) {
				out = append(out, wf.Name)
			}
		}
		out = out[min(o.Offset, len(out)):]
		if o.Limit > 0 && len(out) > o.Limit {
			return out[:o.Limit], true
		}
		return out, false
	}
	nonEmpty := 0
	for _, sel := range []string{"app=app-3", "shard=s-7", "app=app-7,shard=s-7", "app in (app-1,app-2),odd",
		"odd,app!=app-1", "!odd,shard in (s-1,s-2)", "shard notin (s-1),app=app-1", "app in (app-5,app-6,app-7)", "app=none"} {
		for _, o := range []store.ArchiveListOptions{
			{LabelSelector: sel, Limit: 20}, {LabelSelector: sel, Limit: 7, Offset: 5}, {LabelSelector: sel},
			{LabelSelector: sel, Namespace: "ns-1", Limit: 5, Offset: 10}, {LabelSelector: sel, NamePrefix: "wf-1", Limit: 3},
		} {
			got, more, err := s.ListArchived(ctx, o)
			must(t, err, "list")
			w, wmore := want(o)
			if len(w) > 0 {
				nonEmpty++
			}
			if g := archivedNames(got); !slices.Equal(g, w) || more != wmore {
				t.Errorf("%+v:\ngot  %v more=%v\nwant %v more=%v", o, g, more, w, wmore)
			}
			o.Limit, o.Offset = 0, 0
			c, err := s.CountArchived(ctx, o)
			must(t, err, "count")
			if all, _ := want(o); int(c) != len(all) {
				t.Errorf("count %+v = %d, want %d", o, c, len(all))
			}
		}
	}
	if nonEmpty < 35 {
		t.Errorf("only %d of 45 lists found anything: the fixtures test little", nonEmpty)
	}
}
