package kube_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/server/auth/kubeauth"
	"github.com/braidwf/braid/pkg/apiclient/client"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
)

// adminAccount is the ServiceAccount (in namespace default, bound to
// cluster-admin) whose token the tests send to braid server, which
// authenticates callers with the cluster in its default auth mode, client.
const adminAccount = "braid-e2e-admin"

// adminTok is the admin token, made once per test binary.
var adminTok struct {
	once sync.Once
	tok  string
	err  error
}

// adminToken returns a token of adminAccount, creating the account and
// its ClusterRoleBinding on first use.
func adminToken(t *testing.T, ctx context.Context, c *apiClient) string {
	t.Helper()
	adminTok.once.Do(func() {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: adminAccount}}
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: adminAccount},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: adminAccount, Namespace: "default"}},
		}
		if adminTok.err = c.create(ctx, "/api/v1/namespaces/default/serviceaccounts", sa); adminTok.err != nil {
			return
		}
		if adminTok.err = c.create(ctx, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", crb); adminTok.err != nil {
			return
		}
		adminTok.tok, adminTok.err = serviceAccountToken(ctx, c, "default", adminAccount)
	})
	if adminTok.err != nil {
		t.Fatalf("admin token: %v", adminTok.err)
	}
	return adminTok.tok
}

// serviceAccountToken asks the TokenRequest API for a token of the
// ServiceAccount (what `kubectl create token` does), valid for an hour.
func serviceAccountToken(ctx context.Context, c *apiClient, ns, name string) (string, error) {
	hour := int64(3600)
	var tr authnv1.TokenRequest
	req := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &hour}}
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+name+"/token", req, &tr); err != nil {
		return "", fmt.Errorf("token of %s/%s: %w", ns, name, err)
	}
	return tr.Status.Token, nil
}

// readerAccount makes a ServiceAccount in ns that may get, list and watch
// workflows there, and nothing else, and returns a token of it.
func readerAccount(t *testing.T, ctx context.Context, c *apiClient, ns, name string) string {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"get", "list", "watch"}}}}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}}
	for path, obj := range map[string]any{
		"/api/v1/namespaces/" + ns + "/serviceaccounts":                         &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}},
		"/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/roles":        role,
		"/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings": rb,
	} {
		if err := c.create(ctx, path, obj); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := serviceAccountToken(ctx, c, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestKubeClientAuth: braid server on the cluster in its default auth mode
// (client) lets a ServiceAccount do what its RBAC allows, through REST and
// gRPC: a reader of workflows in one namespace may list them there, not in
// another namespace nor create one, and a garbage token is refused.
func TestKubeClientAuth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b := newBackend(t, ctx)
	nsA := b.ns
	nsB := prepareNamespace(t, ctx, b.c, "braid-auth-b")
	reader := "Bearer " + readerAccount(t, ctx, b.c, nsA, "wf-reader")
	wantSubject := "system:serviceaccount:" + nsA + ":wf-reader"

	t.Run("rest", func(t *testing.T) {
		for _, tc := range []struct {
			method, path, token string
			body                string
			code, grpcCode      int
		}{
			{"GET", "/api/v1/workflows/" + nsA, reader, "", 200, 0},
			{"GET", "/api/v1/workflows/" + nsB, reader, "", 403, int(codes.PermissionDenied)},
			{"GET", "/api/v1/workflows/", reader, "", 403, int(codes.PermissionDenied)}, // every namespace: needs a ClusterRole
			{"POST", "/api/v1/workflows/" + nsA, reader, `{"workflow":` + helloJSON() + `}`, 403, int(codes.PermissionDenied)},
			{"GET", "/api/v1/workflows/" + nsA, "Bearer garbage", "", 401, int(codes.Unauthenticated)},
			{"GET", "/api/v1/workflows/" + nsA, "", "", 401, int(codes.Unauthenticated)},
			{"GET", "/api/v1/workflows/" + nsB, "Bearer " + b.token, "", 200, 0},
		} {
			code, body := b.rest(t, ctx, tc.method, tc.path, tc.token, tc.body)
			who := tc.token
			if len(who) > 16 {
				who = who[:16] + "..."
			}
			t.Logf("%s %s (%s): %d %s", tc.method, tc.path, who, code, tail(body, 200))
			if code != tc.code {
				t.Errorf("%s %s (%s): HTTP %d, want %d: %s", tc.method, tc.path, who, code, tc.code, body)
				continue
			}
			if tc.grpcCode != 0 {
				var e struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				}
				if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code != tc.grpcCode || e.Message == "" {
					t.Errorf("%s %s: body %s, want Argo's error JSON with code %d", tc.method, tc.path, body, tc.grpcCode)
				}
				if tc.code == 403 && !strings.Contains(e.Message, wantSubject) {
					t.Errorf("%s %s: message %q does not name %s", tc.method, tc.path, e.Message, wantSubject)
				}
			}
		}
	})

	t.Run("grpc", func(t *testing.T) {
		for _, tc := range []struct {
			ns, token string
			want      codes.Code
		}{
			{nsA, reader, codes.OK},
			{nsB, reader, codes.PermissionDenied},
			{nsA, "Bearer garbage", codes.Unauthenticated},
			{nsB, "Bearer " + b.token, codes.OK},
		} {
			cl := b.grpcClient(t, tc.token)
			_, err := cl.Workflow.ListWorkflows(ctx, &workflow.WorkflowListRequest{Namespace: tc.ns})
			if got := status.Code(err); got != tc.want {
				t.Errorf("ListWorkflows in %s: %v, want %v", tc.ns, err, tc.want)
			} else {
				t.Logf("ListWorkflows in %s: %v (%v)", tc.ns, got, err)
			}
		}
	})

	t.Run("server-mode", func(t *testing.T) {
		// --auth-mode server: every caller has the server's own rights.
		srv := b.startServer(t, ctx, "server-authmode-server", "--auth-mode", "server")
		code, body := srv.rest(t, ctx, "GET", "/api/v1/workflows/"+nsB, "", "")
		if code != 200 {
			t.Errorf("--auth-mode server, no token: HTTP %d, want 200: %s", code, body)
		}
	})

	t.Run("cost", func(t *testing.T) { testAuthCost(t, ctx, b, nsA) })
}

