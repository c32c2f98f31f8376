package postgres

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestArchiveGetDelete(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)

	// A large workflow: its nodes are stored compressed and come back whole.
	big := bigWorkflow("argo", "big", 500)
	big.Labels["app"] = "x"
	must(t, s.Archive(ctx, big), "archive big")
	var raw []byte
	must(t, s.pool.QueryRow(ctx, `SELECT nodes FROM braid_archived_workflows WHERE uid = $1`, big.UID).Scan(&raw), "read nodes column")
	if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Errorf("nodes of a large workflow are not gzip-compressed")
	}
	got, err := s.GetArchived(ctx, string(big.UID))
	must(t, err, "get big")
	if d := diffJSON(t, big, got); d != "" {
		t.Errorf("archived workflow differs (-want +got):\n%s", d)
	}

	// A small one keeps plain JSON; archiving it again (same uid) replaces
	// the copy, labels included, and keeps one row.
	small := archived("argo", "small", 1, map[string]string{"app": "a", "tier": "1"})
	must(t, s.Archive(ctx, small), "archive small")
	must(t, s.pool.QueryRow(ctx, `SELECT nodes FROM braid_archived_workflows WHERE uid = $1`, small.UID).Scan(&raw), "read nodes column")
	if len(raw) == 0 || raw[0] != '{' {
		t.Errorf("nodes of a small workflow stored as %q, want plain JSON", raw)
	}
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
	var n int
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM braid_archived_workflows`).Scan(&n), "count")
	if n != 2 {
		t.Errorf("%d archived rows, want 2", n)
	}

	must(t, s.DeleteArchived(ctx, string(big.UID)), "delete")
	_, err = s.GetArchived(ctx, string(big.UID))
	isErr(t, err, store.ErrNotFound, "get deleted")
	isErr(t, s.DeleteArchived(ctx, string(big.UID)), store.ErrNotFound, "delete again")
	must(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM braid_archived_labels`).Scan(&n), "count labels")
	if n != 1 {
		t.Errorf("%d label rows after deleting big, want 1 (small's app)", n)
	}
	_, err = s.GetArchived(ctx, "no-such-uid")
	isErr(t, err, store.ErrNotFound, "get unknown uid")
}

