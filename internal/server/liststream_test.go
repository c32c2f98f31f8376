package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// listWorkflowCount is more than two store pages of a whole list.
const listWorkflowCount = 2*listPageSize + 150

// seedList stores n workflows, created 400 ms apart (so that several share
// a second): every third one finished, at times that often share a
// second and are not in creation order; every fifth has a node; labels
// say which.
func seedList(t testing.TB, n int) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	calls := 0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return base.Add(time.Duration(calls) * 400 * time.Millisecond)
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for i := range n {
		wf := &v1alpha1.Workflow{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("wf-%04d", i), Namespace: "argo",
				Labels: map[string]string{"parity": []string{"even", "odd"}[i%2]}},
			Spec: v1alpha1.WorkflowSpec{Entrypoint: "main", Templates: []v1alpha1.Template{
				{Name: "main", Suspend: &v1alpha1.SuspendTemplate{}},
				{Name: "other <&>", Script: &v1alpha1.ScriptTemplate{Source: "echo '<&>'"}},
			}},
		}
		if err := st.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
		wf.Status.Phase = v1alpha1.WorkflowRunning
		wf.Status.StartedAt = wf.CreationTimestamp
		wf.Status.EstimatedDuration = v1alpha1.EstimatedDuration(i)
		if i%3 == 0 {
			wf.Status.Phase = v1alpha1.WorkflowSucceeded
			wf.Status.FinishedAt = metav1.NewTime(base.Add(time.Duration((i*37)%500) * 700 * time.Millisecond).Truncate(time.Second))
			wf.Status.Message = fmt.Sprintf("done \u2028 %d", i)
		}
		if i%5 == 0 {
			id := wf.Name
			wf.Status.Nodes = v1alpha1.Nodes{id: {ID: id, Name: wf.Name, Phase: v1alpha1.NodePhase(wf.Status.Phase), Type: "Suspend"}}
		}
		if err := st.Update(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// oldList is the list as ListWorkflows built it before it was streamed:
// the whole page (or list) from the store, each workflow whole when
// fields keep its nodes, sorted, and converted in one piece.
func oldList(t *testing.T, st Store, req *workflow.WorkflowListRequest) *v1alpha1.WorkflowList {
	t.Helper()
	ctx := context.Background()
	q, err := parseListRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	// finishedBefore as the server applied it before the store did (whole
	// lists only: a page would come out short).
	finishedBefore := q.opts.FinishedBefore
	q.opts.FinishedBefore = time.Time{}
	objs, next, err := st.List(ctx, store.KindWorkflow, req.GetNamespace(), q.opts)
	if err != nil {
		t.Fatal(err)
	}
	var wfs []*v1alpha1.Workflow
	for _, o := range objs {
		wf := o.(*v1alpha1.Workflow)
		if !finishedBefore.IsZero() && (wf.Status.FinishedAt.IsZero() || !wf.Status.FinishedAt.Time.Before(finishedBefore)) {
			continue
		}
		if fieldsKeep(req.GetFields(), "items.status.nodes") {
			full, err := st.Get(ctx, store.KindWorkflow, wf.Namespace, wf.Name)
			if err != nil {
				t.Fatal(err)
			}
			wf = full.(*v1alpha1.Workflow)
		}
		wfs = append(wfs, wf)
	}
	v1alpha1.SortWorkflows(wfs)
	list := &v1alpha1.WorkflowList{}
	list.Continue = next
	for _, wf := range wfs {
		list.Items = append(list.Items, *wf)
	}
	return list
}

// gatewayJSON is what the gateway wrote for the list's Struct.
func gatewayJSON(t *testing.T, list *v1alpha1.WorkflowList, fields string) []byte {
	t.Helper()
	return structJSON(t, list, fields)
}

// TestListStreamMatchesGateway: the streamed REST list, and the gRPC one,
// are byte for byte (and message for message) what the gateway made of
// the whole list, for whole lists of several store pages, fields that
// keep, drop or reach into arrays, filters, and client pages.
func TestListStreamMatchesGateway(t *testing.T) {
	st := seedList(t, listWorkflowCount)
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	wfs := &workflowServer{store: st, caps: sqliteCaps(st), log: srv.log}
	page := oldList(t, st, &workflow.WorkflowListRequest{Namespace: "argo", ListOptions: &metav1.ListOptions{Limit: 7}})
	for _, tc := range []struct {
		name  string
		query url.Values
	}{
		{"whole", url.Values{}},
		{"argo list fields", url.Values{"fields": {"metadata,items.metadata.uid,items.metadata.name,items.metadata.namespace," +
			"items.metadata.creationTimestamp,items.metadata.labels,items.metadata.annotations,items.status.phase," +
			"items.status.message,items.status.finishedAt,items.status.startedAt,items.status.estimatedDuration," +
			"items.status.progress,items.spec.suspend"}}},
		{"names", url.Values{"fields": {"items.metadata.name"}}},
		{"through an array", url.Values{"fields": {"items.spec.templates.name,items.metadata.labels.parity"}}},
		{"nodes", url.Values{"fields": {"items.metadata.name,items.status.nodes"}}},
		{"whole items", url.Values{"fields": {"items"}}},
		{"metadata only", url.Values{"fields": {"metadata"}}},
		{"nothing", url.Values{"fields": {","}}},
		{"drop nodes", url.Values{"fields": {"-items.status.nodes,items.spec"}}},
		{"drop items", url.Values{"fields": {"-items"}}},
		{"label selector", url.Values{"listOptions.labelSelector": {"parity=odd"}, "fields": {"items.metadata.name"}}},
		{"finished before", url.Values{"finishedBefore": {"2026-03-01T10:03:00Z"}}},
		{"none match", url.Values{"listOptions.labelSelector": {"parity=none"}, "fields": {"metadata,items.metadata.name"}}},
		{"client page", url.Values{"listOptions.limit": {"7"}, "fields": {"metadata,items.metadata.name,items.status.finishedAt"}}},
		{"client next page", url.Values{"listOptions.limit": {"300"}, "listOptions.continue": {page.Continue}}},
		{"continue without limit", url.Values{"listOptions.continue": {page.Continue}, "fields": {"items.metadata.name"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &workflow.WorkflowListRequest{Namespace: "argo", Fields: tc.query.Get("fields"), FinishedBefore: tc.query.Get("finishedBefore"),
				ListOptions: &metav1.ListOptions{LabelSelector: tc.query.Get("listOptions.labelSelector"), Continue: tc.query.Get("listOptions.continue")}}
			if l := tc.query.Get("listOptions.limit"); l != "" {
				_, _ = fmt.Sscan(l, &req.ListOptions.Limit)
			}
			old := oldList(t, st, req)
			want := gatewayJSON(t, old, req.Fields)

			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/v1/workflows/argo?"+tc.query.Encode(), nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET: %d %s", rec.Code, rec.Body)
			}
			if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("REST body differs from the gateway's (%d bytes, want %d):\n%s", len(got), len(want), firstDiff(got, want))
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if v := rec.Header().Get("Grpc-Metadata-Argo-Version"); v != testVersion.Version {
				t.Errorf("Grpc-Metadata-Argo-Version %q", v)
			}

			got, err := wfs.ListWorkflows(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := grpcListJSON(t, got, req.Fields), structJSON(t, old, req.Fields); string(g) != string(w) {
				t.Errorf("gRPC list differs from the whole list:\n got %s\nwant %s", g, w)
			}
		})
	}
}

// firstDiff shows where two bodies part.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-80, 0)
	return fmt.Sprintf("at byte %d:\n got  ...%s\n want ...%s", i, got[from:min(i+80, len(got))], want[from:min(i+80, len(want))])
}

