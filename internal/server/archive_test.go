package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// archiveWorkflow archives a finished one-step workflow whose step ended
// in phase; started orders the archive (newest first).
func archiveWorkflow(t *testing.T, st *sqlite.Store, ns, name string, started int, phase v1alpha1.WorkflowPhase, labels map[string]string) *v1alpha1.Workflow {
	t.Helper()
	at := metav1.NewTime(time.Date(2026, 11, 30, 9, started, 0, 0, time.UTC))
	nodePhase := v1alpha1.NodeSucceeded
	if phase != v1alpha1.WorkflowSucceeded {
		nodePhase = v1alpha1.NodeFailed
	}
	wf := &v1alpha1.Workflow{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: "Workflow"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + ns + "-" + name), Labels: labels,
			CreationTimestamp: at, ResourceVersion: "7",
		},
		Spec: v1alpha1.WorkflowSpec{Entrypoint: "main", Templates: []v1alpha1.Template{{
			Name: "main", Container: &corev1.Container{Image: "alpine", Command: []string{"false"}},
		}}},
		Status: v1alpha1.WorkflowStatus{
			Phase: phase, StartedAt: at, FinishedAt: metav1.NewTime(at.Add(time.Minute)),
			Nodes: v1alpha1.Nodes{name: {
				ID: name, Name: name, DisplayName: name, Type: v1alpha1.NodeTypePod, TemplateName: "main",
				Phase: nodePhase, StartedAt: at, FinishedAt: metav1.NewTime(at.Add(time.Minute)),
			}},
		},
	}
	if err := st.Archive(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
	return wf
}

