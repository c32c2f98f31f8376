package sso

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server/auth"
)

const redirectURL = "https://braid.example:2746/oauth2/callback"

func ssoConfig(p *testProvider) config.SSOConfig {
	sel := func(key string) corev1.SecretKeySelector {
		return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sso"}, Key: key}
	}
	return config.SSOConfig{Issuer: p.srv.URL, ClientID: sel("clientId"), ClientSecret: sel("clientSecret"),
		RedirectURL: redirectURL, Scopes: []string{"email", "groups"}}
}

func (p *testProvider) secretFunc() func(context.Context, string, string) (string, error) {
	return func(_ context.Context, name, key string) (string, error) {
		switch {
		case name == "sso" && key == "clientId":
			return p.clientID, nil
		case name == "sso" && key == "clientSecret":
			return p.secret, nil
		}
		return "", fmt.Errorf("secret %q has no key %q", name, key)
	}
}

func newSSO(t *testing.T, p *testProvider, c config.SSOConfig, o Options) *SSO {
	t.Helper()
	if o.Secret == nil {
		o.Secret = p.secretFunc()
	}
	s, err := New(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// login runs the browser's part: /oauth2/redirect, the provider's
// authorize endpoint, then /oauth2/callback. It returns the callback's
// response.
func login(t *testing.T, s *SSO, p *testProvider, redirect string) *httptest.ResponseRecorder {
	t.Helper()
	h := s.Handler()
	target := "/oauth2/redirect"
	if redirect != "" {
		target += "?redirect=" + url.QueryEscape(redirect)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	if rec.Code != http.StatusFound {
		t.Fatalf("redirect: %d %s", rec.Code, rec.Body)
	}
	state := rec.Result().Cookies()
	client := p.srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Get(rec.Header().Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Path != "/oauth2/callback" {
		t.Fatalf("provider sent the browser to %q (%v)", resp.Header.Get("Location"), err)
	}
	req := httptest.NewRequest(http.MethodGet, back.RequestURI(), nil)
	for _, c := range state {
		req.AddCookie(c)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func cookieOf(rec *httptest.ResponseRecorder, name string) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func TestLoginFlow(t *testing.T) {
	p := newTestProvider(t, false)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := newSSO(t, p, ssoConfig(p), Options{Secure: true, Now: clock})
	rec := login(t, s, p, "/workflows/default?phase=Running")
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "/workflows/default?phase=Running" {
		t.Fatalf("callback: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	q := p.lastAuth
	if scopes := strings.Fields(q.Get("scope")); !slices.Equal(scopes, []string{"openid", "email", "groups"}) {
		t.Errorf("scopes %q", scopes)
	}
	if q.Get("redirect_uri") != redirectURL || q.Get("nonce") == "" || q.Get("code_challenge_method") != "S256" {
		t.Errorf("authorize query %v", q)
	}
	c := cookieOf(rec, CookieName)
	if c == nil || !strings.HasPrefix(c.Value, Prefix) || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode ||
		c.Path != "/" || c.MaxAge != int((10*time.Hour).Seconds()) {
		t.Fatalf("authorization cookie %+v", c)
	}
	if st := cookieOf(rec, stateCookie); st == nil || st.MaxAge >= 0 {
		t.Errorf("the state cookie is not cleared: %+v", st)
	}
	id, err := s.Verify(context.Background(), c.Value)
	if err != nil {
		t.Fatal(err)
	}
	want := auth.Identity{Mode: auth.ModeSSO, Issuer: p.srv.URL, Subject: "u-1", Email: "ada@example.com", EmailVerified: true,
		Name: "Ada", Groups: []string{"dev", "ops"}}
	got := *id
	got.Grant = nil
	if fmt.Sprint(got) != fmt.Sprint(want) || !slices.Equal(id.Grant.Namespaces, []string{auth.AllNamespaces}) ||
		!id.Grant.Allows("delete", "anything", true) {
		t.Errorf("identity %+v grant %+v", got, id.Grant)
	}
	now = now.Add(10 * time.Hour)
	if _, err := s.Verify(context.Background(), c.Value); !errors.Is(err, auth.ErrUnauthenticated) ||
		!strings.Contains(err.Error(), "SSO session has expired") {
		t.Errorf("expired: %v", err)
	}
}

func TestLoginDefaultsAndNoPKCE(t *testing.T) {
	p := newTestProvider(t, false)
	p.pkce = false
	s := newSSO(t, p, ssoConfig(p), Options{BaseHref: "/argo"})
	rec := login(t, s, p, "")
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "/argo/" {
		t.Fatalf("callback: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if p.lastAuth.Has("code_challenge") {
		t.Errorf("PKCE sent to a provider without it: %v", p.lastAuth)
	}
	if c := cookieOf(rec, CookieName); c == nil || c.Path != "/argo/" || c.Secure {
		t.Errorf("cookie %+v", c)
	}
}

func TestFinalRedirect(t *testing.T) {
	p := newTestProvider(t, false)
	s := newSSO(t, p, ssoConfig(p), Options{})
	for _, tc := range []struct{ in, want string }{
		{"/workflows", "/workflows"},
		{"/workflows/ns?a=b&c=d", "/workflows/ns?a=b&c=d"},
		{"http://braid.local/workflows?x=1", "/workflows?x=1"},
		{"https://braid.example:2746/cron", "/cron"},
		{"//evil.example/x", ""},
		{"/\\evil.example", ""},
		{"https://evil.example/x", ""},
		{"javascript:alert(1)", ""},
		{"workflows", ""},
		{"/a\nb", ""},
		{"http://braid.local@evil.example/", ""},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://braid.local/oauth2/redirect", nil)
		got, err := s.finalRedirect(r, tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/oauth2/redirect?redirect=https://evil.example/<b>", nil))
	if rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), "<b>") {
		t.Errorf("foreign redirect: %d %s", rec.Code, rec.Body)
	}
}

func TestCallbackErrors(t *testing.T) {
	p := newTestProvider(t, false)
	s := newSSO(t, p, ssoConfig(p), Options{})
	h := s.Handler()
	get := func(target string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	start := get("/oauth2/redirect")
	state := cookieOf(start, stateCookie)
	if state == nil || !state.HttpOnly || state.SameSite != http.SameSiteLaxMode {
		t.Fatalf("state cookie %+v", state)
	}
	for _, tc := range []struct {
		name, target string
		cookie       *http.Cookie
		code         int
		want         string
	}{
		{"no cookie", "/oauth2/callback?code=c&state=s", nil, 400, "no login in progress"},
		{"bad cookie", "/oauth2/callback?code=c&state=s", &http.Cookie{Name: stateCookie, Value: "x.y.z"}, 400, "not valid"},
		{"state mismatch", "/oauth2/callback?code=c&state=other", state, 400, "does not match"},
		{"provider error", "/oauth2/callback?error=access_denied&error_description=%3Cscript%3Ealert(1)%3C/script%3E", state, 401,
			`"access_denied" "\u003cscript\u003ealert(1)\u003c/script\u003e"`},
		{"unknown code", "/oauth2/callback?code=nope&state=" + stateOf(t, s, state), state, 401, `refused the login code: "invalid_grant"`},
		{"session as state", "/oauth2/callback?code=c&state=s", &http.Cookie{Name: stateCookie, Value: sessionToken(t, s)}, 400, "another type"},
	} {
		rec := get(tc.target, nonNil(tc.cookie)...)
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) || strings.Contains(rec.Body.String(), "<script") {
			t.Errorf("%s: %d %q", tc.name, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("%s: content type %q", tc.name, ct)
		}
	}
	if rec := get("/oauth2/other"); rec.Code != http.StatusNotFound {
		t.Errorf("other path: %d", rec.Code)
	}
	p.badNonce = true
	if rec := login(t, s, p, ""); rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "nonce") {
		t.Errorf("bad nonce: %d %s", rec.Code, rec.Body)
	}
}

func nonNil(c *http.Cookie) []*http.Cookie {
	if c == nil {
		return nil
	}
	return []*http.Cookie{c}
}

// stateOf opens a state cookie, as the callback does.
func stateOf(t *testing.T, s *SSO, c *http.Cookie) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.AddCookie(c)
	st, err := s.readState(req)
	if err != nil {
		t.Fatal(err)
	}
	return st.State
}

// sessionToken seals a session of subject u-2 valid for an hour.
func sessionToken(t *testing.T, s *SSO) string {
	t.Helper()
	tok, err := s.sealSession(&session{Issuer: s.cfg.Issuer, Subject: "u-2", Groups: []string{"dev"},
		Expiry: s.now().Add(time.Hour).Unix(), IssuedAt: s.now().Unix(), Extra: map[string]any{"team": "blue"}})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestVerifyRejects(t *testing.T) {
	p := newTestProvider(t, false)
	s := newSSO(t, p, ssoConfig(p), Options{})
	good := sessionToken(t, s)
	other := newSSO(t, p, ssoConfig(p), Options{}) // another key
	flipped := []byte(good)
	flipped[len(flipped)-30] ^= 1
	for name, value := range map[string]string{
		"empty":       "",
		"bearer":      "Bearer abc",
		"not a JWE":   Prefix + "abc",
		"changed":     Prefix + string(flipped),
		"another key": Prefix + sessionToken(t, other),
		"too long":    Prefix + strings.Repeat("a", maxTokenBytes+1),
	} {
		if _, err := s.Verify(context.Background(), value); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := s.Verify(context.Background(), Prefix+good); err != nil {
		t.Errorf("good: %v", err)
	}
	c := ssoConfig(p)
	c.Issuer += "/moved"
	moved := &SSO{cfg: c, keys: s.keys, now: time.Now, issuers: []string{c.Issuer}, rules: s.rules}
	if _, err := moved.Verify(context.Background(), Prefix+good); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("another issuer: %v", err)
	}
}

func TestKeyFile(t *testing.T) {
	p := newTestProvider(t, false)
	file := filepath.Join(t.TempDir(), "data", "sso.key")
	s1 := newSSO(t, p, ssoConfig(p), Options{KeyFile: file})
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	tok := sessionToken(t, s1)
	s2 := newSSO(t, p, ssoConfig(p), Options{KeyFile: file}) // a restart
	if _, err := s2.Verify(context.Background(), Prefix+tok); err != nil {
		t.Errorf("a session does not survive a restart: %v", err)
	}
	if err := os.WriteFile(file, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := ssoConfig(p)
	if _, err := New(context.Background(), c, Options{Secret: p.secretFunc(), KeyFile: file}); err == nil ||
		!strings.Contains(err.Error(), "at least 32") {
		t.Errorf("short key: %v", err)
	}
}

// TestKeyFileRace: servers starting at once agree on one key.
func TestKeyFileRace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sso.key")
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	for i := range got {
		wg.Go(func() {
			k, err := loadKey(file, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Error(err)
			}
			got[i] = k
		})
	}
	wg.Wait()
	for _, k := range got {
		if !bytes.Equal(k, got[0]) {
			t.Fatal("two keys")
		}
	}
}

func TestGroups(t *testing.T) {
	p := newTestProvider(t, false)
	p.user["roles"] = []string{"argo-admin", "argo-dev", "other"}
	p.user["groups"] = "solo"
	c := ssoConfig(p)
	c.CustomGroupClaimName = "roles"
	c.FilterGroupsRegex = []string{"^argo-"}
	if g := verifyLogin(t, newSSO(t, p, c, Options{}), p).Groups; !slices.Equal(g, []string{"argo-admin", "argo-dev"}) {
		t.Errorf("custom claim + filter: %q", g)
	}
	if g := verifyLogin(t, newSSO(t, p, ssoConfig(p), Options{}), p).Groups; !slices.Equal(g, []string{"solo"}) {
		t.Errorf("a string claim: %q", g)
	}
	p.userinfo = map[string]any{"groups": []string{"from-userinfo"}}
	c = ssoConfig(p)
	c.UserInfoPath = "/userinfo"
	if g := verifyLogin(t, newSSO(t, p, c, Options{}), p).Groups; !slices.Equal(g, []string{"from-userinfo"}) {
		t.Errorf("userinfo: %q", g)
	}
}

func verifyLogin(t *testing.T, s *SSO, p *testProvider) *auth.Identity {
	t.Helper()
	rec := login(t, s, p, "")
	c := cookieOf(rec, CookieName)
	if c == nil {
		t.Fatalf("no cookie: %d %s", rec.Code, rec.Body)
	}
	id, err := s.Verify(context.Background(), c.Value)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestTooManyGroups(t *testing.T) {
	p := newTestProvider(t, false)
	var groups []string
	for i := range 400 {
		groups = append(groups, fmt.Sprintf("group-with-a-long-name-%03d", i))
	}
	p.user["groups"] = groups
	rec := login(t, newSSO(t, p, ssoConfig(p), Options{}), p, "")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "filterGroupsRegex") {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}

func TestIssuerAliasAndTLS(t *testing.T) {
	p := newTestProvider(t, true)
	p.issuer = "https://login.example/tenant"
	c := ssoConfig(p)
	c.IssuerAlias = p.issuer
	if _, err := New(context.Background(), c, Options{Secret: p.secretFunc()}); err == nil ||
		!strings.Contains(err.Error(), "sso.issuer") {
		t.Errorf("an untrusted certificate: %v", err)
	}
	c.InsecureSkipVerify = true
	id := verifyLogin(t, newSSO(t, p, c, Options{}), p)
	if id.Issuer != p.issuer {
		t.Errorf("issuer %q", id.Issuer)
	}
	c.InsecureSkipVerify = false
	c.RootCA = certPEM(p.srv)
	verifyLogin(t, newSSO(t, p, c, Options{}), p)
	c.IssuerAlias = ""
	if _, err := New(context.Background(), c, Options{Secret: p.secretFunc()}); err == nil {
		t.Error("an issuer that differs from discovery's was accepted without issuerAlias")
	}
}

func TestNewErrors(t *testing.T) {
	p := newTestProvider(t, false)
	c := ssoConfig(p)
	c.ClientSecret.Key = "missing"
	if _, err := New(context.Background(), c, Options{Secret: p.secretFunc()}); err == nil ||
		!strings.Contains(err.Error(), "sso.clientSecret") {
		t.Errorf("missing secret: %v", err)
	}
	c = ssoConfig(p)
	c.RedirectURL = ""
	if _, err := New(context.Background(), c, Options{Secret: p.secretFunc()}); err == nil ||
		!strings.Contains(err.Error(), "sso.redirectUrl") {
		t.Errorf("invalid config: %v", err)
	}
}