// TestListWholeInArgoOrder: a whole list of more than two store pages
// holds every workflow once, unfinished first (newest created first), then
// the latest finished first, each compared to the second.
func TestListWholeInArgoOrder(t *testing.T) {
	st := seedList(t, listWorkflowCount)
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet,
		"http://127.0.0.1/api/v1/workflows/argo?fields=items.metadata.name,items.metadata.creationTimestamp,items.status.finishedAt", nil))
	list := decodeInto[v1alpha1.WorkflowList](t, rec.Body.Bytes())
	if len(list.Items) != listWorkflowCount {
		t.Fatalf("%d items, want %d", len(list.Items), listWorkflowCount)
	}
	wfs := make([]*v1alpha1.Workflow, len(list.Items))
	seen := map[string]bool{}
	for i := range list.Items {
		wfs[i] = &list.Items[i]
		if seen[wfs[i].Name] {
			t.Errorf("%s listed twice", wfs[i].Name)
		}
		seen[wfs[i].Name] = true
	}
	if !slices.IsSortedFunc(wfs, func(a, b *v1alpha1.Workflow) int { return argoCompare(a, b) }) {
		t.Errorf("the list is not in Argo's order")
	}
	if wfs[0].Status.FinishedAt.IsZero() != true || wfs[len(wfs)-1].Status.FinishedAt.IsZero() {
		t.Errorf("want unfinished first and finished last: first %s, last %s", wfs[0].Name, wfs[len(wfs)-1].Name)
	}
}

