package auth

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGrantAllows(t *testing.T) {
	a := &Grant{Namespaces: []string{"a"}, Verbs: []string{"get", "list"}}
	all := &Grant{Namespaces: []string{"*"}, Verbs: []string{"*"}}
	cl := &Grant{Cluster: true, Verbs: []string{"get"}}
	tests := []struct {
		g       *Grant
		verb    string
		ns      string
		cluster bool
		want    bool
	}{
		{a, "get", "a", false, true},
		{a, "list", "a", false, true},
		{a, "create", "a", false, false},
		{a, "get", "b", false, false},
		{a, "get", "", false, false},
		{a, "get", "", true, false},
		{all, "delete", "b", false, true},
		{all, "delete", "", false, true},
		{all, "delete", "", true, true},
		{cl, "get", "", true, true},
		{cl, "get", "a", false, false},
		{nil, "get", "a", false, false},
	}
	for _, tc := range tests {
		if got := tc.g.Allows(tc.verb, tc.ns, tc.cluster); got != tc.want {
			t.Errorf("%+v.Allows(%q, %q, %v) = %v", tc.g, tc.verb, tc.ns, tc.cluster, got)
		}
	}
}

func TestParseModes(t *testing.T) {
	m, err := ParseModes([]string{"client", "server,client"})
	if err != nil || len(m) != 2 || m[0] != ModeClient || m[1] != ModeServer {
		t.Errorf("ParseModes: %v %v", m, err)
	}
	if _, err := ParseModes([]string{"token"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
}

func TestTokens(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	tk, err := OpenTokens(dir, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	local, err := tk.EnsureLocal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := tk.EnsureLocal()
	if err != nil || again != local {
		t.Errorf("EnsureLocal made a second token: %v", err)
	}
	if len(local) < len("Bearer braid_")+22 { // 128 bits and more
		t.Errorf("local token too short: %d", len(local))
	}
	for _, f := range []string{LocalTokenFile, TokensFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, fi.Mode(), err)
		}
	}
	ctx := context.Background()
	if id, err := tk.Verify(ctx, local); err != nil || id.Subject != "local" || !id.Grant.Allows("delete", "x", true) {
		t.Errorf("local: %+v %v", id, err)
	}
	ci, err := tk.Create(Token{Name: "ci", Grant: Grant{Namespaces: []string{"argo"}, Verbs: []string{"get"}}}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Create(Token{Name: "ci", Grant: Grant{Namespaces: []string{"argo"}, Verbs: []string{"get"}}}, 0); err == nil {
		t.Error("a second token of the same name was made")
	}
	for _, bad := range []Token{
		{Name: "Bad Name", Grant: Grant{Namespaces: []string{"a"}, Verbs: []string{"get"}}},
		{Name: "nons", Grant: Grant{Verbs: []string{"get"}}},
		{Name: "noverb", Grant: Grant{Namespaces: []string{"a"}}},
		{Name: "badverb", Grant: Grant{Namespaces: []string{"a"}, Verbs: []string{"steal"}}},
	} {
		if _, err := tk.Create(bad, 0); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
	// Another process (the CLI) reads the same files.
	other, err := OpenTokens(dir, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	if id, err := other.Verify(ctx, ci); err != nil || id.ServiceAccountName != "ci" {
		t.Errorf("ci from another store: %+v %v", id, err)
	}
	now = now.Add(2 * time.Hour)
	if _, err := tk.Verify(ctx, ci); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("expired: %v", err)
	}
	if err := other.Revoke("ci"); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Verify(ctx, ci); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("revoked by another process: %v", err)
	}
	if err := tk.Revoke("ci"); err == nil {
		t.Error("revoking twice succeeded")
	}
	b, _ := os.ReadFile(filepath.Join(dir, TokensFile))
	if len(b) == 0 || strings.Contains(string(b), local[len("Bearer "):]) {
		t.Errorf("tokens.json holds a secret or nothing: %s", b)
	}
}

func TestGatewayPattern(t *testing.T) {
	for in, want := range map[string]string{
		"/api/v1/workflows/{namespace}":        "/api/v1/workflows/{namespace=*}",
		"/api/v1/workflows/{namespace}/{name}": "/api/v1/workflows/{namespace=*}/{name=*}",
		"/api/v1/version":                      "/api/v1/version",
		"/a/{x=**}":                            "/a/{x=**}",
	} {
		if got := gatewayPattern(in); got != want {
			t.Errorf("gatewayPattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:2746": true, "[::1]:2746": true, "localhost:2746": true, "app.localhost": true,
		"10.1.2.3": true, "evil.example": false, "evil.example:2746": false, "braid.svc": true,
		"x.braid.example": false, "braid.example": true,
	} {
		if got := hostAllowed(host, []string{".svc", "braid.example"}); got != want {
			t.Errorf("hostAllowed(%q) = %v", host, got)
		}
	}
}

// BenchmarkAuthenticateAuthorize is the whole per-request cost of the
// embedded gatekeeper: the token file's stamp, the hash lookup, the rule.
func BenchmarkAuthenticateAuthorize(b *testing.B) {
	tk, err := OpenTokens(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	cred, err := tk.Create(Token{Name: "ci", Grant: Grant{Namespaces: []string{"a"}, Verbs: []string{"list"}}}, 0)
	if err != nil {
		b.Fatal(err)
	}
	g, err := NewGatekeeper(Config{Modes: []Mode{ModeClient}, Client: tk})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	a := Attributes{Verb: "list", Resource: "workflows", Namespace: "a"}
	b.ReportAllocs()
	for b.Loop() {
		id, err := g.Authenticate(ctx, cred)
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Authorize(ctx, id, a); err != nil {
			b.Fatal(err)
		}
	}
}

// Every state-changing call, and every refusal, leaves an audit record
// with subject, verb, resource, namespace and name; allowed reads do not.
func TestAudit(t *testing.T) {
	var buf strings.Builder
	g, err := NewGatekeeper(Config{Modes: []Mode{ModeServer}, Audit: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	writer := &Identity{Mode: ModeClient, Subject: "ci", ServiceAccountName: "ci", Grant: &Grant{Namespaces: []string{"a"}, Verbs: []string{"*"}}}
	_ = g.Authorize(ctx, writer, Attributes{Verb: "list", Resource: "workflows", Namespace: "a"})
	if buf.Len() != 0 {
		t.Errorf("an allowed read was audited: %s", buf.String())
	}
	_ = g.Authorize(ctx, writer, Attributes{Verb: "delete", Resource: "workflows", Namespace: "a", Name: "w1"})
	_ = g.Authorize(ctx, writer, Attributes{Verb: "get", Resource: "workflows", Namespace: "b", Name: "w2"})
	out := buf.String()
	for _, want := range []string{
		`msg=audit subject=ci mode=client verb=delete resource=workflows namespace=a name=w1 allowed=true`,
		`verb=get resource=workflows namespace=b name=w2 allowed=false reason="permission denied: \"ci\" is not allowed to get workflows in namespace \"b\""`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("audit log lacks %s:\n%s", want, out)
		}
	}
}
