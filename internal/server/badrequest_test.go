package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// okSpec is a valid workflow spec; bad requests vary one thing around it.
const okSpec = `{"entrypoint":"main","templates":[{"name":"main","container":{"image":"alpine","command":["true"]}}]}`

func createBody(meta, spec string) string {
	return `{"workflow":{"metadata":` + meta + `,"spec":` + spec + `}}`
}

// storeSnapshot is every stored object of the kinds a request may write,
// with its resourceVersion: a request that changes nothing leaves it equal.
func storeSnapshot(t *testing.T, st *sqlite.Store) string {
	t.Helper()
	var b strings.Builder
	for _, k := range []store.Kind{store.KindWorkflow, store.KindWorkflowTemplate, store.KindClusterWorkflowTemplate, store.KindCronWorkflow} {
		objs, _, err := st.List(context.Background(), k, "", store.ListOptions{})
		if err != nil {
			t.Fatalf("list %s: %v", k, err)
		}
		for _, o := range objs {
			fmt.Fprintf(&b, "%s %s/%s rv=%s\n", k, o.GetNamespace(), o.GetName(), o.GetResourceVersion())
		}
	}
	return b.String()
}

// seedBadRequestStore stores what the bad requests refer to: a Running
// workflow with a Running pod node, a Succeeded and a Failed one, and a
// WorkflowTemplate.
func seedBadRequestStore(t testing.TB, st *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	now := metav1.NewTime(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name  string
		phase v1alpha1.WorkflowPhase
	}{{"running", v1alpha1.WorkflowRunning}, {"done", v1alpha1.WorkflowSucceeded}, {"failed", v1alpha1.WorkflowFailed}} {
		wf := &v1alpha1.Workflow{}
		if err := json.Unmarshal([]byte(`{"metadata":{"name":"`+tc.name+`","namespace":"argo"},"spec":`+okSpec+`}`), wf); err != nil {
			t.Fatal(err)
		}
		wf.Status.Phase = tc.phase
		wf.Status.StartedAt = now
		node := v1alpha1.NodeStatus{ID: tc.name, Name: tc.name, DisplayName: tc.name, Type: v1alpha1.NodeTypePod,
			TemplateName: "main", Phase: v1alpha1.NodeRunning, StartedAt: now}
		if tc.phase != v1alpha1.WorkflowRunning {
			wf.Status.FinishedAt = now
			node.Phase, node.FinishedAt = v1alpha1.NodePhase(tc.phase), now
			wf.Labels = map[string]string{"workflows.argoproj.io/completed": "true"}
		}
		wf.Status.Nodes = v1alpha1.Nodes{tc.name: node}
		if err := st.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	tmpl := &v1alpha1.WorkflowTemplate{}
	if err := json.Unmarshal([]byte(`{"metadata":{"name":"tmpl","namespace":"argo"},"spec":`+okSpec+`}`), tmpl); err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, tmpl); err != nil {
		t.Fatal(err)
	}
}

// badServer is a server with the default request limit on a seeded store,
// without a controller: nothing changes the store but the requests.
func badServer(t testing.TB) (*Server, *sqlite.Store) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	seedBadRequestStore(t, st)
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion,
		StepLogs: fileLogs(func(ns, wf, pod string) string { return filepath.Join(dir, "logs", ns, wf, pod) })})
	if err != nil {
		t.Fatal(err)
	}
	return srv, st
}

type badCase struct {
	name, method, path, body string
	status                   int
	code                     codes.Code
	// message must contain every one of these (case-insensitive).
	message []string
}

