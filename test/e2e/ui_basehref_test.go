package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/braidwf/braid/internal/testutil"
)

// Behind a reverse proxy that serves braid under /argo/ and strips the
// prefix (as argo-server is deployed with --base-href), the UI loads,
// logs in with the token and lists workflows: every URL it makes is
// relative to its <base href>.
func TestUIBaseHref(t *testing.T) {
	chromium := uiChromium(t)
	home := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd, done, log := startServerProcess(t, "--port", strconv.Itoa(port), "--data-dir", home, "--base-href", "/argo/")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var srv *braidServer
	testutil.Eventually(t, 15*time.Second, "braid server ready", func() error {
		select {
		case <-done:
			t.Fatalf("braid server exited:\n%s", log.String())
		default:
		}
		var err error
		if srv, err = readyServer(home, addr, cmd.Process.Pid); err != nil {
			return fmt.Errorf("%w\n%s", err, log.String())
		}
		return nil
	})
	target, _ := url.Parse("https://" + addr)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.URL.Path = "/" + strings.TrimPrefix(r.In.URL.Path, "/argo/")
			r.Out.URL.RawPath = ""
			r.Out.Host = addr
		},
		Transport: srv.client.Transport,
	}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ps := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/argo/") {
			http.NotFound(w, r) // only the prefix is braid's
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = ps.Serve(pl) }()
	t.Cleanup(func() { _ = ps.Close() })
	mustPost(t, srv, "/api/v1/workflows/default", `{"namespace":"default","workflow":{"metadata":{"name":"behind-proxy"},"spec":{"entrypoint":"main","templates":[{"name":"main","suspend":{}}]}}}`)

	s := &uiSession{t: t, srv: srv, ctx: newBrowserSized(t, chromium, 1400, 900)}
	base := "http://" + pl.Addr().String() + "/argo/"
	s.step("log in under the prefix",
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), srv.token),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		waitJS(`location.pathname === "/argo/workflows"`),
		waitText(`table`, "behind-proxy"))
	s.step("a workflow's page and its graph",
		clickText(`table a`, "behind-proxy"),
		waitJS(`location.pathname === "/argo/workflows/default/behind-proxy"`),
		waitJS(`!!document.querySelector('.graph[data-state="drawn"]')`))
}
