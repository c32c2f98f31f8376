package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/version"
	"github.com/braidwf/braid/pkg/apiclient/info"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

var testVersion = version.Info{Version: "v0.1.0", BuildDate: "2026-11-30T00:00:00Z", GitCommit: "abc", GoVersion: "go1.26.8", Platform: "linux/amd64"}

// startServer serves a real SQLite store on 127.0.0.1:0 and returns the
// address; the server stops when the test ends.
func startServer(t *testing.T) string {
	t.Helper()
	addr, _ := startServerStore(t, Options{MaxRequestBytes: 1 << 20})
	return addr
}

const helloWF = `{"metadata":{"generateName":"hello-","labels":{"app":"%s"}},
 "spec":{"entrypoint":"main","templates":[{"name":"main","container":{"image":"alpine","command":["echo","hi"]}}]}}`

func wfJSON(app string) string { return strings.Replace(helloWF, "%s", app, 1) }

type response struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, method, url, body string) response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func decodeInto[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func TestREST(t *testing.T) {
	base := "http://" + startServer(t)

	// Create three workflows: two labelled app=a, one app=b.
	var names []string
	for _, app := range []string{"a", "a", "b"} {
		res := do(t, "POST", base+"/api/v1/workflows/argo", `{"workflow":`+wfJSON(app)+`}`)
		if res.status != 200 {
			t.Fatalf("create: %d %s", res.status, res.body)
		}
		wf := decodeInto[v1alpha1.Workflow](t, res.body)
		if !strings.HasPrefix(wf.Name, "hello-") || wf.Namespace != "argo" || wf.UID == "" || wf.ResourceVersion == "" {
			t.Fatalf("created workflow metadata: %+v", wf.ObjectMeta)
		}
		if wf.Status.Phase != "" {
			t.Errorf("created phase = %q, want empty", wf.Status.Phase)
		}
		if got := res.header.Get("Grpc-Metadata-Argo-Version"); got != "v0.1.0" {
			t.Errorf("Argo-Version header = %q", got)
		}
		names = append(names, wf.Name)
	}

	type errJSON struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	tests := []struct {
		name, method, path, body string
		status                   int
		check                    func(t *testing.T, b []byte)
	}{
		{name: "get", method: "GET", path: "/api/v1/workflows/argo/" + names[0], status: 200,
			check: func(t *testing.T, b []byte) {
				wf := decodeInto[v1alpha1.Workflow](t, b)
				if wf.Name != names[0] || wf.Spec.Entrypoint != "main" || wf.Labels["app"] != "a" {
					t.Errorf("got %s", b)
				}
			}},
		{name: "get with fields", method: "GET", path: "/api/v1/workflows/argo/" + names[0] + "?fields=metadata.name,status.phase", status: 200,
			check: func(t *testing.T, b []byte) {
				m := decodeInto[map[string]any](t, b)
				if diff := cmp.Diff(map[string]any{"metadata": map[string]any{"name": names[0]}, "status": map[string]any{}}, m); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}},
		{name: "get missing", method: "GET", path: "/api/v1/workflows/argo/missing", status: 404,
			check: func(t *testing.T, b []byte) {
				if diff := cmp.Diff(errJSON{5, `workflows.argoproj.io "missing" not found`}, decodeInto[errJSON](t, b)); diff != "" {
					t.Error(diff)
				}
			}},
		{name: "get @latest", method: "GET", path: "/api/v1/workflows/argo/@latest", status: 200,
			check: func(t *testing.T, b []byte) {
				if wf := decodeInto[v1alpha1.Workflow](t, b); wf.Name != names[2] {
					t.Errorf("@latest = %s, want %s", wf.Name, names[2])
				}
			}},
		{name: "list all", method: "GET", path: "/api/v1/workflows/argo", status: 200,
			check: func(t *testing.T, b []byte) {
				if l := decodeInto[v1alpha1.WorkflowList](t, b); len(l.Items) != 3 || l.Continue != "" {
					t.Errorf("got %d items, continue %q", len(l.Items), l.Continue)
				}
			}},
		{name: "list label selector", method: "GET", path: "/api/v1/workflows/argo?listOptions.labelSelector=app%3Da", status: 200,
			check: func(t *testing.T, b []byte) {
				l := decodeInto[v1alpha1.WorkflowList](t, b)
				got := []string{}
				for _, wf := range l.Items {
					got = append(got, wf.Name)
				}
				if diff := cmp.Diff([]string{names[1], names[0]}, got); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}},
		{name: "list fields", method: "GET", path: "/api/v1/workflows/argo?listOptions.labelSelector=app=b&fields=metadata,items.metadata.name", status: 200,
			check: func(t *testing.T, b []byte) {
				m := decodeInto[map[string]any](t, b)
				want := map[string]any{"metadata": map[string]any{}, "items": []any{map[string]any{"metadata": map[string]any{"name": names[2]}}}}
				if diff := cmp.Diff(want, m); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}},
		{name: "list empty namespace", method: "GET", path: "/api/v1/workflows/other", status: 200,
			check: func(t *testing.T, b []byte) {
				if diff := cmp.Diff(map[string]any{"metadata": map[string]any{}, "items": nil}, decodeInto[map[string]any](t, b)); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}},
		{name: "list bad selector", method: "GET", path: "/api/v1/workflows/argo?listOptions.labelSelector=a%3D%3D%3Db", status: 400},
		{name: "create invalid", method: "POST", path: "/api/v1/workflows/argo",
			body:   `{"workflow":{"metadata":{"name":"bad"},"spec":{"entrypoint":"nope","templates":[{"name":"main","container":{"image":"alpine"}}]}}}`,
			status: 400,
			check: func(t *testing.T, b []byte) {
				want := errJSON{3, `Workflow bad: spec.entrypoint: entrypoint template "nope" not found`}
				if diff := cmp.Diff(want, decodeInto[errJSON](t, b)); diff != "" {
					t.Error(diff)
				}
				if e := decodeInto[errJSON](t, b); e.Code != 3 || !strings.Contains(e.Message, "nope") {
					t.Errorf("got %s", b)
				}
			}},
		{name: "create malformed JSON", method: "POST", path: "/api/v1/workflows/argo", body: `{"workflow":`, status: 400,
			check: func(t *testing.T, b []byte) {
				if e := decodeInto[errJSON](t, b); e.Code != 3 {
					t.Errorf("got %s", b)
				}
			}},
		{name: "create invalid name", method: "POST", path: "/api/v1/workflows/argo",
			body: `{"workflow":{"metadata":{"name":"Bad_Name"},"spec":{"entrypoint":"main","templates":[{"name":"main","container":{"image":"alpine"}}]}}}`, status: 400,
			check: func(t *testing.T, b []byte) {
				if e := decodeInto[errJSON](t, b); e.Code != 3 || !strings.Contains(e.Message, "Bad_Name") {
					t.Errorf("got %s", b)
				}
			}},
		{name: "create path namespace fills the object's", method: "POST", path: "/api/v1/workflows/ns2",
			body: `{"namespace":"ignored","workflow":{"metadata":{"name":"in-ns2"},"spec":{"entrypoint":"main","templates":[{"name":"main","container":{"image":"alpine"}}]}}}`, status: 200,
			check: func(t *testing.T, b []byte) {
				if wf := decodeInto[v1alpha1.Workflow](t, b); wf.Namespace != "ns2" {
					t.Errorf("namespace %q", wf.Namespace)
				}
			}},
		{name: "create empty body", method: "POST", path: "/api/v1/workflows/argo", status: 400},
		{name: "create too large", method: "POST", path: "/api/v1/workflows/argo", body: `{"workflow":{"metadata":{"name":"` + strings.Repeat("x", 2<<20) + `"}}}`, status: 413},
		{name: "create namespace mismatch", method: "POST", path: "/api/v1/workflows/argo",
			body: `{"workflow":{"metadata":{"name":"x","namespace":"other"},"spec":{"entrypoint":"main","templates":[{"name":"main","container":{"image":"alpine"}}]}}}`, status: 400},
		{name: "create dry run stores nothing", method: "POST", path: "/api/v1/workflows/argo",
			body: `{"createOptions":{"dryRun":["All"]},"workflow":{"metadata":{"name":"dry"},"spec":{"entrypoint":"main","templates":[{"name":"main","container":{"image":"alpine"}}]}}}`, status: 200},
		{name: "dry run not stored", method: "GET", path: "/api/v1/workflows/argo/dry", status: 404},
		{name: "create fixed name, unknown field ignored", method: "POST", path: "/api/v1/workflows/argo",
			body: `{"unknown":1,"workflow":{"metadata":{"name":"fixed"},"spec":{"entrypoint":"main","templates":[{"name":"main","container":{"image":"alpine"}}]}}}`, status: 200},
		{name: "create taken name", method: "POST", path: "/api/v1/workflows/argo",
			body: `{"workflow":{"metadata":{"name":"fixed"},"spec":{"entrypoint":"main","templates":[{"name":"main","container":{"image":"alpine"}}]}}}`, status: 409,
			check: func(t *testing.T, b []byte) {
				if diff := cmp.Diff(errJSON{6, `workflows.argoproj.io "fixed" already exists`}, decodeInto[errJSON](t, b)); diff != "" {
					t.Error(diff)
				}
			}},
		{name: "lint ok", method: "POST", path: "/api/v1/workflows/argo/lint", body: `{"workflow":` + wfJSON("lint") + `}`, status: 200,
			check: func(t *testing.T, b []byte) {
				if wf := decodeInto[v1alpha1.Workflow](t, b); wf.GenerateName != "hello-" || wf.Name != "" {
					t.Errorf("lint echo: %s", b)
				}
			}},
		{name: "lint error", method: "POST", path: "/api/v1/workflows/argo/lint",
			body:   `{"workflow":{"metadata":{"name":"bad"},"spec":{"entrypoint":"main","templates":[{"name":"main","steps":[[{"name":"a","template":"whalesay2"}]]}]}}}`,
			status: 400,
			check: func(t *testing.T, b []byte) {
				if e := decodeInto[errJSON](t, b); e.Code != 3 || !strings.Contains(e.Message, "whalesay2") {
					t.Errorf("got %s", b)
				}
			}},
		{name: "delete", method: "DELETE", path: "/api/v1/workflows/argo/" + names[1], status: 200,
			check: func(t *testing.T, b []byte) {
				if string(bytes.TrimSpace(b)) != "{}" {
					t.Errorf("delete body %q", b)
				}
			}},
		{name: "get deleted", method: "GET", path: "/api/v1/workflows/argo/" + names[1], status: 404},
		{name: "delete missing", method: "DELETE", path: "/api/v1/workflows/argo/" + names[1], status: 404,
			check: func(t *testing.T, b []byte) {
				if e := decodeInto[errJSON](t, b); e.Code != 5 {
					t.Errorf("got %s", b)
				}
			}},
		{name: "version", method: "GET", path: "/api/v1/version", status: 200,
			check: func(t *testing.T, b []byte) {
				want := map[string]any{"version": "v0.1.0", "buildDate": "2026-11-30T00:00:00Z", "gitCommit": "abc", "gitTag": "v0.1.0",
					"gitTreeState": "", "goVersion": "go1.26.8", "compiler": "gc", "platform": "linux/amd64"}
				if diff := cmp.Diff(want, decodeInto[map[string]any](t, b)); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}},
		{name: "version bytes", method: "GET", path: "/api/v1/version", status: 200,
			check: func(t *testing.T, b []byte) {
				want := `{"version":"v0.1.0","buildDate":"2026-11-30T00:00:00Z","gitCommit":"abc","gitTag":"v0.1.0",` +
					`"gitTreeState":"","goVersion":"go1.26.8","compiler":"gc","platform":"linux/amd64"}`
				if string(b) != want {
					t.Errorf("got  %s\nwant %s", b, want)
				}
			}},
		{name: "info", method: "GET", path: "/api/v1/info", status: 200,
			check: func(t *testing.T, b []byte) {
				want := map[string]any{"managedNamespace": "", "links": []any{}, "navColor": "", "columns": []any{},
					"modals": map[string]any{"feedback": false, "firstTimeUser": false, "newVersion": false}}
				if diff := cmp.Diff(want, decodeInto[map[string]any](t, b)); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			}},
		{name: "unknown route", method: "GET", path: "/api/v1/nothing-here", status: 501,
			check: func(t *testing.T, b []byte) {
				if diff := cmp.Diff(errJSON{12, "Not Implemented"}, decodeInto[errJSON](t, b)); diff != "" {
					t.Error(diff)
				}
			}},
		{name: "healthz", method: "GET", path: "/healthz", status: 200},
		{name: "readyz", method: "GET", path: "/readyz", status: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := do(t, tc.method, base+tc.path, tc.body)
			if res.status != tc.status {
				t.Fatalf("status = %d, want %d; body %.300s", res.status, tc.status, res.body)
			}
			if res.status != 200 && !strings.HasPrefix(tc.path, "/healthz") {
				if ct := res.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("error Content-Type = %q", ct)
				}
			}
			if tc.check != nil {
				tc.check(t, res.body)
			}
		})
	}
}

