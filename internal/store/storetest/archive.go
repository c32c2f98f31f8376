package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func runArchive(t *testing.T, b Backend) {
	t.Run("GetDelete", func(t *testing.T) { b.archiveGetDelete(t) })
	t.Run("Batch", func(t *testing.T) { b.archiveBatch(t) })
	t.Run("List", func(t *testing.T) { b.archiveList(t) })
	t.Run("ListInvalid", func(t *testing.T) { b.archiveListInvalid(t) })
	t.Run("LabelKeysValues", func(t *testing.T) { b.archiveLabelKeysValues(t) })
	t.Run("ListMatchesSelectors", func(t *testing.T) { b.archiveListMatchesSelectors(t) })
	t.Run("Reopen", func(t *testing.T) { b.archiveReopen(t) })
}

// openArchive opens the case's store as an Archive.
func (b Backend) openArchive(t *testing.T, name string) (Env, Archive) {
	t.Helper()
	env, s := b.open(t, "Archive/"+name)
	return env, as[Archive](t, s, "archive")
}

// A workflow comes back whole, large or small; archiving the same uid
// again replaces the copy, labels included; a deleted one is gone.
func (b Backend) archiveGetDelete(t *testing.T) {
	ctx := context.Background()
	_, s := b.openArchive(t, "GetDelete")

	big := BigWorkflow("argo", "big", 500)
	big.Labels["app"] = "x"
	must(t, s.Archive(ctx, big), "archive big")
	got, err := s.GetArchived(ctx, string(big.UID))
	must(t, err, "get big")
	if d := diffJSON(t, big, got); d != "" {
		t.Errorf("archived workflow differs (-want +got):\n%s", d)
	}

	small := Archived("argo", "small", 1, map[string]string{"app": "a", "tier": "1"})
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
	if want := []string{"app", "workflows.argoproj.io/phase"}; !slices.Equal(keys, want) {
		t.Errorf("label keys after re-archive = %v, want %v", keys, want)
	}
	vals, err := s.ArchivedLabelValues(ctx, "argo", "app")
	must(t, err, "label values")
	if !slices.Equal(vals, []string{"b", "x"}) {
		t.Errorf("values of app after re-archive = %v, want [b x]", vals)
	}
	if n, err := s.CountArchived(ctx, store.ArchiveListOptions{}); err != nil || n != 2 {
		t.Errorf("%d archived (%v), want 2", n, err)
	}

	must(t, s.DeleteArchived(ctx, string(big.UID)), "delete")
	_, err = s.GetArchived(ctx, string(big.UID))
	isErr(t, err, store.ErrNotFound, "get deleted")
	isErr(t, s.DeleteArchived(ctx, string(big.UID)), store.ErrNotFound, "delete again")
	_, err = s.GetArchived(ctx, "no-such-uid")
	isErr(t, err, store.ErrNotFound, "get unknown uid")
	vals, err = s.ArchivedLabelValues(ctx, "argo", "app")
	must(t, err, "label values after delete")
	if !slices.Equal(vals, []string{"b"}) {
		t.Errorf("values of app after deleting big = %v, want [b]", vals)
	}
}

// A batch is one transaction: an invalid workflow in it writes nothing; a
// uid twice in one batch leaves the later copy.
func (b Backend) archiveBatch(t *testing.T) {
	ctx := context.Background()
	_, s := b.openArchive(t, "Batch")
	tests := []struct {
		name  string
		batch []*v1alpha1.Workflow
	}{
		{"nil", []*v1alpha1.Workflow{Archived("argo", "a", 1, nil), nil}},
		{"no uid", []*v1alpha1.Workflow{Archived("argo", "a", 1, nil), {ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "argo"}}}},
		{"no namespace", []*v1alpha1.Workflow{{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "u"}}}},
		{"no name", []*v1alpha1.Workflow{{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", UID: "u"}}}},
	}
	for _, tc := range tests {
		isErr(t, s.ArchiveBatch(ctx, tc.batch), store.ErrInvalid, tc.name)
	}
	isErr(t, s.Archive(ctx, nil), store.ErrInvalid, "archive nil")
	isErr(t, s.Archive(ctx, &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "argo"}}), store.ErrInvalid, "archive without uid")
	if n, err := s.CountArchived(ctx, store.ArchiveListOptions{}); err != nil || n != 0 {
		t.Fatalf("after failed batches: %d archived (%v), want 0", n, err)
	}

	first := Archived("argo", "a", 1, map[string]string{"v": "1"})
	second := Archived("argo", "a", 2, map[string]string{"v": "2", "w": "x"})
	must(t, s.ArchiveBatch(ctx, []*v1alpha1.Workflow{first, Archived("argo", "b", 3, nil), second}), "batch")
	must(t, s.ArchiveBatch(ctx, nil), "empty batch")
	got, _, err := s.ListArchived(ctx, store.ArchiveListOptions{LabelSelector: "v"})
	must(t, err, "list")
	if len(got) != 1 || got[0].Labels["v"] != "2" || !got[0].Status.StartedAt.Equal(&second.Status.StartedAt) {
		t.Errorf("after a batch with uid twice: %+v", got)
	}
	if n, _ := s.CountArchived(ctx, store.ArchiveListOptions{}); n != 2 {
		t.Errorf("%d archived, want 2", n)
	}
}