// argoCompare is Argo's list order, to the second (ties compare equal).
func argoCompare(a, b *v1alpha1.Workflow) int {
	ad, bd := !a.Status.FinishedAt.IsZero(), !b.Status.FinishedAt.IsZero()
	switch {
	case ad != bd:
		if ad {
			return 1
		}
		return -1
	case !ad:
		return b.CreationTimestamp.Time.Truncate(time.Second).Compare(a.CreationTimestamp.Time.Truncate(time.Second))
	}
	return b.Status.FinishedAt.Time.Truncate(time.Second).Compare(a.Status.FinishedAt.Time.Truncate(time.Second))
}

// finishingStore finishes one listed unfinished workflow after the first
// page of a whole list, as the controller may while the list is read.
type finishingStore struct {
	*sqlite.Store
	once sync.Once
	name string
}

func (f *finishingStore) List(ctx context.Context, kind store.Kind, ns string, opts store.ListOptions) ([]store.Object, string, error) {
	objs, next, err := f.Store.List(ctx, kind, ns, opts)
	if err != nil || opts.Order != store.OrderArgo {
		return objs, next, err
	}
	f.once.Do(func() {
		for _, o := range objs {
			if wf := o.(*v1alpha1.Workflow); wf.Status.FinishedAt.IsZero() {
				f.name = wf.Name
				break
			}
		}
		o, gerr := f.Store.Get(ctx, store.KindWorkflow, ns, f.name)
		if gerr != nil {
			err = gerr
			return
		}
		wf := o.(*v1alpha1.Workflow)
		wf.Status.Phase, wf.Status.FinishedAt = v1alpha1.WorkflowSucceeded, metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		err = f.Store.Update(ctx, wf)
	})
	return objs, next, err
}

// TestListWholeWhileOneFinishes: a workflow that finishes while the list
// is read (and so moves to the top of the finished ones, after the
// unfinished pages already read) is listed once.
func TestListWholeWhileOneFinishes(t *testing.T) {
	fs := &finishingStore{Store: seedList(t, listWorkflowCount)}
	wfs := &workflowServer{store: fs, caps: sqliteCaps(fs.Store)}
	got, err := wfs.ListWorkflows(context.Background(), &workflow.WorkflowListRequest{Namespace: "argo", Fields: "items.metadata.name"})
	if err != nil {
		t.Fatal(err)
	}
	list := got
	count := map[string]int{}
	for _, wf := range list.Items {
		count[wf.Name]++
	}
	if fs.name == "" || count[fs.name] != 1 || len(count) != listWorkflowCount || len(list.Items) != listWorkflowCount {
		t.Errorf("%s (finished while listed) listed %d times; %d items, %d names, want %d", fs.name, count[fs.name], len(list.Items), len(count), listWorkflowCount)
	}
}