func TestRESTPagination(t *testing.T) {
	base := "http://" + startServer(t)
	for range 5 {
		if res := do(t, "POST", base+"/api/v1/workflows/argo", `{"workflow":`+wfJSON("p")+`}`); res.status != 200 {
			t.Fatalf("create: %d %s", res.status, res.body)
		}
	}
	seen := map[string]bool{}
	var pages []int
	cont := ""
	for range 10 {
		res := do(t, "GET", base+"/api/v1/workflows/argo?listOptions.limit=2&listOptions.continue="+cont, "")
		if res.status != 200 {
			t.Fatalf("list: %d %s", res.status, res.body)
		}
		l := decodeInto[v1alpha1.WorkflowList](t, res.body)
		pages = append(pages, len(l.Items))
		for _, wf := range l.Items {
			if seen[wf.Name] {
				t.Errorf("%s listed twice", wf.Name)
			}
			seen[wf.Name] = true
		}
		if cont = l.Continue; cont == "" {
			break
		}
	}
	if diff := cmp.Diff([]int{2, 2, 1}, pages); diff != "" || len(seen) != 5 {
		t.Errorf("pages (-want +got)\n%s; seen %d", diff, len(seen))
	}
	if res := do(t, "GET", base+"/api/v1/workflows/argo?listOptions.continue=garbage", ""); res.status != 400 {
		t.Errorf("bad continue: %d %s", res.status, res.body)
	}
}

