package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// uiSession is a braid server with the secure defaults and a headless
// Chromium on its UI. Each step of a test runs through step, which saves a
// screenshot of the page when the step fails.
type uiSession struct {
	t   *testing.T
	srv *braidServer
	ctx context.Context
}

// uiChromium finds chromium, or skips (fails with BRAID_REQUIRE_UI=1).
func uiChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BRAID_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "UI e2e: no chromium on PATH (set BRAID_CHROMIUM; hack/test-deps.sh installs it)"
	if os.Getenv("BRAID_REQUIRE_UI") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// newUISession starts a server on a fresh data directory and a browser.
func newUISession(t *testing.T) *uiSession {
	t.Helper()
	chromium := uiChromium(t)
	srv := startBraidServer(t, t.TempDir())
	return &uiSession{t: t, srv: srv, ctx: newBrowserSized(t, chromium, 1400, 900)}
}

// newBrowserSized is newBrowser with a window of w×h.
func newBrowserSized(t *testing.T, chromium string, w, h int) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.IgnoreCertErrors, // braid's self-signed certificate
		chromedp.WindowSize(w, h),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// Start the browser on the tab's own context: the first action
	// allocates it, and a step's shorter context must not own it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// screenshotDir is where failing steps leave their screenshots:
// $BRAID_UI_SCREENSHOTS, else <tmp>/braid-ui-screenshots.
func screenshotDir() string {
	if d := os.Getenv("BRAID_UI_SCREENSHOTS"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "braid-ui-screenshots")
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// step runs actions with a deadline; if they fail, it saves a screenshot
// and the page's text, and fails the test.
func (s *uiSession) step(name string, actions ...chromedp.Action[chromedp.Void]) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 60*time.Second)
	defer cancel()
	err := chromedp.Do(ctx, actions...)
	if err == nil {
		return
	}
	s.fail(name, err)
}

// value runs one action that returns a value, as step does.
func uiValue[T any](s *uiSession, name string, a chromedp.Action[T]) T {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		s.fail(name, err)
	}
	return v
}

// fail saves a screenshot and the page's text, and fails the test.
func (s *uiSession) fail(name string, err error) {
	s.t.Helper()
	shot := s.screenshot(name)
	loc, _ := chromedp.Run(s.ctx, chromedp.Location())
	text, _ := chromedp.Run(s.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
	s.t.Fatalf("step %q failed: %v\n  at %s\n  screenshot: %s\n  page text: %s", name, err, loc, shot, text)
}

// screenshot saves the page as a PNG and returns its path.
func (s *uiSession) screenshot(name string) string {
	dir := screenshotDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "(none: " + err.Error() + ")"
	}
	path := filepath.Join(dir, unsafeName.ReplaceAllString(s.t.Name()+"-"+name, "_")+".png")
	ctx, cancel := context.WithTimeout(s.ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return "(none: " + err.Error() + ")"
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return "(none: " + err.Error() + ")"
	}
	return path
}

// url is the UI's URL of a page path.
func (s *uiSession) url(path string) string { return s.srv.url(path) }

// waitText waits until the element sel contains text.
func waitText(sel, text string) chromedp.Action[chromedp.Void] {
	return waitJS(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.innerText.includes(%q); })()`, sel, text))
}

// waitJS waits until the expression is true. Unlike chromedp.Poll it
// survives the page navigating away (a login redirect) between two tries.
func waitJS(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var last error
		for {
			ok, err := chromedp.Evaluate[bool](expr)(ctx, t)
			if err == nil && ok {
				return chromedp.Void{}, nil
			}
			if err != nil {
				last = err
			}
			select {
			case <-ctx.Done():
				if last != nil {
					return chromedp.Void{}, fmt.Errorf("waiting for %s: %w (last error: %v)", expr, ctx.Err(), last)
				}
				return chromedp.Void{}, fmt.Errorf("waiting for %s: %w", expr, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// axeViolation is one result of axe-core.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// axeSource is axe-core, from the UI's locked npm packages (make ui
// installs them).
func axeSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "ui", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("BRAID_REQUIRE_UI") == "1" {
			t.Fatalf("axe-core: %v (run make ui)", err)
		}
		t.Skipf("axe-core: %v (run make ui)", err)
	}
	return string(b)
}

// checkAccessibility runs axe-core on the page and fails on a serious or
// critical violation.
func (s *uiSession) checkAccessibility(page string) {
	s.t.Helper()
	src := axeSource(s.t)
	s.step("axe-core "+page, chromedp.Evaluate[chromedp.Void](src+";undefined"))
	out := uiValue(s, "axe "+page, chromedp.Evaluate[string](
		`axe.run(document, {resultTypes: ['violations']}).then(r => JSON.stringify(r.violations))`, chromedp.EvalAwaitPromise))
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		s.t.Fatalf("axe on %s: %v", page, err)
	}
	var bad []string
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			var where []string
			for i, n := range v.Nodes {
				if i == 3 {
					where = append(where, "…")
					break
				}
				where = append(where, fmt.Sprint(n.Target...))
			}
			bad = append(bad, fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(where, ", ")))
		}
	}
	if len(bad) > 0 {
		shot := s.screenshot("axe-" + page)
		s.t.Errorf("accessibility of %s: %d serious violations (screenshot %s):\n  %s", page, len(bad), shot, strings.Join(bad, "\n  "))
	}
}

// clickText clicks the first enabled element matching sel whose text
// contains text (waiting for it to appear).
func clickText(sel, text string) chromedp.Action[chromedp.Void] {
	find := fmt.Sprintf(`[...document.querySelectorAll(%q)].find(e => e.innerText.includes(%q) && !e.disabled)`, sel, text)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := waitJS("!!"+find)(ctx, t); err != nil {
			return chromedp.Void{}, err
		}
		_, err := chromedp.Evaluate[chromedp.Void](find+".click()")(ctx, t)
		return chromedp.Void{}, err
	}
}

// setValue sets an input's value as typing would (an input event).
func setValue(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q);
	  const proto = e instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : e instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
	  Object.getOwnPropertyDescriptor(proto, 'value').set.call(e, %q);
	  e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, value))
}

// acceptDialogs makes confirm() answer yes in this document.
func acceptDialogs() chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`window.confirm = () => true; undefined`)
}