// TestListClientPages: client pages (limit and continue) cover every
// workflow once, each page sorted as Argo sorts a page.
func TestListClientPages(t *testing.T) {
	st := seedList(t, 650)
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	cont := ""
	for range 10 {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/v1/workflows/argo?listOptions.limit=200&fields=metadata,"+
			"items.metadata.name,items.metadata.creationTimestamp,items.status.finishedAt&listOptions.continue="+url.QueryEscape(cont), nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET: %d %s", rec.Code, rec.Body)
		}
		list := decodeInto[v1alpha1.WorkflowList](t, rec.Body.Bytes())
		var wfs []*v1alpha1.Workflow
		for i := range list.Items {
			wf := &list.Items[i]
			if seen[wf.Name] {
				t.Errorf("%s listed twice", wf.Name)
			}
			seen[wf.Name] = true
			wfs = append(wfs, wf)
		}
		if !slices.IsSortedFunc(wfs, argoCompare) {
			t.Errorf("a page is not in Argo's order")
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	if len(seen) != 650 {
		t.Errorf("pages held %d workflows, want 650", len(seen))
	}
}

// TestListStreamErrors: a bad request is answered before the list starts,
// with the gateway's error JSON and status.
func TestListStreamErrors(t *testing.T) {
	st := seedList(t, 3)
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"listOptions.continue=garbage", "listOptions.limit=-1", "listOptions.labelSelector=%3D%3D", "finishedBefore=yesterday"} {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/v1/workflows/argo?"+q, nil))
		body, _ := io.ReadAll(rec.Body)
		var e errJSON
		if rec.Code != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Code != 3 {
			t.Errorf("%s: %d %s, want 400 with code 3", q, rec.Code, body)
		}
	}
}

// BenchmarkListREST is a whole REST list (with nodes, and with the fields
// of `argo list`); -benchmem shows what each item costs in garbage.
func BenchmarkListREST(b *testing.B) {
	st := seedList(b, listPageSize)
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion})
	if err != nil {
		b.Fatal(err)
	}
	for _, fields := range []string{"", "metadata,items.metadata.name,items.metadata.labels,items.status.phase,items.status.finishedAt,items.spec.suspend"} {
		b.Run("fields="+fields, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/v1/workflows/argo?fields="+url.QueryEscape(fields), nil))
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*listPageSize), "µs/item")
		})
	}
}