// A batch is one transaction: an invalid workflow in it writes nothing; a
// uid twice in one batch leaves the later copy.
func TestArchiveBatch(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	tests := []struct {
		name  string
		batch []*v1alpha1.Workflow
		err   error
	}{
		{"nil", []*v1alpha1.Workflow{archived("argo", "a", 1, nil), nil}, ErrInvalid},
		{"no uid", []*v1alpha1.Workflow{archived("argo", "a", 1, nil), {ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "argo"}}}, ErrInvalid},
		{"no namespace", []*v1alpha1.Workflow{{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "u"}}}, ErrInvalid},
		{"no name", []*v1alpha1.Workflow{{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", UID: "u"}}}, ErrInvalid},
	}
	for _, tc := range tests {
		isErr(t, s.ArchiveBatch(ctx, tc.batch), tc.err, tc.name)
	}
	if n, err := s.CountArchived(ctx, store.ArchiveListOptions{}); err != nil || n != 0 {
		t.Fatalf("after failed batches: %d archived (%v), want 0", n, err)
	}

	first := archived("argo", "a", 1, map[string]string{"v": "1"})
	second := archived("argo", "a", 2, map[string]string{"v": "2", "w": "x"})
	must(t, s.ArchiveBatch(ctx, []*v1alpha1.Workflow{first, archived("argo", "b", 3, nil), second}), "batch")
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

// archiveFixtures are the workflows TestArchiveList lists.
func archiveFixtures() []*v1alpha1.Workflow {
	never := archived("argo", "queued-1", 0, map[string]string{"app": "build", "n": "007"})
	never.Status.StartedAt, never.Status.FinishedAt = metav1.Time{}, metav1.Time{}
	return []*v1alpha1.Workflow{
		archived("argo", "build-1", 1, map[string]string{"app": "build", "n": "1"}),
		archived("argo", "build-2", 2, map[string]string{"app": "build", "n": "20"}),
		archived("argo", "test-1", 3, map[string]string{"app": "test", "n": "3", "ci": "true"}),
		archived("argo", "deploy-1", 4, map[string]string{"n": "-5", "big": "99999999999999999999"}),
		archived("other", "build-1", 5, map[string]string{"app": "build", "n": "x"}),
		never, // never started: listed last
	}
}

func TestArchiveList(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	must(t, s.ArchiveBatch(ctx, archiveFixtures()), "archive")
	at := func(min int) time.Time { return time.Date(2026, 5, 1, 0, min, 0, 0, time.UTC) }
	const all = 6
	tests := []struct {
		name string
		opts store.ArchiveListOptions
		want []string // newest first
		more bool
	}{
		{"all", store.ArchiveListOptions{}, []string{"build-1", "deploy-1", "test-1", "build-2", "build-1", "queued-1"}, false},
		{"namespace", store.ArchiveListOptions{Namespace: "argo"}, []string{"deploy-1", "test-1", "build-2", "build-1", "queued-1"}, false},
		{"equals", store.ArchiveListOptions{LabelSelector: "app=build"}, []string{"build-1", "build-2", "build-1", "queued-1"}, false},
		{"equals in ns", store.ArchiveListOptions{Namespace: "argo", LabelSelector: "app==build"}, []string{"build-2", "build-1", "queued-1"}, false},
		{"not equals keeps unlabelled", store.ArchiveListOptions{Namespace: "argo", LabelSelector: "app!=build"}, []string{"deploy-1", "test-1"}, false},
		{"in", store.ArchiveListOptions{LabelSelector: "app in (test,nothing)"}, []string{"test-1"}, false},
		{"notin", store.ArchiveListOptions{Namespace: "argo", LabelSelector: "app notin (build,test)"}, []string{"deploy-1"}, false},
		{"exists", store.ArchiveListOptions{LabelSelector: "ci"}, []string{"test-1"}, false},
		{"does not exist", store.ArchiveListOptions{Namespace: "argo", LabelSelector: "!app"}, []string{"deploy-1"}, false},
		{"and", store.ArchiveListOptions{LabelSelector: "app=build,n=20"}, []string{"build-2"}, false},
		{"gt skips non-integers", store.ArchiveListOptions{LabelSelector: "n>2"}, []string{"test-1", "build-2"}, false},
		{"lt takes negatives, not 007", store.ArchiveListOptions{LabelSelector: "n<3"}, []string{"deploy-1", "build-1"}, false},
		{"gt beyond int64 is no integer", store.ArchiveListOptions{LabelSelector: "big>0"}, nil, false},
		{"exact name", store.ArchiveListOptions{Name: "build-1"}, []string{"build-1", "build-1"}, false},
		{"prefix filter", store.ArchiveListOptions{Namespace: "argo", Name: "build", NameFilter: store.NamePrefix}, []string{"build-2", "build-1"}, false},
		{"name prefix", store.ArchiveListOptions{NamePrefix: "de"}, []string{"deploy-1"}, false},
		{"prefix is not a pattern", store.ArchiveListOptions{NamePrefix: "b%"}, nil, false},
		{"contains", store.ArchiveListOptions{Name: "-1", NameFilter: store.NameContains, Namespace: "argo"}, []string{"deploy-1", "test-1", "build-1", "queued-1"}, false},
		{"contains is not a pattern", store.ArchiveListOptions{Name: "_", NameFilter: store.NameContains}, nil, false},
		{"not equals name", store.ArchiveListOptions{Name: "build-1", NameFilter: store.NameNotEquals}, []string{"deploy-1", "test-1", "build-2", "queued-1"}, false},
		{"created after", store.ArchiveListOptions{CreatedAfter: at(3)}, []string{"build-1", "deploy-1"}, false},
		{"created before", store.ArchiveListOptions{CreatedBefore: at(3)}, []string{"build-2", "build-1", "queued-1"}, false},
		{"created after, to the second", store.ArchiveListOptions{CreatedAfter: at(3).Add(500 * time.Millisecond)}, []string{"build-1", "deploy-1"}, false},
		{"finished before", store.ArchiveListOptions{FinishedBefore: at(4)}, []string{"build-2", "build-1"}, false},
		{"first page", store.ArchiveListOptions{Limit: 2}, []string{"build-1", "deploy-1"}, true},
		{"second page", store.ArchiveListOptions{Limit: 2, Offset: 2}, []string{"test-1", "build-2"}, true},
		{"last page", store.ArchiveListOptions{Limit: 2, Offset: 4}, []string{"build-1", "queued-1"}, false},
		{"exact page", store.ArchiveListOptions{Limit: all}, []string{"build-1", "deploy-1", "test-1", "build-2", "build-1", "queued-1"}, false},
		{"offset only", store.ArchiveListOptions{Offset: 3}, []string{"build-2", "build-1", "queued-1"}, false},
		{"offset past the end", store.ArchiveListOptions{Offset: 10, Limit: 2}, nil, false},
		{"labelled page", store.ArchiveListOptions{LabelSelector: "app=build", Limit: 1, Offset: 1}, []string{"build-2"}, true},
		{"nothing", store.ArchiveListOptions{LabelSelector: "app=none"}, nil, false},
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
			every, _, err := s.ListArchived(ctx, count)
			must(t, err, "list all")
			if int(n) != len(every) {
				t.Errorf("count = %d, list without limit = %d", n, len(every))
			}
		})
	}

	for _, bad := range []store.ArchiveListOptions{
		{LabelSelector: "a in in"}, {Name: "x", NameFilter: "Regex"}, {Limit: -1}, {Offset: -1}, {LabelSelector: "n>x"},
	} {
		_, _, err := s.ListArchived(ctx, bad)
		isErr(t, err, ErrInvalid, fmt.Sprintf("list %+v", bad))
		if bad.Limit >= 0 && bad.Offset >= 0 {
			_, err = s.CountArchived(ctx, bad)
			isErr(t, err, ErrInvalid, fmt.Sprintf("count %+v", bad))
		}
	}
}

