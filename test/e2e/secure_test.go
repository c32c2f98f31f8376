package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// braid server's defaults as a user meets them: TLS with a self-signed
// certificate whose fingerprint server.json records, and the local token
// on every request but the health probes, with the browser guards (Host,
// Content-Type, Origin). The braid CLI pins the certificate and sends the
// token for the server of its data directory, and to no other server;
// any other client needs the certificate (or -k) and the token.
func TestServerSecureDefaults(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	srv := startBraidServer(t, home)

	st, err := os.Stat(filepath.Join(home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || !strings.HasPrefix(srv.token, "braid_") {
		t.Fatalf("the local token: mode %v, %d bytes starting %q; want 0600 and braid_...", st.Mode().Perm(), len(srv.token), srv.token[:min(6, len(srv.token))])
	}
	expect(t, []string{"BRAID_HOME=" + home}, 0, srv.bearer()+"\n", "auth", "token")

	if resp, err := http.Get("http://" + srv.addr + "/readyz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the server answered plain HTTP")
		}
	}

	const (
		workflows = "/api/v1/workflows/default"
		events    = "/api/v1/events/default/anything"
		jsonType  = "application/json"
	)
	for _, tc := range []struct {
		name         string
		method, path string
		auth         string // "token": the local token
		contentType  string
		host, origin string
		want         int
	}{
		{name: "healthz is public", method: "GET", path: "/healthz", want: 200},
		{name: "readyz is public", method: "GET", path: "/readyz", want: 200},
		{name: "no token", method: "GET", path: workflows, want: 401},
		{name: "unknown token", method: "GET", path: workflows, auth: "Bearer braid_not-a-token", want: 401},
		{name: "the local token", method: "GET", path: workflows, auth: "token", want: 200},
		{name: "event without a token", method: "POST", path: events, contentType: jsonType, want: 401},
		{name: "artifact without a token", method: "GET", path: "/artifact-files/default/workflows/a/b/outputs/c", want: 401},
		{name: "event", method: "POST", path: events, auth: "token", contentType: jsonType, want: 200},
		{name: "event without Content-Type", method: "POST", path: events, auth: "token", want: 200},
		{name: "form Content-Type", method: "POST", path: events, auth: "token", contentType: "application/x-www-form-urlencoded", want: 415},
		{name: "text Content-Type", method: "POST", path: events, auth: "token", contentType: "text/plain", want: 415},
		{name: "foreign Host", method: "GET", path: workflows, auth: "token", host: "braid.evil.example", want: 403},
		{name: "localhost Host", method: "GET", path: workflows, auth: "token", host: "localhost:1", want: 200},
		{name: "cross-origin POST", method: "POST", path: events, auth: "token", contentType: jsonType, origin: "https://evil.example", want: 403},
		{name: "same-origin POST", method: "POST", path: events, auth: "token", contentType: jsonType, origin: srv.url(""), want: 200},
	} {
		var body io.Reader
		if tc.method == http.MethodPost {
			body = strings.NewReader(`{"app":"web"}`)
		}
		req, err := http.NewRequest(tc.method, srv.url(tc.path), body)
		if err != nil {
			t.Fatal(err)
		}
		switch tc.auth {
		case "":
		case "token":
			req.Header.Set("Authorization", srv.bearer())
		default:
			req.Header.Set("Authorization", tc.auth)
		}
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := srv.client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %s %s answered %d, want %d", tc.name, tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}

	// A server that records the Authorization headers it is sent.
	var (
		mu   sync.Mutex
		seen []string
	)
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "not braid", http.StatusTeapot)
	}))
	other.EnableHTTP2 = true
	other.StartTLS()
	defer other.Close()
	otherAddr := strings.TrimPrefix(other.URL, "https://")

	for _, mode := range cliModes {
		t.Run(mode.name, func(t *testing.T) {
			env := func(kv ...string) []string { return append(kv, mode.env...) }
			r := expect(t, env("ARGO_SERVER="+srv.addr), 1, "", "list")
			if !strings.Contains(r.err, "certificate") {
				t.Errorf("another client without the certificate: stderr lacks %q:\n%s", "certificate", r.err)
			}
			r = expect(t, env("ARGO_SERVER="+srv.addr, "ARGO_INSECURE_SKIP_VERIFY=true"), 1, "", "list")
			if !strings.Contains(r.err, "Unauthenticated") {
				t.Errorf("another client without a token: stderr lacks %q:\n%s", "Unauthenticated", r.err)
			}
			expect(t, env("ARGO_SERVER="+srv.addr, "ARGO_INSECURE_SKIP_VERIFY=true", "ARGO_TOKEN="+srv.bearer()), 0, "No workflows found", "list")
			expect(t, srv.env(mode.env...), 0, "No workflows found", "list")
			expect(t, env("BRAID_HOME="+home), 0, "No workflows found", "list")
			// The token the user gives wins over the local one.
			r = expect(t, srv.env(append(mode.env, "ARGO_TOKEN=Bearer braid_not-a-token")...), 1, "", "list")
			if !strings.Contains(r.err, "Unauthenticated") {
				t.Errorf("a wrong ARGO_TOKEN: stderr lacks %q:\n%s", "Unauthenticated", r.err)
			}
			// Without TLS the server is not reached.
			expect(t, srv.env(append(mode.env, "ARGO_SECURE=false")...), 1, "", "list")

			// The local token goes to the server of the data directory only.
			mu.Lock()
			seen = nil
			mu.Unlock()
			braidCLI(t, env("BRAID_HOME="+home, "ARGO_SERVER="+otherAddr, "ARGO_INSECURE_SKIP_VERIFY=true"), "list")
			mu.Lock()
			defer mu.Unlock()
			if len(seen) == 0 {
				t.Fatal("the CLI sent nothing to the other server")
			}
			for _, h := range seen {
				if strings.Contains(h, srv.token) {
					t.Fatalf("the CLI sent the local token to a server other than the data directory's: %q", h)
				}
			}
		})
	}
}