func badRequests() []badCase {
	const api = "/api/v1/workflows/argo"
	return append([]badCase{
		{"malformed JSON", "POST", api, `{"workflow":`, 400, codes.InvalidArgument, []string{"request body is not valid JSON", "unexpected EOF"}},
		{"YAML body", "POST", api, "workflow:\n  metadata:\n    name: y\n", 400, codes.InvalidArgument, []string{"request body is not valid JSON", "invalid character 'w'"}},
		{"unknown spec field", "POST", api,
			createBody(`{"name":"typo"}`, `{"entrypointt":"main","templates":[{"name":"main","container":{"image":"alpine"}}]}`),
			400, codes.InvalidArgument, []string{"entrypointt"}},
		{"spec is a string", "POST", api, createBody(`{"name":"x"}`, `"x"`), 400, codes.InvalidArgument, []string{"spec"}},
		{"workflow is a string", "POST", api, `{"workflow":"x"}`, 400, codes.InvalidArgument, []string{"request body is not valid JSON", "cannot unmarshal string", "workflow"}},
		{"20 MB body", "POST", api, createBody(`{"name":"big","annotations":{"a":"`+strings.Repeat("x", 20<<20)+`"}}`, okSpec),
			413, codes.ResourceExhausted, []string{"Request entity too large: limit is 3145728"}},
		{"body of 3 MiB and a byte", "POST", api, createBody(`{"name":"big","annotations":{"a":"`+strings.Repeat("x", 3<<20)+`"}}`, okSpec),
			413, codes.ResourceExhausted, []string{"Request entity too large: limit is 3145728"}},
		{"template of 3 MiB", "POST", "/api/v1/workflow-templates/argo", `{"template":` + createBody(`{"name":"big"}`,
			`{"entrypoint":"main","templates":[{"name":"main","script":{"image":"alpine","source":"`+strings.Repeat("x", 3<<20)+`"}}]}`)[len(`{"workflow":`):],
			413, codes.ResourceExhausted, []string{"Request entity too large: limit is 3145728"}},
		{"upper-case name", "POST", api, createBody(`{"name":"Hello"}`, okSpec), 400, codes.InvalidArgument, []string{"metadata.name", `"Hello"`}},
		{"name too long", "POST", api, createBody(`{"name":"`+strings.Repeat("a", 254)+`"}`, okSpec), 400, codes.InvalidArgument,
			[]string{"metadata.name", "253"}},
		{"bad generateName", "POST", api, createBody(`{"generateName":"Hello_"}`, okSpec), 400, codes.InvalidArgument,
			[]string{"metadata.generateName", `"Hello_"`}},
		{"no name", "POST", api, createBody(`{}`, okSpec), 400, codes.InvalidArgument, []string{"metadata.name"}},
		{"templateRef to a missing WorkflowTemplate", "POST", api,
			createBody(`{"name":"ref"}`, `{"entrypoint":"main","templates":[{"name":"main","steps":[[{"name":"a","templateRef":{"name":"nope","template":"main"}}]]}]}`),
			400, codes.InvalidArgument, []string{"nope"}},
		{"workflowTemplateRef to a missing template", "POST", api,
			createBody(`{"name":"wtref"}`, `{"workflowTemplateRef":{"name":"nope"}}`), 400, codes.InvalidArgument, []string{"nope"}},

		{"get missing", "GET", api + "/missing", "", 404, codes.NotFound, []string{`"missing" not found`}},
		{"delete missing", "DELETE", api + "/missing", "", 404, codes.NotFound, []string{`"missing" not found`}},
		{"retry missing", "PUT", api + "/missing/retry", `{}`, 404, codes.NotFound, []string{`"missing" not found`}},
		{"resubmit missing", "PUT", api + "/missing/resubmit", `{}`, 404, codes.NotFound, []string{`"missing" not found`}},
		{"suspend missing", "PUT", api + "/missing/suspend", `{}`, 404, codes.NotFound, []string{`"missing" not found`}},
		{"resume missing", "PUT", api + "/missing/resume", `{}`, 404, codes.NotFound, []string{`"missing" not found`}},
		{"stop missing", "PUT", api + "/missing/stop", `{}`, 404, codes.NotFound, []string{`"missing" not found`}},
		{"terminate missing", "PUT", api + "/missing/terminate", `{}`, 404, codes.NotFound, []string{`"missing" not found`}},
		{"set missing", "PUT", api + "/missing/set", `{"nodeFieldSelector":"name=x","phase":"Succeeded"}`, 404, codes.NotFound, []string{`"missing" not found`}},
		{"logs missing", "GET", api + "/missing/log?logOptions.container=main", "", 404, codes.NotFound, []string{`"missing" not found`}},
		{"logs missing, SSE", "GET", api + "/missing/log?logOptions.container=main&logOptions.follow=true", "", 404, codes.NotFound, []string{`"missing" not found`}},
		{"@latest in an empty namespace", "GET", "/api/v1/workflows/empty/@latest", "", 404, codes.NotFound, []string{"no workflows found"}},

		{"invalid node field selector", "PUT", api + "/running/stop", `{"nodeFieldSelector":"color=blue"}`, 400, codes.InvalidArgument, []string{"color"}},
		{"malformed node field selector", "PUT", api + "/running/set", `{"nodeFieldSelector":"displayName","phase":"Failed"}`, 400, codes.InvalidArgument, []string{"displayName"}},
		{"retry a Running workflow", "PUT", api + "/running/retry", `{}`, 400, codes.FailedPrecondition, []string{"running"}},
		{"resubmit --memoized a Running workflow", "PUT", api + "/running/resubmit", `{"memoized":true}`, 400, codes.FailedPrecondition, []string{"memoized"}},
		{"suspend a finished workflow", "PUT", api + "/done/suspend", `{}`, 400, codes.FailedPrecondition, []string{"completed"}},
		{"retry with an undeclared parameter", "PUT", api + "/failed/retry", `{"parameters":["nope=1"]}`, 400, codes.InvalidArgument, []string{"nope"}},
		{"set bad outputParameters", "PUT", api + "/running/set", `{"nodeFieldSelector":"name=running","outputParameters":"[1]"}`, 400, codes.InvalidArgument, []string{"outputParameters"}},

		{"submit bad resourceKind", "POST", api + "/submit", `{"resourceKind":"Pod","resourceName":"tmpl"}`, 400, codes.InvalidArgument, []string{`"Pod"`}},
		{"submit missing template", "POST", api + "/submit", `{"resourceKind":"WorkflowTemplate","resourceName":"nope"}`, 404, codes.NotFound, []string{`"nope" not found`}},
		{"submit missing cron workflow", "POST", api + "/submit", `{"resourceKind":"cronwf","resourceName":"nope"}`, 404, codes.NotFound, []string{`"nope" not found`}},
		{"submit bad parameter", "POST", api + "/submit", `{"resourceKind":"wftmpl","resourceName":"tmpl","submitOptions":{"parameters":["novalue"]}}`, 400, codes.InvalidArgument, []string{"novalue"}},

		{"list non-integer continue", "GET", api + "?listOptions.continue=abc", "", 400, codes.InvalidArgument, []string{"continue"}},
		{"list negative limit", "GET", api + "?listOptions.limit=-1", "", 400, codes.InvalidArgument, []string{"limit"}},
		{"list non-numeric limit", "GET", api + "?listOptions.limit=ten", "", 400, codes.InvalidArgument, []string{"limit"}},
		{"list bad label selector", "GET", api + "?listOptions.labelSelector=a%3D%3D%3Db", "", 400, codes.InvalidArgument, []string{"a===b"}},
		{"list unsupported field selector", "GET", api + "?listOptions.fieldSelector=spec.color%3Dblue", "", 400, codes.InvalidArgument, []string{"spec.color"}},
	}, escapedPathRequests()...)
}

