package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/info"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// authEnv is a server in client mode with named tokens, a workflow with an
// artifact in namespace b, and an archived workflow in b.
type authEnv struct {
	addr     string
	st       *sqlite.Store
	logins   *auth.LoginCodes
	tok      map[string]string // name -> Authorization value
	archived string            // uid of the archived workflow in b
}

const evilOrigin = "http://evil.example"

func newAuthEnv(t *testing.T) *authEnv {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	clock := func() time.Time { return now }
	tokens, err := auth.OpenTokens(dir, func() time.Time { return clock() })
	if err != nil {
		t.Fatal(err)
	}
	e := &authEnv{tok: map[string]string{}, logins: auth.NewLoginCodes(nil)}
	if e.tok["local"], err = tokens.EnsureLocal(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, ttl time.Duration, tk auth.Token) {
		tk.Name = name
		if e.tok[name], err = tokens.Create(tk, ttl); err != nil {
			t.Fatal(err)
		}
	}
	mk("reader-a", 0, auth.Token{Grant: auth.Grant{Namespaces: []string{"a"}, Verbs: []string{"get", "list", "watch"}}})
	mk("writer-a", 0, auth.Token{Grant: auth.Grant{Namespaces: []string{"a"}, Verbs: []string{"*"}}})
	mk("cluster-reader", 0, auth.Token{Grant: auth.Grant{Cluster: true, Verbs: []string{"get", "list"}}})
	mk("expired", time.Minute, auth.Token{Grant: auth.Grant{Namespaces: []string{"*"}, Verbs: []string{"*"}}})
	mk("revoked", 0, auth.Token{Grant: auth.Grant{Namespaces: []string{"*"}, Verbs: []string{"*"}}})
	if err := tokens.Revoke("revoked"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute) // "expired" has expired
	gk, err := auth.NewGatekeeper(auth.Config{Modes: []auth.Mode{auth.ModeClient}, Client: tokens})
	if err != nil {
		t.Fatal(err)
	}
	e.addr, e.st = startServerStore(t, Options{Auth: gk, HTTPAuth: auth.HTTPConfig{Logins: e.logins},
		Browser:   auth.BrowserConfig{AllowedOrigins: []string{"https://ui.example"}},
		Artifacts: &artifact.Drivers{File: file.New(dir)}, KeepAlive: 50 * time.Millisecond})
	ctx := context.Background()
	wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "secret-wf"}}
	wf.Spec.Entrypoint = "main"
	wf.Status.Nodes = v1alpha1.Nodes{"n": {ID: "n", Name: "n", Type: v1alpha1.NodeTypePod,
		Outputs: &v1alpha1.Outputs{Artifacts: []v1alpha1.Artifact{{Name: "out",
			ArtifactLocation: v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: "x"}}}}}}}
	if err := e.st.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	old := wf.DeepCopy()
	old.Name, old.UID = "old-wf", "0b6f6c9e-1d3a-4c6b-9d59-2f7a3c1e8a10"
	old.Status.Phase = v1alpha1.WorkflowSucceeded
	old.Status.FinishedAt = metav1.Now()
	if err := e.st.Archive(ctx, old); err != nil {
		t.Fatal(err)
	}
	e.archived = string(old.UID)
	return e
}

type authReq struct {
	method, path, cred, body string
	header                   map[string]string
}

func (e *authEnv) do(t *testing.T, r authReq) response {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, "http://"+e.addr+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.cred != "" {
		req.Header.Set("Authorization", r.cred)
	}
	for k, v := range r.header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
	defer cancel()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b []byte
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b = []byte("(stream)") // a stream stays open: its status is what counts
	} else if b, err = io.ReadAll(res.Body); err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// TestAuthREST: every HTTP handler behind one authenticator and