func TestGRPC(t *testing.T) {
	addr := startServer(t)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wfc := workflow.NewWorkflowServiceClient(conn)

	var src v1alpha1.Workflow
	if err := json.Unmarshal([]byte(wfJSON("g")), &src); err != nil {
		t.Fatal(err)
	}
	in := &src
	var hdr metadata.MD
	created, err := wfc.CreateWorkflow(ctx, &workflow.WorkflowCreateRequest{Namespace: "ns1", Workflow: in}, grpc.Header(&hdr))
	if err != nil {
		t.Fatal(err)
	}
	if got := hdr.Get("argo-version"); len(got) != 1 || got[0] != "v0.1.0" {
		t.Errorf("argo-version header %v", got)
	}
	wf := *created
	if wf.Namespace != "ns1" || !strings.HasPrefix(wf.Name, "hello-") {
		t.Fatalf("created %+v", wf.ObjectMeta)
	}

	tests := []struct {
		name string
		call func() (any, error)
		code codes.Code
		want func(t *testing.T, v any)
	}{
		{name: "get", call: func() (any, error) {
			return wfc.GetWorkflow(ctx, &workflow.WorkflowGetRequest{Namespace: "ns1", Name: wf.Name})
		}, want: func(t *testing.T, v any) {
			got := v.(*v1alpha1.Workflow)
			if got.UID != wf.UID || got.Spec.Templates[0].Container.Image != "alpine" {
				t.Errorf("got %+v", got.ObjectMeta)
			}
		}},
		{name: "get missing", call: func() (any, error) {
			return wfc.GetWorkflow(ctx, &workflow.WorkflowGetRequest{Namespace: "ns1", Name: "missing"})
		}, code: codes.NotFound},
		{name: "list", call: func() (any, error) {
			return wfc.ListWorkflows(ctx, &workflow.WorkflowListRequest{Namespace: "ns1", ListOptions: &metav1.ListOptions{LabelSelector: "app=g"}})
		}, want: func(t *testing.T, v any) {
			l := v.(*v1alpha1.WorkflowList)
			if len(l.Items) != 1 || l.Items[0].Name != wf.Name {
				t.Errorf("list %+v", l.Items)
			}
		}},
		{name: "list all namespaces", call: func() (any, error) {
			return wfc.ListWorkflows(ctx, &workflow.WorkflowListRequest{})
		}, want: func(t *testing.T, v any) {
			if n := len(v.(*v1alpha1.WorkflowList).Items); n != 1 {
				t.Errorf("%d items", n)
			}
		}},
		{name: "create invalid", call: func() (any, error) {
			bad := &v1alpha1.Workflow{}
			bad.Name = "x"
			return wfc.CreateWorkflow(ctx, &workflow.WorkflowCreateRequest{Namespace: "ns1", Workflow: bad})
		}, code: codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.call()
			if status.Code(err) != tc.code {
				t.Fatalf("code = %v, want %v (%v)", status.Code(err), tc.code, err)
			}
			if tc.want != nil {
				tc.want(t, got)
			}
		})
	}

	v, err := info.NewInfoServiceClient(conn).GetVersion(ctx, &info.GetVersionRequest{})
	if err != nil || v.Version != "v0.1.0" {
		t.Errorf("GetVersion = %v, %v", v, err)
	}
	if _, err := wfc.DeleteWorkflow(ctx, &workflow.WorkflowDeleteRequest{Namespace: "ns1", Name: wf.Name}); err != nil {
		t.Fatal(err)
	}
	if _, err := wfc.GetWorkflow(ctx, &workflow.WorkflowGetRequest{Namespace: "ns1", Name: wf.Name}); status.Code(err) != codes.NotFound {
		t.Errorf("get after delete: %v", err)
	}
}

