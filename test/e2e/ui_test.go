package e2e

import (
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The UI is served at / with the secure defaults: a browser with no
// credential lands on the login page, logs in with the pasted local
// token, and reaches the workflow list.
func TestUILogin(t *testing.T) {
	s := newUISession(t)
	s.step("open",
		chromedp.Navigate(s.url("/")),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
	)
	s.checkAccessibility("login")
	s.step("paste the token",
		chromedp.SendKeys(chromedp.CSS(`#token`), s.srv.token),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		waitJS(`location.pathname === "/workflows"`),
	)
	loc := uiValue(s, "where", chromedp.Location())
	if want := s.url("/workflows"); loc != want {
		t.Errorf("after login at %s, want %s", loc, want)
	}
	s.step("user info",
		chromedp.Navigate(s.url("/userinfo")),
		waitText(`main`, "Subject"),
	)
	s.checkAccessibility("userinfo")
}

// TestUIReadmeScreenshot writes the README's picture of a running
// workflow's graph to $BRAID_UI_README_SHOT (skipped without it).
func TestUIReadmeScreenshot(t *testing.T) {
	out := os.Getenv("BRAID_UI_README_SHOT")
	if out == "" {
		t.Skip("set BRAID_UI_README_SHOT to the PNG to write")
	}
	s := newUISession(t)
	s.login()
	mustPost(t, s.srv, "/api/v1/workflows/default", `{"namespace":"default","workflow":{"metadata":{"name":"release"},"spec":{"entrypoint":"main","templates":[
	  {"name":"main","dag":{"tasks":[
	    {"name":"checkout","template":"work"},
	    {"name":"test","template":"work","dependencies":["checkout"],"withItems":["unit","lint","race","fuzz","e2e","bench"]},
	    {"name":"build","template":"work","dependencies":["checkout"]},
	    {"name":"approve","template":"approve","dependencies":["test","build"]},
	    {"name":"publish","template":"work","dependencies":["approve"]},
	    {"name":"announce","template":"work","dependencies":["publish"]}]}},
	  {"name":"work","container":{"image":"busybox","command":["true"]}},
	  {"name":"approve","suspend":{}}]}}}`)
	waitNodePhase(t, s.srv, "release", "approve", "Running", 2*time.Minute)
	s.step("open", chromedp.Navigate(s.url("/workflows/default/release")), waitJS(`!!document.querySelector('.graph[data-state="drawn"]')`),
		chromedp.Sleep(time.Second))
	png := uiValue(s, "shot", chromedp.Screenshot(chromedp.CSS(`main`)))
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