// authorizer, and the browser protections.
func TestAuthREST(t *testing.T) {
	e := newAuthEnv(t)
	reader, writer, local := e.tok["reader-a"], e.tok["writer-a"], e.tok["local"]
	wf := `{"workflow":` + wfJSON("x") + `}`
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("reader-a:"+strings.TrimPrefix(reader, "Bearer ")))
	tests := []struct {
		name   string
		req    authReq
		status int
		want   string // in the body
	}{
		{"no token", authReq{method: "GET", path: "/api/v1/workflows/a"}, 401, `"code":16`},
		{"bearer garbage", authReq{method: "GET", path: "/api/v1/workflows/a", cred: "Bearer garbage"}, 401, "unknown or revoked"},
		{"basic garbage", authReq{method: "GET", path: "/api/v1/workflows/a", cred: "Basic garbage"}, 401, "malformed Basic"},
		{"unknown scheme", authReq{method: "GET", path: "/api/v1/workflows/a", cred: "Token x"}, 401, "auth modes: client"},
		{"expired token", authReq{method: "GET", path: "/api/v1/workflows/a", cred: e.tok["expired"]}, 401, `token \"expired\" expired`},
		{"revoked token", authReq{method: "GET", path: "/api/v1/workflows/a", cred: e.tok["revoked"]}, 401, "unknown or revoked"},
		{"version needs a token", authReq{method: "GET", path: "/api/v1/version"}, 401, `"code":16`},
		{"version with a token", authReq{method: "GET", path: "/api/v1/version", cred: reader}, 200, "v0.1.0"},
		{"userinfo", authReq{method: "GET", path: "/api/v1/userinfo", cred: reader}, 200, `"serviceAccountName":"reader-a"`},
		{"local token lists b", authReq{method: "GET", path: "/api/v1/workflows/b", cred: local}, 200, "secret-wf"},
		{"basic credential", authReq{method: "GET", path: "/api/v1/workflows/a", cred: basic}, 200, ""},
		{"cookie credential", authReq{method: "GET", path: "/api/v1/workflows/a", header: map[string]string{"Cookie": "authorization=" + url.QueryEscape(reader)}}, 200, ""},
		{"list in own namespace", authReq{method: "GET", path: "/api/v1/workflows/a", cred: reader}, 200, ""},
		{"list elsewhere", authReq{method: "GET", path: "/api/v1/workflows/b", cred: reader}, 403, `not allowed to list workflows in namespace \"b\"`},
		{"list every namespace", authReq{method: "GET", path: "/api/v1/workflows/", cred: reader}, 403, "in all namespaces"},
		{"get elsewhere", authReq{method: "GET", path: "/api/v1/workflows/b/secret-wf", cred: reader}, 403, `"code":7`},
		{"create without the verb", authReq{method: "POST", path: "/api/v1/workflows/a", cred: reader, body: wf}, 403, "create workflows"},
		{"create in own namespace", authReq{method: "POST", path: "/api/v1/workflows/a", cred: writer, body: wf}, 200, `"namespace":"a"`},
		{"create elsewhere", authReq{method: "POST", path: "/api/v1/workflows/b", cred: writer, body: wf}, 403, `namespace \"b\"`},
		{"delete elsewhere", authReq{method: "DELETE", path: "/api/v1/workflows/b/secret-wf", cred: writer}, 403, "delete workflows"},
		{"action elsewhere", authReq{method: "PUT", path: "/api/v1/workflows/b/secret-wf/terminate", cred: writer, body: "{}"}, 403, "terminate workflows"},
		{"action without the verb", authReq{method: "PUT", path: "/api/v1/workflows/a/x/retry", cred: reader, body: "{}"}, 403, "retry workflows"},
		{"watch elsewhere", authReq{method: "GET", path: "/api/v1/workflow-events/b", cred: reader}, 403, "watch workflows"},
		{"watch own namespace", authReq{method: "GET", path: "/api/v1/workflow-events/a", cred: reader, header: map[string]string{"Accept": "text/event-stream"}}, 200, "(stream)"},
		{"logs elsewhere", authReq{method: "GET", path: "/api/v1/workflows/b/secret-wf/log", cred: reader}, 403, "get logs"},
		{"template elsewhere", authReq{method: "GET", path: "/api/v1/workflow-templates/b", cred: reader}, 403, "list workflowtemplates"},
		{"cron elsewhere", authReq{method: "GET", path: "/api/v1/cron-workflows/b", cred: reader}, 403, "list cronworkflows"},
		{"bindings elsewhere", authReq{method: "GET", path: "/api/v1/workflow-event-bindings/b", cred: reader}, 403, "list workfloweventbindings"},
		{"cluster kind without cluster scope", authReq{method: "GET", path: "/api/v1/cluster-workflow-templates", cred: reader}, 403, "at the cluster scope"},
		{"cluster kind with cluster scope", authReq{method: "GET", path: "/api/v1/cluster-workflow-templates", cred: e.tok["cluster-reader"]}, 200, ""},
		{"cluster create without the verb", authReq{method: "POST", path: "/api/v1/cluster-workflow-templates", cred: e.tok["cluster-reader"], body: "{}"}, 403, "create clusterworkflowtemplates"},
		{"archive elsewhere", authReq{method: "GET", path: "/api/v1/archived-workflows?namespace=b", cred: reader}, 403, "list archivedworkflows"},
		{"archive every namespace", authReq{method: "GET", path: "/api/v1/archived-workflows", cred: reader}, 403, "in all namespaces"},
		{"archived by uid elsewhere", authReq{method: "GET", path: "/api/v1/archived-workflows/" + e.archived, cred: reader}, 403, `namespace \"b\"`},
		{"archived by uid, allowed", authReq{method: "GET", path: "/api/v1/archived-workflows/" + e.archived, cred: local}, 200, "old-wf"},
		{"event elsewhere", authReq{method: "POST", path: "/api/v1/events/b/d", cred: writer, body: "{}"}, 403, "create events"},
		{"event in own namespace", authReq{method: "POST", path: "/api/v1/events/a/d", cred: writer, body: "{}"}, 200, "{}"},
		{"event over 2 MB", authReq{method: "POST", path: "/api/v1/events/a/d", cred: writer, body: `{"x":"` + strings.Repeat("x", 2<<20) + `"}`}, 400, "larger than"},
		{"artifact no token", authReq{method: "GET", path: "/artifacts/b/secret-wf/n/out"}, 401, "token not valid"},
		{"artifact elsewhere", authReq{method: "GET", path: "/artifacts/b/secret-wf/n/out", cred: reader}, 403, "get workflows"},
		{"input artifact elsewhere", authReq{method: "GET", path: "/input-artifacts/b/secret-wf/n/out", cred: reader}, 403, "get workflows"},
		{"artifact file elsewhere", authReq{method: "GET", path: "/artifact-files/b/workflows/secret-wf/n/outputs/out", cred: reader}, 403, "get workflows"},
		{"artifact by uid elsewhere", authReq{method: "GET", path: "/artifacts-by-uid/" + e.archived + "/n/out", cred: reader}, 403, "get workflows"},
		{"healthz is public", authReq{method: "GET", path: "/healthz"}, 200, "ok"},
		{"cross-origin text/plain POST", authReq{method: "POST", path: "/api/v1/workflows/a", cred: writer, body: wf,
			header: map[string]string{"Origin": evilOrigin, "Content-Type": "text/plain"}}, 403, "cross-origin"},
		{"cross-site fetch", authReq{method: "POST", path: "/api/v1/workflows/a", cred: writer, body: wf,
			header: map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}}, 403, "cross-origin"},
		{"same-origin text/plain", authReq{method: "POST", path: "/api/v1/workflows/a", cred: writer, body: wf,
			header: map[string]string{"Content-Type": "text/plain"}}, 415, "application/json"},
		{"form POST", authReq{method: "POST", path: "/api/v1/workflows/a", cred: writer, body: "a=b",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, "not accepted"},
		{"multipart POST", authReq{method: "POST", path: "/api/v1/workflows/a", cred: writer, body: "--x--",
			header: map[string]string{"Content-Type": "multipart/form-data; boundary=x"}}, 415, "not accepted"},
		{"rebinding Host", authReq{method: "GET", path: "/api/v1/workflows/a", cred: reader, header: map[string]string{"Host": "evil.example:2746"}}, 403, "host"},
		{"localhost Host", authReq{method: "GET", path: "/api/v1/workflows/a", cred: reader, header: map[string]string{"Host": "localhost:2746"}}, 200, ""},
		{"preflight from elsewhere", authReq{method: "OPTIONS", path: "/api/v1/workflows/a",
			header: map[string]string{"Origin": evilOrigin, "Access-Control-Request-Method": "POST"}}, 403, "preflight"},
		{"preflight from an allowed origin", authReq{method: "OPTIONS", path: "/api/v1/workflows/a",
			header: map[string]string{"Origin": "https://ui.example", "Access-Control-Request-Method": "POST"}}, 204, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := e.do(t, tc.req)
			if res.status != tc.status || !strings.Contains(string(res.body), tc.want) {
				t.Errorf("%s %s: %d %s, want %d with %q", tc.req.method, tc.req.path, res.status, res.body, tc.status, tc.want)
			}
			if got := res.header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			if got := res.header.Get("Content-Security-Policy"); got != "frame-ancestors 'none'" {
				t.Errorf("Content-Security-Policy %q", got)
			}
		})
	}
	// Nothing was changed by a refused request: b holds only its workflow.
	res := e.do(t, authReq{method: "GET", path: "/api/v1/workflows/b", cred: local})
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(res.body, &list); err != nil || len(list.Items) != 1 {
		t.Errorf("namespace b holds %d workflows after refused requests (%v): %s", len(list.Items), err, res.body)
	}
}