// escapedPathRequests put escaped reserved characters in the path of every
// API prefix. A %2F is part of its segment (a name "a/b"), never a
// separator that could select another route; a path that matches no route
// because of one is a 404 that says so, never the 501 of a missing route.
func escapedPathRequests() []badCase {
	const api = "/api/v1/workflows/argo"
	notFound := func(name, method, path, what string) badCase {
		return badCase{name, method, path, "", 404, codes.NotFound, []string{what, "not found"}}
	}
	noRoute := func(name, method, path string) badCase {
		return badCase{name, method, path, "", 404, codes.NotFound, []string{"no route matches " + method, "%2F"}}
	}
	return []badCase{
		notFound("%2F in a name", "GET", api+"/a%2Fb", `"a/b"`),
		notFound("lower-case %2f in a name", "GET", api+"/a%2fb", `"a/b"`),
		notFound("%2F does not reach the log route", "GET", api+"/done%2Flog", `"done/log"`),
		notFound("%2F..%2F climbs nowhere", "GET", api+"/..%2F..%2F..%2Fetc%2Fpasswd", `"../../../etc/passwd"`),
		notFound("encoded dots", "GET", api+"/%2E%2E", `".."`),
		notFound("%00 in a name", "GET", api+"/a%00b", `"a\x00b"`),
		notFound("a double-escaped %2F", "GET", api+"/%252F", `"%2F"`),
		notFound("%2F in a deleted name", "DELETE", api+"/running%2F..", `"running/.."`),
		notFound("%2F in the pod of a log", "GET", api+"/missing/a%2Fb/log", `"missing"`),
		notFound("%2F in a template name", "GET", "/api/v1/workflow-templates/argo/tmpl%2Fx", `"tmpl/x"`),
		notFound("%2F in a cluster template name", "DELETE", "/api/v1/cluster-workflow-templates/a%2Fb", `"a/b"`),
		notFound("%2F in a cron workflow name", "GET", "/api/v1/cron-workflows/argo/a%2Fb", `"a/b"`),
		notFound("%2F in a cron workflow action", "PUT", "/api/v1/cron-workflows/argo/a%2Fb/suspend", `"a/b"`),
		notFound("%2F in an archived uid", "GET", "/api/v1/archived-workflows/a%2Fb", `"a/b"`),
		notFound("%2F in an archived retry", "PUT", "/api/v1/archived-workflows/a%2Fb/retry", `"a/b"`),
		notFound("%2F in an event binding", "DELETE", "/api/v1/workflow-event-bindings/argo/a%2Fb", `"a/b"`),
		noRoute("%2F after the log route", "GET", api+"/done/log%2F"),
		noRoute("%2F before an action", "PUT", api+"/running%2Fstop"),
		noRoute("%2F after lint", "POST", api+"/lint%2F"),
		noRoute("%2F after info", "GET", "/api/v1/info%2Fx"),
		noRoute("%2F after version", "GET", "/api/v1/version%2F"),
		noRoute("%2F..%2F after userinfo", "GET", "/api/v1/userinfo%2F..%2F"),
		noRoute("%2F after label keys", "GET", "/api/v1/archived-workflows-label-keys%2F"),
		{"an escaped letter of a fixed segment", "GET", "/api/v1/workflow%73/argo", "", 404, codes.NotFound, []string{"no route matches GET", "%73"}},
		{"encoded dots as a segment", "GET", "/api/v1/%2E%2E/v1/info", "", 404, codes.NotFound, []string{"no route matches GET", "%2E%2E"}},
	}
}

