package e2e

import (
	"testing"

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