type wfList struct {
	Metadata struct {
		Continue           string `json:"continue"`
		RemainingItemCount *int64 `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []v1alpha1.Workflow `json:"items"`
}

func (l wfList) names() []string {
	var out []string
	for _, wf := range l.Items {
		out = append(out, wf.Name)
	}
	return out
}

func TestArchiveREST(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	base := "http://" + addr + "/api/v1"
	archiveWorkflow(t, st, "argo", "build-a", 1, v1alpha1.WorkflowSucceeded, map[string]string{"app": "build"})
	archiveWorkflow(t, st, "argo", "build-b", 2, v1alpha1.WorkflowFailed, map[string]string{"app": "build", "tier": "2"})
	archiveWorkflow(t, st, "argo", "test-a", 3, v1alpha1.WorkflowFailed, map[string]string{"app": "test"})
	archiveWorkflow(t, st, "other", "build-a", 4, v1alpha1.WorkflowSucceeded, map[string]string{"app": "build"})

	lists := []struct {
		query, want, cont string
		remaining         int64 // -1: not asked
	}{
		{"", "build-a test-a build-b build-a", "", -1}, // other's build-a is the newest
		{"?namespace=argo", "test-a build-b build-a", "", -1},
		{"?namespace=argo&listOptions.limit=2", "test-a build-b", "2", -1},
		{"?namespace=argo&listOptions.limit=2&listOptions.continue=2", "build-a", "", -1},
		{"?listOptions.labelSelector=app%3Dbuild,tier", "build-b", "", -1},
		{"?listOptions.labelSelector=app!%3Dbuild", "test-a", "", -1},
		{"?listOptions.fieldSelector=metadata.name%3Dbuild-a", "build-a build-a", "", -1},
		{"?listOptions.fieldSelector=metadata.name%3Dbuild-a,metadata.namespace%3Dother", "build-a", "", -1},
		{"?namespace=argo&namePrefix=build", "build-b build-a", "", -1},
		{"?namespace=argo&nameFilter=Contains&listOptions.fieldSelector=metadata.name%3D-a", "test-a build-a", "", -1},
		{"?namespace=argo&nameFilter=NotEquals&listOptions.fieldSelector=metadata.name%3Dtest-a", "build-b build-a", "", -1},
		{"?listOptions.limit=1&listOptions.fieldSelector=ext.showRemainingItemCount%3Dtrue", "build-a", "1", 3},
		{"?listOptions.labelSelector=app%3Dnone", "", "", -1},
		{"?listOptions.fieldSelector=spec.startedAt%3E2026-11-30T09:02:00Z", "build-a test-a", "", -1},
		{"?listOptions.fieldSelector=spec.startedAt%3E2026-11-30T09:01:00Z,spec.startedAt%3C2026-11-30T09:04:00Z", "test-a build-b", "", -1},
		{"?namespace=argo&listOptions.fieldSelector=metadata.name!%3Dtest-a", "build-b build-a", "", -1},
	}
	for _, tc := range lists {
		res := do(t, "GET", base+"/archived-workflows"+tc.query, "")
		if res.status != 200 {
			t.Errorf("list %s: %d %s", tc.query, res.status, res.body)
			continue
		}
		l := decodeInto[wfList](t, res.body)
		if got := strings.Join(l.names(), " "); got != tc.want || l.Metadata.Continue != tc.cont {
			t.Errorf("list %s = %q continue %q, want %q continue %q", tc.query, got, l.Metadata.Continue, tc.want, tc.cont)
		}
		if tc.remaining >= 0 && (l.Metadata.RemainingItemCount == nil || *l.Metadata.RemainingItemCount != tc.remaining) {
			t.Errorf("list %s: remainingItemCount %v, want %d", tc.query, l.Metadata.RemainingItemCount, tc.remaining)
		}
		for _, wf := range l.Items {
			if wf.Status.Nodes != nil {
				t.Errorf("list %s: %s comes with nodes", tc.query, wf.Name)
			}
		}
	}

	errs := []struct {
		method, path string
		status       int
		code         codes.Code
		msg          string
	}{
		{"GET", "/archived-workflows?listOptions.continue=abc", 400, codes.InvalidArgument, "listOptions.continue must be int"},
		{"GET", "/archived-workflows?listOptions.labelSelector=a+in+in", 400, codes.InvalidArgument, "label selector"},
		{"GET", "/archived-workflows?nameFilter=Regex&listOptions.fieldSelector=metadata.name%3Dx", 400, codes.InvalidArgument, "name filter"},
		{"GET", "/archived-workflows?listOptions.fieldSelector=status.phase%3DFailed", 400, codes.InvalidArgument, "fieldSelector"},
		{"GET", "/archived-workflows?listOptions.fieldSelector=spec.startedAt%3Eyesterday", 400, codes.InvalidArgument, "unsupported requirement spec.startedAt>yesterday"},
		{"GET", "/archived-workflows/nope", 404, codes.NotFound, `archived workflow "nope" not found`},
		{"GET", "/archived-workflows/uid-argo-test-a?namespace=other", 404, codes.NotFound, "not found"},
		{"GET", "/archived-workflows/uid-argo-test-a?name=build-a", 404, codes.NotFound, "not found"},
		{"DELETE", "/archived-workflows/nope", 404, codes.NotFound, "not found"},
		{"GET", "/archived-workflows-label-values?listOptions.labelSelector=app%3Dx", 400, codes.InvalidArgument, "exactly one label key"},
		{"PUT", "/archived-workflows/nope/retry", 404, codes.NotFound, "not found"},
	}
	for _, e := range errs {
		res := do(t, e.method, base+e.path, "")
		got := decodeInto[errJSON](t, res.body)
		if res.status != e.status || got.Code != int(e.code) || !strings.Contains(got.Message, e.msg) {
			t.Errorf("%s %s: %d %s, want %d code %d containing %q", e.method, e.path, res.status, res.body, e.status, e.code, e.msg)
		}
	}

	// Get returns the nodes; namespace and name, when right, are accepted.
	res := do(t, "GET", base+"/archived-workflows/uid-argo-test-a?namespace=argo&name=test-a", "")
	wf := decodeInto[v1alpha1.Workflow](t, res.body)
	if res.status != 200 || wf.Name != "test-a" || len(wf.Status.Nodes) != 1 {
		t.Errorf("get: %d %s", res.status, res.body)
	}

	res = do(t, "GET", base+"/archived-workflows-label-keys?namespace=argo", "")
	if k := decodeInto[struct{ Items []string }](t, res.body); res.status != 200 || !slices.Equal(k.Items, []string{"app", "tier"}) {
		t.Errorf("label keys: %d %s", res.status, res.body)
	}
	res = do(t, "GET", base+"/archived-workflows-label-values?listOptions.labelSelector=app", "")
	if v := decodeInto[struct{ Items []string }](t, res.body); res.status != 200 || !slices.Equal(v.Items, []string{"build", "test"}) {
		t.Errorf("label values: %d %s", res.status, res.body)
	}

	res = do(t, "DELETE", base+"/archived-workflows/uid-other-build-a?namespace=argo", "")
	if res.status != 404 {
		t.Errorf("delete with the wrong namespace: %d %s", res.status, res.body)
	}
	res = do(t, "DELETE", base+"/archived-workflows/uid-other-build-a", "")
	if res.status != 200 || string(res.body) != "{}" {
		t.Errorf("delete: %d %s", res.status, res.body)
	}
	if res = do(t, "GET", base+"/archived-workflows/uid-other-build-a", ""); res.status != 404 {
		t.Errorf("get after delete: %d %s", res.status, res.body)
	}
}

func TestArchiveRetryResubmit(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	base := "http://" + addr + "/api/v1/archived-workflows/"
	ctx := context.Background()
	archiveWorkflow(t, st, "argo", "failed", 1, v1alpha1.WorkflowFailed, map[string]string{"app": "x"})
	archiveWorkflow(t, st, "argo", "fine", 2, v1alpha1.WorkflowSucceeded, nil)

	// Retry creates the workflow again, with a new uid, set to run again.
	res := do(t, "PUT", base+"uid-argo-failed/retry", `{"namespace":"argo","parameters":[]}`)
	if res.status != 200 {
		t.Fatalf("retry: %d %s", res.status, res.body)
	}
	got := decodeInto[v1alpha1.Workflow](t, res.body)
	o, err := st.Get(ctx, store.KindWorkflow, "argo", "failed")
	if err != nil {
		t.Fatalf("retried workflow is not in the store: %v", err)
	}
	live := o.(*v1alpha1.Workflow)
	if got.Name != "failed" || live.UID == "uid-argo-failed" || live.UID != got.UID || live.Status.Phase != v1alpha1.WorkflowRunning ||
		len(live.Status.Nodes) != 0 || live.Labels["app"] != "x" {
		t.Errorf("retried workflow: uid %s phase %s nodes %d labels %v", live.UID, live.Status.Phase, len(live.Status.Nodes), live.Labels)
	}
	// Again: the live workflow exists; argo retry is the way.
	res = do(t, "PUT", base+"uid-argo-failed/retry", `{}`)
	if e := decodeInto[errJSON](t, res.body); res.status != 409 || e.Code != int(codes.AlreadyExists) || !strings.Contains(e.Message, "argo retry") {
		t.Errorf("retry with a live workflow: %d %s", res.status, res.body)
	}
	// A Succeeded workflow cannot be retried without a selector.
	res = do(t, "PUT", base+"uid-argo-fine/retry", `{}`)
	if e := decodeInto[errJSON](t, res.body); res.status != 400 || e.Code != int(codes.FailedPrecondition) {
		t.Errorf("retry of a Succeeded workflow: %d %s", res.status, res.body)
	}

	// Resubmit creates a new workflow from the archived one.
	res = do(t, "PUT", base+"uid-argo-fine/resubmit", `{"namespace":"argo"}`)
	if res.status != 200 {
		t.Fatalf("resubmit: %d %s", res.status, res.body)
	}
	got = decodeInto[v1alpha1.Workflow](t, res.body)
	if !strings.HasPrefix(got.Name, "fine-") || got.Labels["workflows.argoproj.io/resubmitted-from-workflow"] != "fine" || got.Status.Phase != "" {
		t.Errorf("resubmitted: name %s labels %v phase %q", got.Name, got.Labels, got.Status.Phase)
	}
	if _, err := st.Get(ctx, store.KindWorkflow, "argo", got.Name); err != nil {
		t.Errorf("resubmitted workflow is not in the store: %v", err)
	}
	res = do(t, "PUT", base+"uid-argo-fine/resubmit", `{"memoized":true}`)
	if e := decodeInto[errJSON](t, res.body); res.status != 400 || e.Code != int(codes.FailedPrecondition) {
		t.Errorf("memoized resubmit of a Succeeded workflow: %d %s", res.status, res.body)
	}
}

// The archive's REST list honours `fields` as the live list does.
func TestArchiveListFields(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	archiveWorkflow(t, st, "argo", "a", 1, v1alpha1.WorkflowSucceeded, map[string]string{"app": "x"})
	archiveWorkflow(t, st, "argo", "b", 2, v1alpha1.WorkflowFailed, map[string]string{"app": "x"})
	archiveWorkflow(t, st, "argo", "c", 3, v1alpha1.WorkflowFailed, map[string]string{"app": "y"})
	base := "http://" + addr + "/api/v1/archived-workflows?listOptions.labelSelector=app%3Dx&"
	for _, tc := range []struct{ query, want string }{
		{"listOptions.limit=1&listOptions.fieldSelector=ext.showRemainingItemCount%3Dtrue&fields=metadata,items.metadata.name",
			`{"items":[{"metadata":{"name":"b"}}],"metadata":{"continue":"1","remainingItemCount":1}}`},
		{"fields=items.metadata.name,items.status.phase", `{"items":[{"metadata":{"name":"b"},"status":{"phase":"Failed"}},{"metadata":{"name":"a"},"status":{"phase":"Succeeded"}}]}`},
		{"listOptions.limit=1&fields=metadata.continue", `{"metadata":{"continue":"1"}}`},
	} {
		res := do(t, "GET", base+tc.query, "")
		if res.status != 200 {
			t.Fatalf("%s: %d %s", tc.query, res.status, res.body)
		}
		if got := strings.TrimSpace(string(res.body)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.query, got, tc.want)
		}
	}
	// Dropping: the items lose their spec and nothing else.
	res := do(t, "GET", base+"fields=-items.spec", "")
	l := decodeInto[wfList](t, res.body)
	if len(l.Items) != 2 || l.Items[0].Spec.Entrypoint != "" || l.Items[0].Status.Phase != v1alpha1.WorkflowFailed || l.Items[0].Namespace != "argo" {
		t.Errorf("-items.spec: %s", res.body)
	}
}