// Every bad request gets a 4xx with Argo's error JSON naming what is
// wrong, and changes nothing in the store.
func TestBadRequestsREST(t *testing.T) {
	srv, st := badServer(t)
	h := srv.Handler()
	before := storeSnapshot(t, st)
	for _, tc := range badRequests() {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://127.0.0.1"+tc.path, strings.NewReader(tc.body))
			if strings.Contains(tc.name, "SSE") {
				req.Header.Set("Accept", "text/event-stream")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			body := rec.Body.Bytes()
			if rec.Code != tc.status {
				t.Errorf("status = %d, want %d; body %.300s", rec.Code, tc.status, body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			var e struct {
				Code    *int    `json:"code"`
				Message *string `json:"message"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Code == nil || e.Message == nil {
				t.Fatalf("body is not {\"code\",\"message\"}: %v: %.300s", err, body)
			}
			if codes.Code(*e.Code) != tc.code {
				t.Errorf("code = %d, want %d (%v); message %q", *e.Code, tc.code, tc.code, *e.Message)
			}
			for _, m := range tc.message {
				if !strings.Contains(strings.ToLower(*e.Message), strings.ToLower(m)) {
					t.Errorf("message %q does not name %q", *e.Message, m)
				}
			}
			if after := storeSnapshot(t, st); after != before {
				t.Fatalf("the store changed:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// serveOn serves srv on 127.0.0.1:0 until the test ends.
func serveOn(t *testing.T, srv *Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return l.Addr().String()
}

// The same mistakes over gRPC get the codes the REST bodies carry.
func TestBadRequestsGRPC(t *testing.T) {
	srv, st := badServer(t)
	conn, err := grpc.NewClient(serveOn(t, srv), grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wfc := workflow.NewWorkflowServiceClient(conn)
	wfStruct := func(js string) *v1alpha1.Workflow {
		wf := &v1alpha1.Workflow{}
		if err := json.Unmarshal([]byte(js), wf); err != nil {
			t.Fatal(err)
		}
		return wf
	}
	byName := map[string]badCase{}
	for _, tc := range badRequests() {
		byName[tc.name] = tc
	}
	tests := []struct {
		rest string // the REST case this mirrors
		call func() error
	}{
		{"upper-case name", func() error {
			_, err := wfc.CreateWorkflow(ctx, &workflow.WorkflowCreateRequest{Namespace: "argo",
				Workflow: wfStruct(`{"metadata":{"name":"Hello"},"spec":` + okSpec + `}`)})
			return err
		}},
		{"get missing", func() error {
			_, err := wfc.GetWorkflow(ctx, &workflow.WorkflowGetRequest{Namespace: "argo", Name: "missing"})
			return err
		}},
		{"terminate missing", func() error {
			_, err := wfc.TerminateWorkflow(ctx, &workflow.WorkflowTerminateRequest{Namespace: "argo", Name: "missing"})
			return err
		}},
		{"invalid node field selector", func() error {
			_, err := wfc.StopWorkflow(ctx, &workflow.WorkflowStopRequest{Namespace: "argo", Name: "running", NodeFieldSelector: "color=blue"})
			return err
		}},
		{"retry a Running workflow", func() error {
			_, err := wfc.RetryWorkflow(ctx, &workflow.WorkflowRetryRequest{Namespace: "argo", Name: "running"})
			return err
		}},
		{"submit bad resourceKind", func() error {
			_, err := wfc.SubmitWorkflow(ctx, &workflow.WorkflowSubmitRequest{Namespace: "argo", ResourceKind: "Pod", ResourceName: "tmpl"})
			return err
		}},
		{"submit missing template", func() error {
			_, err := wfc.SubmitWorkflow(ctx, &workflow.WorkflowSubmitRequest{Namespace: "argo", ResourceKind: "WorkflowTemplate", ResourceName: "nope"})
			return err
		}},
		{"list non-integer continue", func() error {
			_, err := wfc.ListWorkflows(ctx, &workflow.WorkflowListRequest{Namespace: "argo", ListOptions: &metav1.ListOptions{Continue: "abc"}})
			return err
		}},
		{"logs missing", func() error {
			stream, err := wfc.WorkflowLogs(ctx, &workflow.WorkflowLogRequest{Namespace: "argo", Name: "missing"})
			if err != nil {
				return err
			}
			_, err = stream.Recv()
			return err
		}},
	}
	before := storeSnapshot(t, st)
	for _, tc := range tests {
		t.Run(tc.rest, func(t *testing.T) {
			want, ok := byName[tc.rest]
			if !ok {
				t.Fatalf("no REST case %q", tc.rest)
			}
			err := tc.call()
			if got := status.Code(err); got != want.code {
				t.Errorf("code = %v, want %v as over REST (%v)", got, want.code, err)
			}
			for _, m := range want.message {
				if !strings.Contains(strings.ToLower(status.Convert(err).Message()), strings.ToLower(m)) {
					t.Errorf("message %q does not name %q", status.Convert(err).Message(), m)
				}
			}
			if after := storeSnapshot(t, st); after != before {
				t.Fatalf("the store changed:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// FuzzCreateWorkflow posts arbitrary bodies to the create route: whatever
// the body, the answer is a 200 with a named Workflow or an error JSON with
// a 4xx, never a panic, and a 5xx only for a failure of the store.
func FuzzCreateWorkflow(f *testing.F) {
	for _, seed := range []string{
		`{"workflow":` + wfJSON("fuzz") + `}`,
		`{"namespace":"argo","workflow":` + stepsJSON(`"generateName":"steps-"`) + `}`,
		`{"workflow":` + suspendJSON("s") + `,"createOptions":{"dryRun":["All"]}}`,
		`{"workflow":` + wfJSON("x") + `,"serverDryRun":true}`,
		createBody(`{"name":"dag"}`, `{"entrypoint":"d","templates":[{"name":"d","dag":{"tasks":[{"name":"a","template":"c"},{"name":"b","depends":"a","template":"c"}]}},{"name":"c","script":{"image":"python","source":"print(1)"}}]}`),
		createBody(`{"name":"loop"}`, `{"entrypoint":"m","templates":[{"name":"m","steps":[[{"name":"s","template":"m","withItems":[1,2],"when":"{{item}} > 1"}]]}]}`),
		createBody(`{"name":"tref"}`, `{"workflowTemplateRef":{"name":"tmpl"}}`),
		``, `{}`, `null`, `[]`, `{"workflow":null}`, `{"workflow":{}}`, `{"workflow":{"kind":"Pod"}}`,
		`{"workflow":{"metadata":{"name":"x","namespace":"other"},"spec":` + okSpec + `}}`,
	} {
		f.Add(seed)
	}
	for _, tc := range badRequests() {
		if tc.method == "POST" && tc.path == "/api/v1/workflows/argo" && len(tc.body) < 1<<16 {
			f.Add(tc.body)
		}
	}
	srv, _ := badServer(f)
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "http://127.0.0.1/api/v1/workflows/argo", strings.NewReader(body)))
		if rec.Code == 200 {
			var wf v1alpha1.Workflow
			if err := json.Unmarshal(rec.Body.Bytes(), &wf); err != nil || wf.Name == "" || wf.Namespace == "" {
				t.Fatalf("200 without a named Workflow (%v): %.500s", err, rec.Body.Bytes())
			}
			return
		}
		var e errorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Message == "" {
			t.Fatalf("status %d without {\"code\",\"message\"} (%v): %.500s", rec.Code, err, rec.Body.Bytes())
		}
		if httpStatus(e.Code) != rec.Code && (rec.Code != 413 || e.Code != codes.ResourceExhausted) {
			t.Errorf("status %d does not match code %d", rec.Code, e.Code)
		}
		if rec.Code >= 500 && !strings.HasPrefix(e.Message, "store: ") {
			t.Fatalf("status %d for a request body: %s\nbody: %.500q", rec.Code, e.Message, body)
		}
		if rec.Code < 400 {
			t.Fatalf("status %d: %.500s", rec.Code, rec.Body.Bytes())
		}
	})
}