func TestFilterFields(t *testing.T) {
	obj := func() map[string]any {
		return map[string]any{
			"metadata": map[string]any{"continue": "x"},
			"items": []any{
				map[string]any{"metadata": map[string]any{"name": "a", "uid": "1"}, "status": map[string]any{"phase": "Running", "nodes": map[string]any{}}},
				map[string]any{"metadata": map[string]any{"name": "b", "uid": "2"}, "status": map[string]any{"phase": "Failed"}},
			},
		}
	}
	tests := []struct {
		name, fields string
		want         map[string]any
	}{
		{"keep", "metadata,items.metadata.name,items.status.phase", map[string]any{
			"metadata": map[string]any{"continue": "x"},
			"items": []any{
				map[string]any{"metadata": map[string]any{"name": "a"}, "status": map[string]any{"phase": "Running"}},
				map[string]any{"metadata": map[string]any{"name": "b"}, "status": map[string]any{"phase": "Failed"}},
			}}},
		{"keep, shorter path wins", "items.metadata,items.metadata.name", map[string]any{
			"items": []any{
				map[string]any{"metadata": map[string]any{"name": "a", "uid": "1"}},
				map[string]any{"metadata": map[string]any{"name": "b", "uid": "2"}},
			}}},
		{"drop", "-items.status.nodes,items.metadata.uid", map[string]any{
			"metadata": map[string]any{"continue": "x"},
			"items": []any{
				map[string]any{"metadata": map[string]any{"name": "a"}, "status": map[string]any{"phase": "Running"}},
				map[string]any{"metadata": map[string]any{"name": "b"}, "status": map[string]any{"phase": "Failed"}},
			}}},
		{"missing path", "spec.x", map[string]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, filterFields(obj(), tc.fields)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestHTTPStatus(t *testing.T) {
	want := map[codes.Code]int{0: 200, 1: 408, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400,
		10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401}
	for c, h := range want {
		if got := httpStatus(c); got != h {
			t.Errorf("httpStatus(%v) = %d, want %d", c, got, h)
		}
	}
}

func TestNewRequiresStore(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a store: want an error")
	}
}
