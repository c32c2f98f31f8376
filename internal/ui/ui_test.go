package ui

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h, err := New("/argo")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, wantType, wantIn string
	}{
		{"/", "text/html; charset=utf-8", `<base href="/argo/">`},
		{"/workflows/argo/hello", "text/html; charset=utf-8", `<base href="/argo/">`},
		{"/index.html", "text/html; charset=utf-8", `<base href="/argo/">`},
		{"/app.js", "text/javascript; charset=utf-8", ""},
		{"/app.css", "text/css; charset=utf-8", ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != 200 || rec.Header().Get("Content-Type") != tc.wantType {
			t.Errorf("%s: %d %q", tc.path, rec.Code, rec.Header().Get("Content-Type"))
		}
		if !strings.Contains(rec.Body.String(), tc.wantIn) {
			t.Errorf("%s: body lacks %q", tc.path, tc.wantIn)
		}
		if tc.wantType == "text/html; charset=utf-8" && !strings.Contains(rec.Header().Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("%s: no CSP", tc.path)
		}
	}
	// gzip, and 304 on the ETag.
	req := httptest.NewRequest("GET", "/app.js?v=1", nil)
	req.Header.Set("Accept-Encoding", "gzip, br")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "gzip" || !strings.Contains(rec.Header().Get("Cache-Control"), "immutable") {
		t.Fatalf("headers %v", rec.Header())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); len(b) == 0 {
		t.Error("empty app.js")
	}
	req = httptest.NewRequest("GET", "/app.js", nil)
	req.Header.Set("If-None-Match", rec.Header().Get("ETag"))
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}

func TestNormalizeBaseHref(t *testing.T) {
	for in, want := range map[string]string{"": "/", "/": "/", "argo": "/argo/", "/a/b/": "/a/b/", "/a/b": "/a/b/"} {
		if got, err := NormalizeBaseHref(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{`/a"><script>`, "/a/../b", "//evil.example", "/a?x", "/a b"} {
		if _, err := NormalizeBaseHref(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// The JavaScript a page loads first stays within 500 KB gzipped (the
// graph's layout worker is loaded later, by the pages that draw one).
func TestInitialJavaScriptBudget(t *testing.T) {
	h, err := New("/")
	if err != nil {
		t.Fatal(err)
	}
	js := h.files["app.js"]
	size := len(js.data)
	if js.gz != nil {
		size = len(js.gz)
	}
	t.Logf("app.js: %d bytes, %d gzipped", len(js.data), size)
	if size > 500_000 {
		t.Errorf("app.js is %d bytes gzipped, over the 500 KB budget", size)
	}
}