// TestAppendItemJSON: the one-pass item encoder writes what the gateway
// writes for the item's Struct after `fields`, for awkward JSON.
func TestAppendItemJSON(t *testing.T) {
	docs := []string{
		`{}`, `{"a":null}`, `{"b":1,"a":2}`,
		`{"s":"<&>\u2028\u2029\u007f\u0000\u001f\"\\ é \ud83d\ude00 \ufffd","k\"ey":"q","\u00e9":1,"e":2}`,
		`{"n":[0,-0,1.5,1e21,1e-7,123456789012345678901,9007199254740993,-2.5e-300,0.000001]}`,
		`{"a":{"b":[{"c":1,"d":2},{"c":3},5,"x",null,[{"c":4}]],"e":{"c":1}},"f":true,"g":false}`,
		` { "a" : [ 1 , { "c" : "d" } ] , "b" : { } , "c" : [ ] } `,
		`{"dup":1,"dup":2}`,
	}
	m := &compactJSONPb{runtime.JSONPb{MarshalOptions: protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}}}
	for _, doc := range docs {
		for _, fields := range []string{"", "a", "a.b.c,f", "-a.b.c", "-a,n", "s,k\"ey", "a.e,zz", "-zz"} {
			sh := parseListShape(fields)
			var want []byte
			{
				var v map[string]any
				if err := json.Unmarshal([]byte(doc), &v); err != nil {
					t.Fatal(err)
				}
				if fields != "" {
					v = filterFields(v, fields)
				}
				s, err := toStruct(v)
				if err != nil {
					t.Fatal(err)
				}
				if want, err = m.Marshal(s); err != nil {
					t.Fatal(err)
				}
			}
			got, err := appendItemJSON([]byte("x"), []byte(doc), parseFields(strings.TrimPrefix(fields, "-")), sh.drop)
			if fields == "" {
				got, err = appendItemJSON([]byte("x"), []byte(doc), nil, false)
			}
			if err != nil {
				t.Errorf("%s with fields %q: %v", doc, fields, err)
				continue
			}
			if !bytes.Equal(got[1:], want) {
				t.Errorf("%s with fields %q:\n got  %s\n want %s", doc, fields, got[1:], want)
			}
		}
	}
	for _, bad := range []string{`{`, `{"a"}`, `{"a":}`, `[1,]x`, `"abc`, `{"a":1}x`, `nul`} {
		if _, err := appendItemJSON(nil, []byte(bad), nil, false); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestArchiveListStreamMatchesGateway: the archive's REST list, read in
// store pages, is byte for byte the gateway's JSON of the whole list (as
// ListArchivedWorkflows built it in one piece), for the whole archive, a
// filter, client pages and a remaining count.
func TestArchiveListStreamMatchesGateway(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var batch []*v1alpha1.Workflow
	for i := range listWorkflowCount {
		at := metav1.NewTime(base.Add(time.Duration(i/3) * time.Second)) // three start in each second
		batch = append(batch, &v1alpha1.Workflow{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("old-%04d", i), Namespace: []string{"a", "b"}[i%2],
				UID: types.UID(fmt.Sprintf("uid-%04d", i)), CreationTimestamp: at, Labels: map[string]string{"n": fmt.Sprint(i % 7)}},
			Spec:   v1alpha1.WorkflowSpec{Entrypoint: "main"},
			Status: v1alpha1.WorkflowStatus{Phase: v1alpha1.WorkflowSucceeded, StartedAt: at, FinishedAt: metav1.NewTime(at.Add(time.Minute))},
		})
	}
	if err := st.ArchiveBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	as := newArchiveServer(st, st, srv.log)
	for _, q := range []url.Values{
		{},
		{"namespace": {"b"}, "listOptions.labelSelector": {"n=3"}},
		{"listOptions.fieldSelector": {"ext.showRemainingItemCount=true"}},
		{"listOptions.limit": {"300"}, "listOptions.continue": {"600"}, "listOptions.fieldSelector": {"ext.showRemainingItemCount=true"}},
		{"namespace": {"nowhere"}},
	} {
		req := &workflowarchive.ListArchivedWorkflowsRequest{Namespace: q.Get("namespace"), ListOptions: &metav1.ListOptions{
			LabelSelector: q.Get("listOptions.labelSelector"), FieldSelector: q.Get("listOptions.fieldSelector"), Continue: q.Get("listOptions.continue")}}
		if l := q.Get("listOptions.limit"); l != "" {
			_, _ = fmt.Sscan(l, &req.ListOptions.Limit)
		}
		// The list as it was built before: one store call, one Struct.
		opts, showRemaining, err := archiveListOptions(req)
		if err != nil {
			t.Fatal(err)
		}
		items, more, err := st.ListArchived(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		old := &v1alpha1.WorkflowList{Items: items}
		if more {
			old.Continue = fmt.Sprint(opts.Offset + len(items))
		}
		if showRemaining {
			total, err := st.CountArchived(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			rest := max(total-int64(opts.Offset+len(items)), 0)
			old.RemainingItemCount = &rest
		}
		want := gatewayJSON(t, old, "")

		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api/v1/archived-workflows?"+q.Encode(), nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%v: GET: %d %s", q, rec.Code, rec.Body)
		}
		if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
			t.Errorf("%v: REST body differs from the gateway's (%d bytes, want %d):\n%s", q, len(got), len(want), firstDiff(got, want))
		}
		got, err := as.ListArchivedWorkflows(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := grpcListJSON(t, got, ""), structJSON(t, old, ""); string(g) != string(w) {
			t.Errorf("%v: gRPC list differs from the whole list:\n got %s\nwant %s", q, g, w)
		}
	}
}

// grpcListJSON is the JSON of a gRPC list as the whole list's would be with
// fields: the message cannot leave a part out, so a part that fields drops
// is compared by its absence.
func grpcListJSON(t *testing.T, l *v1alpha1.WorkflowList, fields string) []byte {
	t.Helper()
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(fields) != "" {
		m = filterFields(m, fields)
	}
	return structJSON(t, m, "")
}