// TestAuthLogin: ?token= turns a token, or a one-time login code once,
// into an HttpOnly SameSite=Strict cookie.
func TestAuthLogin(t *testing.T) {
	e := newAuthEnv(t)
	code, err := e.logins.Issue(e.tok["reader-a"], time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res := e.do(t, authReq{method: "GET", path: "/?token=" + code + "&x=1"})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "./?x=1" {
		t.Fatalf("login: %d Location %q", res.status, res.header.Get("Location"))
	}
	// Relative to the page, so that it works under a proxy's prefix.
	if res := e.do(t, authReq{method: "GET", path: "/workflows/a%2Fb?token=" + strings.TrimPrefix(e.tok["reader-a"], "Bearer ")}); res.header.Get("Location") != "./a%2Fb" {
		t.Errorf("login on a page: Location %q", res.header.Get("Location"))
	}
	ck := res.header.Get("Set-Cookie")
	for _, want := range []string{"authorization=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(ck, want) {
			t.Errorf("Set-Cookie %q lacks %q", ck, want)
		}
	}
	cookie := strings.SplitN(ck, ";", 2)[0]
	res = e.do(t, authReq{method: "GET", path: "/api/v1/userinfo", header: map[string]string{"Cookie": cookie}})
	if res.status != 200 || !strings.Contains(string(res.body), "reader-a") {
		t.Errorf("with the cookie: %d %s", res.status, res.body)
	}
	if res = e.do(t, authReq{method: "GET", path: "/?token=" + code}); res.status != 401 {
		t.Errorf("a login code used twice: %d %s", res.status, res.body)
	}
	res = e.do(t, authReq{method: "GET", path: "/?token=" + strings.TrimPrefix(e.tok["writer-a"], "Bearer ")})
	if res.status != http.StatusSeeOther {
		t.Errorf("login with the token itself: %d %s", res.status, res.body)
	}
}

