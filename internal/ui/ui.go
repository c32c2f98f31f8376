package ui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed dist
var dist embed.FS

// csp is the pages' Content-Security-Policy: scripts, styles, workers and
// connections only from the server itself; images may also be data: and
// blob: URLs (artifact previews); frames only srcdoc ones (HTML artifact
// previews, sandboxed).
const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"worker-src 'self'; connect-src 'self'; frame-src 'self' about:; object-src 'none'; base-uri 'self'; " +
	"form-action 'self'; frame-ancestors 'none'"

// Handler serves the UI. Build it with New.
type Handler struct {
	files map[string]file
	index file
}

type file struct {
	data  []byte
	gz    []byte // data gzipped, when that is smaller
	etag  string
	ctype string
}

// New reads the embedded build; baseHref is the path the UI is served
// under as the browser sees it ("" or "/" for the root; a reverse proxy
// may strip it before the request reaches braid, as with argo-server).
func New(baseHref string) (*Handler, error) {
	base, err := NormalizeBaseHref(baseHref)
	if err != nil {
		return nil, err
	}
	h := &Handler{files: map[string]file{}}
	err = fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := dist.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "dist/")
		if name == "index.html" {
			data = bytes.Replace(data, []byte(`<base href="/">`), []byte(`<base href="`+html.EscapeString(base)+`">`), 1)
		}
		sum := sha256.Sum256(data)
		h.files[name] = file{data: data, gz: gzipped(data), etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: contentType(name)}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ui: read the embedded build: %w", err)
	}
	idx, ok := h.files["index.html"]
	if !ok {
		return nil, fmt.Errorf("ui: the embedded build has no index.html (run make ui)")
	}
	h.index = idx
	return h, nil
}

// NormalizeBaseHref checks a --base-href and gives it a leading and a
// trailing slash.
func NormalizeBaseHref(b string) (string, error) {
	if b == "" {
		return "/", nil
	}
	if !strings.HasPrefix(b, "/") {
		b = "/" + b
	}
	if !strings.HasSuffix(b, "/") {
		b += "/"
	}
	if strings.ContainsAny(b, "\"'<>\\?#% \t\r\n") || strings.Contains(b, "//") || path.Clean(b)+"/" != b && b != "/" {
		return "", fmt.Errorf("--base-href %q: give a plain path such as /argo/", b)
	}
	return b, nil
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// ServeHTTP serves a built file by its name, and index.html for any other
// path (a page's URL: the UI's router reads it).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	f, ok := h.files[name]
	if !ok || name == "index.html" {
		f = h.index
	}
	hd := w.Header()
	hd.Set("Content-Type", f.ctype)
	hd.Set("ETag", f.etag)
	if f.ctype == h.index.ctype {
		hd.Set("Content-Security-Policy", csp)
		hd.Set("Cache-Control", "no-cache")
	} else if r.URL.Query().Has("v") {
		// index.html names assets with their version: they never change.
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "no-cache")
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && inm == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Add("Vary", "Accept-Encoding")
	data := f.data
	if f.gz != nil && acceptsGzip(r) {
		data = f.gz
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("Content-Length", fmt.Sprint(len(data)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(data)
}

// gzipped is data compressed once at start, or nil when that saves little.
func gzipped(data []byte) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = zw.Write(data)
	_ = zw.Close()
	if b.Len() > len(data)*9/10 {
		return nil
	}
	return b.Bytes()
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