// archiveFixtures are the workflows the list cases list.
func archiveFixtures() []*v1alpha1.Workflow {
	never := Archived("argo", "queued-1", 0, map[string]string{"app": "build", "n": "007"})
	never.Status.StartedAt, never.Status.FinishedAt = metav1.Time{}, metav1.Time{}
	return []*v1alpha1.Workflow{
		Archived("argo", "build-1", 1, map[string]string{"app": "build", "n": "1"}),
		Archived("argo", "build-2", 2, map[string]string{"app": "build", "n": "20"}),
		Archived("argo", "test-1", 3, map[string]string{"app": "test", "n": "3", "ci": "true"}),
		Archived("argo", "deploy-1", 4, map[string]string{"n": "-5", "big": "99999999999999999999"}),
		Archived("other", "build-1", 5, map[string]string{"app": "build", "n": "x"}),
		never, // never started: listed last
	}
}

// listCase is one list and what it gives, newest first.
type listCase struct {
	name string
	opts store.ArchiveListOptions
	want []string
	more bool
}

func selectorCases() []listCase {
	type o = store.ArchiveListOptions
	return []listCase{
		{"all", o{}, []string{"build-1", "deploy-1", "test-1", "build-2", "build-1", "queued-1"}, false},
		{"namespace", o{Namespace: "argo"}, []string{"deploy-1", "test-1", "build-2", "build-1", "queued-1"}, false},
		{"equals", o{LabelSelector: "app=build"}, []string{"build-1", "build-2", "build-1", "queued-1"}, false},
		{"equals in ns", o{Namespace: "argo", LabelSelector: "app==build"}, []string{"build-2", "build-1", "queued-1"}, false},
		{"not equals keeps unlabelled", o{Namespace: "argo", LabelSelector: "app!=build"}, []string{"deploy-1", "test-1"}, false},
		{"in", o{LabelSelector: "app in (test,nothing)"}, []string{"test-1"}, false},
		{"notin", o{Namespace: "argo", LabelSelector: "app notin (build,test)"}, []string{"deploy-1"}, false},
		{"exists", o{LabelSelector: "ci"}, []string{"test-1"}, false},
		{"does not exist", o{Namespace: "argo", LabelSelector: "!app"}, []string{"deploy-1"}, false},
		{"and", o{LabelSelector: "app=build,n=20"}, []string{"build-2"}, false},
		{"gt skips non-integers", o{LabelSelector: "n>2"}, []string{"test-1", "build-2"}, false},
		{"lt takes negatives, not 007", o{LabelSelector: "n<3"}, []string{"deploy-1", "build-1"}, false},
		{"gt beyond int64 is no integer", o{LabelSelector: "big>0"}, nil, false},
		{"nothing", o{LabelSelector: "app=none"}, nil, false},
	}
}