// helloJSON is a Workflow as JSON, for a REST create.
func helloJSON() string {
	return `{"metadata":{"generateName":"hello-"},"spec":{"entrypoint":"main","templates":[{"name":"main","container":{"image":"busybox","command":["true"]}}]}}`
}

// testAuthCost measures what client auth adds to a request: Verify and
// Authorize called directly against the apiserver, cold (a token never
// seen: a SelfSubjectReview and a SelfSubjectAccessReview) and warm (both
// answers cached), and a REST list through braid with a fresh token and
// again with the same one.
func testAuthCost(t *testing.T, ctx context.Context, b *backend, ns string) {
	rc, err := clientcmd.BuildConfigFromFlags("", filepath.SplitList(os.Getenv("KUBECONFIG"))[0])
	if err != nil {
		t.Fatal(err)
	}
	k, err := kubeauth.New(rc, kubeauth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := auth.Attributes{Verb: "list", Resource: "workflows", Namespace: ns}
	const n = 5
	var cold, warm, restCold, restWarm []time.Duration
	for i := range n {
		tok := readerAccount(t, ctx, b.c, ns, "wf-reader-"+strconv.Itoa(i))
		start := time.Now()
		id, err := k.Verify(ctx, "Bearer "+tok)
		if err == nil {
			err = k.Authorize(ctx, id, a)
		}
		if err != nil {
			t.Fatalf("cold Verify+Authorize: %v", err)
		}
		cold = append(cold, time.Since(start))
		for range 20 {
			start = time.Now()
			id, _ := k.Verify(ctx, "Bearer "+tok)
			_ = k.Authorize(ctx, id, a)
			warm = append(warm, time.Since(start))
		}
		// Through braid: a token the server has not seen, then again.
		tok2, err := serviceAccountToken(ctx, b.c, ns, "wf-reader-"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		if code, body := b.rest(t, ctx, "GET", "/api/v1/workflows/"+ns, "Bearer "+tok2, ""); code != 200 {
			t.Fatalf("list with a fresh token: %d %s", code, body)
		}
		restCold = append(restCold, time.Since(start))
		for range 20 {
			start = time.Now()
			b.rest(t, ctx, "GET", "/api/v1/workflows/"+ns, "Bearer "+tok2, "")
			restWarm = append(restWarm, time.Since(start))
		}
	}
	// The same list on a server in server mode: no auth work at all.
	base := b.startServer(t, ctx, "server-cost-baseline", "--auth-mode", "server")
	var restBase []time.Duration
	for range 100 {
		start := time.Now()
		base.rest(t, ctx, "GET", "/api/v1/workflows/"+ns, "", "")
		restBase = append(restBase, time.Since(start))
	}
	t.Logf("client auth cost (TLS %v): Verify+Authorize cold (SelfSubjectReview + SelfSubjectAccessReview) median %v, warm (cached) median %v; "+
		"REST list through braid with a fresh token median %v, same token again median %v, in server mode (no auth) median %v",
		b.secure, medianUS(cold), medianUS(warm), medianUS(restCold), medianUS(restWarm), medianUS(restBase))
	fmt.Printf("kube-auth-cost: cold %v warm %v; REST fresh token %v, warm %v, server mode %v\n",
		medianUS(cold), medianUS(warm), medianUS(restCold), medianUS(restWarm), medianUS(restBase))
}

func medianUS(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Microsecond)
}

// rest sends one request to braid server with token (none when "") and
// returns the status code and the body.
func (s braidServer) rest(t *testing.T, ctx context.Context, method, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, s.baseURL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := insecureHTTPClient().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(data))
}

// grpcClient is braid's Go client on the server over gRPC, sending token.
func (s braidServer) grpcClient(t *testing.T, token string) *client.Client {
	t.Helper()
	cl, err := client.New(client.Options{Address: s.addr, Token: token, Secure: s.secure, InsecureSkipVerify: s.secure})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

func (s braidServer) baseURL() string {
	if s.secure {
		return "https://" + s.addr
	}
	return "http://" + s.addr
}

// insecureHTTPClient is one client (so that requests reuse connections)
// that trusts the test servers' self-signed certificates.
var insecureHTTPClient = sync.OnceValue(func() *http.Client {
	return &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}} //nolint:gosec // the test servers' self-signed certificates
})
