package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/braidwf/braid/internal/testutil"
)

// The SSO tests log in to braid server --auth-mode sso with a real
// headless Chromium at a real OpenID Connect provider (hack/oidc, built
// into bin/tools/braid-oidc by hack/oidc.sh build), which asks for a login
// and a password on a form.

// ssoTools finds chromium and the provider, or skips (fails with
// BRAID_REQUIRE_SSO=1).
func ssoTools(t *testing.T) (chromium, provider string) {
	t.Helper()
	missing := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		if os.Getenv("BRAID_REQUIRE_SSO") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + " (hack/test-deps.sh installs it; BRAID_REQUIRE_SSO=1 makes this a failure)")
	}
	chromium = os.Getenv("BRAID_CHROMIUM")
	if chromium == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				chromium = p
				break
			}
		}
	}
	if chromium == "" {
		missing("SSO e2e: no chromium on PATH (set BRAID_CHROMIUM)")
	}
	provider = os.Getenv("BRAID_OIDC_BIN")
	if provider == "" {
		provider = filepath.Join(repoRoot(), "bin", "tools", "braid-oidc")
	}
	if _, err := os.Stat(provider); err != nil {
		missing("SSO e2e: no OIDC provider at %s: run hack/oidc.sh build (or set BRAID_OIDC_BIN)", provider)
	}
	return chromium, provider
}

// oidcUser is a user of the provider: login:password:email:name:groups.
type oidcUser struct{ login, password, email, name, groups string }

func (u oidcUser) flag() string {
	return strings.Join([]string{u.login, u.password, u.email, u.name, u.groups}, ":")
}

// startOIDC starts the provider for client braid with secret, accepting
// only redirectURL, and returns its issuer URL.
func startOIDC(t *testing.T, bin, secret, redirectURL string, users ...oidcUser) string {
	t.Helper()
	args := []string{"-addr", "127.0.0.1:0", "-client-id", "braid", "-redirect-url", redirectURL}
	for _, u := range users {
		args = append(args, "-user", u.flag())
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "OIDC_CLIENT_SECRET="+secret)
	var logs syncBuffer
	cmd.Stderr = &logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("provider log:\n%s", logs.String())
		}
	})
	issuer := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "BRAID_TEST_OIDC_ISSUER="); ok {
				issuer <- v
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case iss := <-issuer:
		return iss
	case <-time.After(10 * time.Second):
		t.Fatalf("the provider printed no issuer in 10s:\n%s", logs.String())
	}
	return ""
}

// ssoServer is braid server --auth-mode sso.
type ssoServer struct {
	base string // scheme://127.0.0.1:port
	home string
}

// serverScheme is https when braid server serves TLS by default (--secure).
func serverScheme(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(braidBin, "server", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("braid server --help: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--secure") {
		return "https"
	}
	return "http"
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// insecureClient trusts braid's self-signed certificate and follows no
// redirects.
func insecureClient() *http.Client {
	return &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // a test server's self-signed cert
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
}

// startSSO starts a provider with users and braid server in SSO mode on a
// new data directory; before runs before the server starts.
func startSSO(t *testing.T, provider string, rbac bool, before func(home string), users ...oidcUser) *ssoServer {
	t.Helper()
	home := t.TempDir()
	port := freePort(t)
	s := &ssoServer{base: fmt.Sprintf("%s://127.0.0.1:%d", serverScheme(t), port), home: home}
	secret := rand.Text()
	issuer := startOIDC(t, provider, secret, s.base+"/oauth2/callback", users...)
	writeFile(t, filepath.Join(home, "config.yaml"), fmt.Sprintf(`sso:
  issuer: %s
  clientId: {name: sso-client, key: id}
  clientSecret: {name: sso-client, key: secret}
  redirectUrl: %s/oauth2/callback
  scopes: [email, profile, groups]
  rbac: {enabled: %t}
secrets:
  sso-client:
    id: braid
    secret: %s
`, issuer, s.base, rbac, secret))
	if before != nil {
		before(home)
	}
	_, done, logs := startServerProcess(t, "--auth-mode", "sso", "--data-dir", home, "--port", strconv.Itoa(port))
	c := insecureClient()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		if resp, err := c.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-done:
			t.Fatalf("braid server exited:\n%s", logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("braid server not ready after 15s:\n%s", logs.String())
	return nil
}

// newBrowser starts a headless Chromium with a fresh profile, with the
// flags a closed network needs; the returned context drives its tab.
func newBrowser(t *testing.T, chromium string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.IgnoreCertErrors, // braid's self-signed certificate
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelTab(); cancelAlloc() })
	return ctx
}

// browserLogin opens /oauth2/redirect, fills the provider's form and waits
// until the browser is back on braid at landing.
func browserLogin(t *testing.T, ctx context.Context, base string, u oidcUser, landing string) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("logged in as %s in %s", u.login, time.Since(start).Round(time.Millisecond)) }()
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/oauth2/redirect?redirect="+landing),
		chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.SendKeys(chromedp.ID("login"), u.login),
		chromedp.SendKeys(chromedp.ID("password"), u.password),
		chromedp.Click(chromedp.ID("submit")),
	)
	if err != nil {
		t.Fatalf("log in at the provider: %v", err)
	}
	err = testutil.Poll(15*time.Second, func() error {
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err == nil && loc != base+landing {
			err = fmt.Errorf("at %q", loc)
		}
		return err
	})
	if err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("the browser did not land on %s: %v, page: %q", base+landing, err, body)
	}
}