func filterCases() []listCase {
	type o = store.ArchiveListOptions
	at := func(min int) time.Time { return time.Date(2026, 5, 1, 0, min, 0, 0, time.UTC) }
	return []listCase{
		{"exact name", o{Name: "build-1"}, []string{"build-1", "build-1"}, false},
		{"prefix filter", o{Namespace: "argo", Name: "build", NameFilter: store.NamePrefix}, []string{"build-2", "build-1"}, false},
		{"name prefix", o{NamePrefix: "de"}, []string{"deploy-1"}, false},
		{"prefix is not a pattern", o{NamePrefix: "b%"}, nil, false},
		{"contains", o{Name: "-1", NameFilter: store.NameContains, Namespace: "argo"}, []string{"deploy-1", "test-1", "build-1", "queued-1"}, false},
		{"contains is not a pattern", o{Name: "_", NameFilter: store.NameContains}, nil, false},
		{"not equals name", o{Name: "build-1", NameFilter: store.NameNotEquals}, []string{"deploy-1", "test-1", "build-2", "queued-1"}, false},
		{"created after", o{CreatedAfter: at(3)}, []string{"build-1", "deploy-1"}, false},
		{"created before", o{CreatedBefore: at(3)}, []string{"build-2", "build-1", "queued-1"}, false},
		{"created after, to the second", o{CreatedAfter: at(3).Add(500 * time.Millisecond)}, []string{"build-1", "deploy-1"}, false},
		{"finished before", o{FinishedBefore: at(4)}, []string{"build-2", "build-1"}, false},
		{"first page", o{Limit: 2}, []string{"build-1", "deploy-1"}, true},
		{"second page", o{Limit: 2, Offset: 2}, []string{"test-1", "build-2"}, true},
		{"last page", o{Limit: 2, Offset: 4}, []string{"build-1", "queued-1"}, false},
		{"exact page", o{Limit: 6}, []string{"build-1", "deploy-1", "test-1", "build-2", "build-1", "queued-1"}, false},
		{"offset only", o{Offset: 3}, []string{"build-2", "build-1", "queued-1"}, false},
		{"offset past the end", o{Offset: 10, Limit: 2}, nil, false},
		{"labelled page", o{LabelSelector: "app=build", Limit: 1, Offset: 1}, []string{"build-2"}, true},
	}
}

// A list selects by label, name, namespace and time, newest started
// first, pages with limit and offset, leaves the nodes out, and agrees
// with its count.
func (b Backend) archiveList(t *testing.T) {
	ctx := context.Background()
	_, s := b.openArchive(t, "List")
	must(t, s.ArchiveBatch(ctx, archiveFixtures()), "archive")
	for _, tc := range append(selectorCases(), filterCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			if why, ok := b.Skip["Archive/List/"+tc.name]; ok {
				t.Skip(why)
			}
			got, more, err := s.ListArchived(ctx, tc.opts)
			must(t, err, "list")
			if !slices.Equal(Names(got), tc.want) || more != tc.more {
				t.Errorf("got %v more=%v, want %v more=%v", Names(got), more, tc.want, tc.more)
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
			every, _, err := s.ListArchived(ctx, count)
			must(t, err, "list all")
			if int(n) != len(every) {
				t.Errorf("count = %d, list without limit = %d", n, len(every))
			}
		})
	}
}

// Options that cannot be answered are ErrInvalid, for a list and a count.
func (b Backend) archiveListInvalid(t *testing.T) {
	ctx := context.Background()
	_, s := b.openArchive(t, "ListInvalid")
	for _, bad := range []store.ArchiveListOptions{
		{LabelSelector: "a in in"}, {Name: "x", NameFilter: "Regex"}, {Limit: -1}, {Offset: -1}, {LabelSelector: "n>x"},
	} {
		_, _, err := s.ListArchived(ctx, bad)
		isErr(t, err, store.ErrInvalid, fmt.Sprintf("list %+v", bad))
		if bad.Limit >= 0 && bad.Offset >= 0 {
			_, err = s.CountArchived(ctx, bad)
			isErr(t, err, store.ErrInvalid, fmt.Sprintf("count %+v", bad))
		}
	}
}