// TestAuthGRPC: the same decisions through the gRPC interceptors.
func TestAuthGRPC(t *testing.T) {
	e := newAuthEnv(t)
	cc, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	wfc, arc := workflow.NewWorkflowServiceClient(cc), workflowarchive.NewArchivedWorkflowServiceClient(cc)
	ctwc, infc := clusterworkflowtemplate.NewClusterWorkflowTemplateServiceClient(cc), info.NewInfoServiceClient(cc)
	as := func(name string) context.Context {
		ctx := context.Background()
		if name == "" {
			return ctx
		}
		cred, ok := e.tok[name]
		if !ok {
			cred = name
		}
		return metadata.AppendToOutgoingContext(ctx, "authorization", cred)
	}
	newWF := func() *workflow.WorkflowCreateRequest {
		var req workflow.WorkflowCreateRequest
		if err := json.Unmarshal([]byte(`{"namespace":"a","workflow":`+wfJSON("g")+`}`), &req); err != nil {
			t.Fatal(err)
		}
		return &req
	}
	watch := func(ctx context.Context, ns string) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		s, err := wfc.WatchWorkflows(ctx, &workflow.WatchWorkflowsRequest{Namespace: ns})
		if err != nil {
			return err
		}
		_, err = s.Recv()
		if status.Code(err) == codes.DeadlineExceeded {
			return nil // allowed, and nothing happened
		}
		return err
	}
	tests := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"no token", func() error {
			_, err := wfc.ListWorkflows(as(""), &workflow.WorkflowListRequest{Namespace: "a"})
			return err
		}, codes.Unauthenticated},
		{"garbage", func() error {
			_, err := wfc.ListWorkflows(as("Bearer nope"), &workflow.WorkflowListRequest{Namespace: "a"})
			return err
		}, codes.Unauthenticated},
		{"expired", func() error {
			_, err := wfc.ListWorkflows(as("expired"), &workflow.WorkflowListRequest{Namespace: "a"})
			return err
		}, codes.Unauthenticated},
		{"revoked", func() error {
			_, err := wfc.ListWorkflows(as("revoked"), &workflow.WorkflowListRequest{Namespace: "a"})
			return err
		}, codes.Unauthenticated},
		{"list own", func() error {
			_, err := wfc.ListWorkflows(as("reader-a"), &workflow.WorkflowListRequest{Namespace: "a"})
			return err
		}, codes.OK},
		{"list elsewhere", func() error {
			_, err := wfc.ListWorkflows(as("reader-a"), &workflow.WorkflowListRequest{Namespace: "b"})
			return err
		}, codes.PermissionDenied},
		{"create without the verb", func() error { _, err := wfc.CreateWorkflow(as("reader-a"), newWF()); return err }, codes.PermissionDenied},
		{"create with the verb", func() error { _, err := wfc.CreateWorkflow(as("writer-a"), newWF()); return err }, codes.OK},
		{"watch elsewhere", func() error { return watch(as("reader-a"), "b") }, codes.PermissionDenied},
		{"watch own", func() error { return watch(as("reader-a"), "a") }, codes.OK},
		{"watch no token", func() error { return watch(as(""), "a") }, codes.Unauthenticated},
		{"cluster kind", func() error {
			_, err := ctwc.ListClusterWorkflowTemplates(as("reader-a"), &clusterworkflowtemplate.ClusterWorkflowTemplateListRequest{})
			return err
		}, codes.PermissionDenied},
		{"archived by uid elsewhere", func() error {
			_, err := arc.GetArchivedWorkflow(as("reader-a"), &workflowarchive.GetArchivedWorkflowRequest{Uid: e.archived})
			return err
		}, codes.PermissionDenied},
		{"userinfo", func() error { _, err := infc.GetUserInfo(as("reader-a"), &info.GetUserInfoRequest{}); return err }, codes.OK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := status.Code(tc.call()); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	ui, err := infc.GetUserInfo(as("writer-a"), &info.GetUserInfoRequest{})
	if err != nil || ui.GetSubject() != "writer-a" || ui.GetIssuer() != "braid" {
		t.Errorf("userinfo: %v %v", ui, err)
	}
}

// TestEveryRouteHasARule: a new RPC or REST route is refused until it is
// given an authorization rule, so every one in use must have one.
func TestEveryRouteHasARule(t *testing.T) {
	st, err := sqlite.Open(context.Background(), t.TempDir()+"/braid.db", sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st)})
	if err != nil {
		t.Fatal(err)
	}
	for svc, si := range srv.grpc.GetServiceInfo() {
		for _, m := range si.Methods {
			if _, ok := auth.Rules["/"+svc+"/"+m.Name]; !ok {
				t.Errorf("gRPC method /%s/%s has no rule", svc, m.Name)
			}
		}
	}
	routes := auth.GatewayRoutes()
	if len(routes) < 50 {
		t.Fatalf("only %d REST routes found", len(routes))
	}
	for route, method := range routes {
		if _, ok := auth.Rules[method]; !ok {
			t.Errorf("%s (%s) has no rule", route, method)
		}
	}
	for method := range auth.Rules {
		found := false
		for _, m := range routes {
			found = found || m == method
		}
		if !found {
			t.Errorf("rule for %s, which no route serves", method)
		}
	}
}