// authCookie is the browser's authorization cookie for base.
func authCookie(t *testing.T, ctx context.Context, base string) *network.Cookie {
	t.Helper()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cookies {
		if c.Name == "authorization" {
			return c
		}
	}
	t.Fatalf("no authorization cookie for %s (%d cookies)", base, len(res.Cookies))
	return nil
}

type fetchResult struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
}

// browserFetch runs fetch(path) in the page, with its cookies.
func browserFetch(t *testing.T, ctx context.Context, path string) fetchResult {
	t.Helper()
	js := fmt.Sprintf(`fetch(%q, {credentials: "same-origin"}).then(async r => ({status: r.status, body: await r.text()}))`, path)
	res, err := chromedp.Run(ctx, chromedp.Evaluate[fetchResult](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch %s: %v", path, err)
	}
	return res
}

// getStatus is the status of GET base+path without any credential.
func getStatus(t *testing.T, base, path string) int {
	t.Helper()
	resp, err := insecureClient().Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

var (
	ssoDev   = oidcUser{"dev", "dev-" + rand.Text()[:8], "dev@example.com", "Dev User", "dev,ops"}
	ssoGuest = oidcUser{"guest", "guest-" + rand.Text()[:8], "guest@example.com", "Guest User", "visitors"}
)

func TestSSOLogin(t *testing.T) {
	chromium, provider := ssoTools(t)
	s := startSSO(t, provider, false, nil, ssoDev)
	for _, path := range []string{"/api/v1/userinfo", "/api/v1/workflows/default"} {
		if code := getStatus(t, s.base, path); code != http.StatusUnauthorized {
			t.Errorf("GET %s without a cookie: %d, want 401", path, code)
		}
	}
	ctx := newBrowser(t, chromium)
	browserLogin(t, ctx, s.base, ssoDev, "/healthz")
	c := authCookie(t, ctx, s.base)
	value := strings.Trim(c.Value, `"`) // Go quotes a cookie value with a space, as Argo's
	if !c.HTTPOnly || !strings.HasPrefix(value, "Bearer v2:") || c.SameSite != network.CookieSameSiteLax || c.Path != "/" {
		t.Errorf("authorization cookie: httpOnly %t sameSite %q path %q value %.20q", c.HTTPOnly, c.SameSite, c.Path, c.Value)
	}
	if strings.HasPrefix(s.base, "https:") && !c.Secure {
		t.Error("the authorization cookie is not Secure on https")
	}
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie`)); err != nil || strings.Contains(v, "authorization") {
		t.Errorf("the page's script sees the cookie: %q %v", v, err)
	}
	res := browserFetch(t, ctx, "/api/v1/userinfo")
	var info struct {
		Issuer, Subject, Email, Name string
		EmailVerified                bool
		Groups                       []string
	}
	if res.Status != http.StatusOK || json.Unmarshal([]byte(res.Body), &info) != nil {
		t.Fatalf("userinfo: %d %s", res.Status, res.Body)
	}
	if info.Subject != "dev" || info.Email != "dev@example.com" || !info.EmailVerified || info.Name != "Dev User" ||
		strings.Join(info.Groups, ",") != "dev,ops" || !strings.HasPrefix(info.Issuer, "http://127.0.0.1:") {
		t.Errorf("userinfo %s", res.Body)
	}
	if res := browserFetch(t, ctx, "/api/v1/workflows/default"); res.Status != http.StatusOK {
		t.Errorf("list workflows: %d %s", res.Status, res.Body)
	}
	// A forged session is refused.
	forged := fmt.Sprintf(`fetch("/api/v1/workflows/default", {headers: {Authorization: %q}}).then(r => r.status)`,
		"Bearer v2:"+strings.Repeat("A", 40))
	if code, err := chromedp.Run(ctx, chromedp.Evaluate[int](forged, chromedp.EvalAwaitPromise)); err != nil || code != http.StatusUnauthorized {
		t.Errorf("a forged session: %d %v", code, err)
	}
}

func TestSSORBAC(t *testing.T) {
	chromium, provider := ssoTools(t)
	token := func(home string) {
		cmd := exec.Command(braidBin, "auth", "token", "create", "--name", "sso-dev", "--namespace", "default",
			"--verb", "list", "--rbac-rule", "'dev' in groups", "--rbac-rule-precedence", "1")
		cmd.Env = cleanEnv("BRAID_HOME=" + home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("braid auth token create: %v\n%s", err, out)
		}
	}
	s := startSSO(t, provider, true, token, ssoDev, ssoGuest)

	ctx := newBrowser(t, chromium)
	browserLogin(t, ctx, s.base, ssoDev, "/healthz")
	if res := browserFetch(t, ctx, "/api/v1/workflows/default"); res.Status != http.StatusOK {
		t.Errorf("dev lists default: %d %s", res.Status, res.Body)
	}
	if res := browserFetch(t, ctx, "/api/v1/workflows/other"); res.Status != http.StatusForbidden {
		t.Errorf("dev lists other: %d %s, want 403", res.Status, res.Body)
	}
	if res := browserFetch(t, ctx, "/api/v1/userinfo"); res.Status != http.StatusOK || !strings.Contains(res.Body, "sso-dev") {
		t.Errorf("dev's userinfo names the token: %d %s", res.Status, res.Body)
	}

	// Another user logs in in the same browser: the new session replaces the cookie.
	browserLogin(t, ctx, s.base, ssoGuest, "/healthz")
	if res := browserFetch(t, ctx, "/api/v1/workflows/default"); res.Status != http.StatusForbidden ||
		!strings.Contains(res.Body, "no RBAC rule matched") {
		t.Errorf("guest lists default: %d %s, want 403", res.Status, res.Body)
	}
}