// Label keys and values, of a namespace or of all, sorted in byte order
// (upper case before lower case), not a locale's.
func (b Backend) archiveLabelKeysValues(t *testing.T) {
	ctx := context.Background()
	_, s := b.openArchive(t, "LabelKeysValues")
	must(t, s.ArchiveBatch(ctx, archiveFixtures()), "archive")
	must(t, s.Archive(ctx, Archived("third", "w", 9, map[string]string{"Zed": "B", "zed": "a", "app": "Build"})), "archive third")
	tests := []struct {
		namespace, key string // key "" asks for the keys
		want           []string
	}{
		{"", "", []string{"Zed", "app", "big", "ci", "n", "zed"}},
		{"argo", "", []string{"app", "big", "ci", "n"}},
		{"other", "", []string{"app", "n"}},
		{"none", "", nil},
		{"argo", "n", []string{"-5", "007", "1", "20", "3"}},
		{"", "app", []string{"Build", "build", "test"}},
		{"third", "app", []string{"Build"}},
		{"", "missing", nil},
		{"other", "ci", nil},
	}
	for _, tc := range tests {
		var got []string
		var err error
		if tc.key == "" {
			got, err = s.ArchivedLabelKeys(ctx, tc.namespace)
		} else {
			got, err = s.ArchivedLabelValues(ctx, tc.namespace, tc.key)
		}
		must(t, err, "keys/values")
		if !slices.Equal(got, tc.want) {
			t.Errorf("namespace %q key %q: %v, want %v", tc.namespace, tc.key, got, tc.want)
		}
	}
}

// The archive is in the storage: a store opened again on it sees it.
func (b Backend) archiveReopen(t *testing.T) {
	ctx := context.Background()
	env, s := b.openArchive(t, "Reopen")
	must(t, s.Archive(ctx, Archived("argo", "a", 1, map[string]string{"k": "v"})), "archive")
	if c, ok := s.(Closer); ok {
		must(t, c.Close(), "close")
	}
	again := as[Archive](t, env.Open(), "archive")
	got, _, err := again.ListArchived(ctx, store.ArchiveListOptions{LabelSelector: "k=v"})
	must(t, err, "list")
	if !slices.Equal(Names(got), []string{"a"}) {
		t.Errorf("after reopen: %v", Names(got))
	}
}

// A list agrees with Kubernetes' own selector matching, done in Go, over
// 3,000 workflows with common and rare labels, whatever plan the store
// picks for each call (common labels favour walking the workflows newest
// first, rare ones a label index).
func (b Backend) archiveListMatchesSelectors(t *testing.T) {
	ctx := context.Background()
	_, s := b.openArchive(t, "ListMatchesSelectors")
	const n = 3000
	wfs := make([]*v1alpha1.Workflow, n)
	for j := range n {
		lbl := map[string]string{"app": fmt.Sprintf("app-%d", j%10), "shard": fmt.Sprintf("s-%d", j%300)}
		if j%7 == 0 {
			lbl["odd"] = "yes"
		}
		// Equal start times in fours: the archive order breaks the tie.
		wfs[j] = Archived(fmt.Sprintf("ns-%d", j%3), fmt.Sprintf("wf-%04d", j), j/4, lbl)
	}
	for i := 0; i < n; i += 500 {
		must(t, s.ArchiveBatch(ctx, wfs[i:i+500]), "archive")
	}
	if b.AfterLoad != nil {
		b.AfterLoad(t, s)
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
			w, wmore := selectInGo(t, wfs, o)
			if len(w) > 0 {
				nonEmpty++
			}
			if g := Names(got); !slices.Equal(g, w) || more != wmore {
				t.Errorf("%+v:\ngot  %v more=%v\nwant %v more=%v", o, g, more, w, wmore)
			}
			o.Limit, o.Offset = 0, 0
			c, err := s.CountArchived(ctx, o)
			must(t, err, "count")
			if all, _ := selectInGo(t, wfs, o); int(c) != len(all) {
				t.Errorf("count %+v = %d, want %d", o, c, len(all))
			}
		}
	}
	if nonEmpty < 35 {
		t.Errorf("only %d of 45 lists found anything: the fixtures test little", nonEmpty)
	}
}

// selectInGo lists what o selects of wfs, archived in order: newest start
// first, then the later archived first.
func selectInGo(t *testing.T, wfs []*v1alpha1.Workflow, o store.ArchiveListOptions) ([]string, bool) {
	t.Helper()
	sel, err := labels.Parse(o.LabelSelector)
	must(t, err, "parse")
	var out []string
	for j := len(wfs) - 1; j >= 0; j-- { // start times ascend with j
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