func TestArchiveLabelKeysValues(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	must(t, s.ArchiveBatch(ctx, archiveFixtures()), "archive")
	// Byte order, not a locale's: upper case before lower case.
	must(t, s.Archive(ctx, archived("third", "w", 9, map[string]string{"Zed": "B", "zed": "a", "app": "Build"})), "archive third")
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

// The archive is in the database: another Store on it sees it.
func TestArchiveReopen(t *testing.T) {
	ctx := context.Background()
	dsn := testSchema(t)
	s, err := Open(ctx, dsn)
	must(t, err, "open")
	must(t, s.Archive(ctx, archived("argo", "a", 1, map[string]string{"k": "v"})), "archive")
	must(t, s.Close(), "close")
	s, err = Open(ctx, dsn)
	must(t, err, "open again")
	defer func() { _ = s.Close() }()
	got, _, err := s.ListArchived(ctx, store.ArchiveListOptions{LabelSelector: "k=v"})
	must(t, err, "list")
	if !slices.Equal(archivedNames(got), []string{"a"}) {
		t.Errorf("after reopen: %v", archivedNames(got))
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, testSchema(t))
	must(t, err, "open")
	must(t, s.Close(), "close")
	must(t, s.Close(), "close twice")
	isErr(t, s.Archive(ctx, archived("argo", "a", 1, nil)), ErrClosed, "Archive")
	_, err = s.GetArchived(ctx, "u")
	isErr(t, err, ErrClosed, "GetArchived")
	_, _, err = s.ListArchived(ctx, store.ArchiveListOptions{})
	isErr(t, err, ErrClosed, "ListArchived")
	_, err = s.CountArchived(ctx, store.ArchiveListOptions{})
	isErr(t, err, ErrClosed, "CountArchived")
	isErr(t, s.DeleteArchived(ctx, "u"), ErrClosed, "DeleteArchived")
	_, err = s.ArchivedLabelKeys(ctx, "")
	isErr(t, err, ErrClosed, "ArchivedLabelKeys")
	_, err = s.ArchivedLabelValues(ctx, "", "k")
	isErr(t, err, ErrClosed, "ArchivedLabelValues")
	_, _, err = s.LoadMemo(ctx, "ns", "c", "k")
	isErr(t, err, ErrClosed, "LoadMemo")
	isErr(t, s.SaveMemo(ctx, store.MemoEntry{Namespace: "ns", Cache: "c", Key: "k", NodeID: "n"}), ErrClosed, "SaveMemo")
	isErr(t, s.HitMemo(ctx, "ns", "c", "k"), ErrClosed, "HitMemo")
	_, err = s.PruneMemos(ctx, time.Now())
	isErr(t, err, ErrClosed, "PruneMemos")
}
