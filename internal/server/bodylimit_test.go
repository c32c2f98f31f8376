package server

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/store/sqlite"
)

// manyTemplates is a create body of n one-line container templates.
func manyTemplates(name string, n int) string {
	var b strings.Builder
	b.WriteString(`{"workflow":{"metadata":{"name":"` + name + `"},"spec":{"entrypoint":"t000000","templates":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%06d","container":{"image":"alpine","command":["true"]}}`, i)
	}
	b.WriteString(`]}}}`)
	return b.String()
}

// The largest body the server takes, filled with as many templates as fit
// (about 45,000), is created in bounded time and memory; one byte more is
// a 413 that reads none of it.
func TestCreateLargestBody(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: creating 45,000 templates takes seconds")
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := New(Options{Store: st, Capabilities: sqliteCaps(st), Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	n := 1
	for len(manyTemplates("big", n*2)) <= KubernetesMaxRequestBytes {
		n *= 2
	}
	for step := n / 2; step > 0; step /= 2 {
		if len(manyTemplates("big", n+step)) <= KubernetesMaxRequestBytes {
			n += step
		}
	}
	body := manyTemplates("big", n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	peak, stop := samplePeakHeap()
	start := time.Now()
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("POST", "http://127.0.0.1/api/v1/workflows/argo", strings.NewReader(body)))
	took := time.Since(start)
	stop()
	runtime.ReadMemStats(&after)
	if rec.Code != 200 {
		t.Fatalf("create %d templates (%d bytes): %d %.300s", n, len(body), rec.Code, rec.Body.String())
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("created %d templates (%d bytes) in %s, allocating %d MiB in all; peak heap %d MiB (%d MiB before)",
		n, len(body), took.Round(time.Millisecond), alloc>>20, *peak>>20, before.HeapInuse>>20)
	// Measured at 230-310 MiB (GC timing varies it): the request's Struct,
	// the YAML tree, the Workflow and the response's Struct are never all
	// held at once.
	if *peak > 360<<20 {
		t.Errorf("peak heap %d MiB for the largest body: over the server's budget", *peak>>20)
	}

}

// A body over the bound with no Content-Length (chunked) is refused as it
// is read, with the same 413 as one whose Content-Length says so.
func TestCreateChunkedTooLarge(t *testing.T) {
	srv, _ := badServer(t)
	body := createBody(`{"name":"big","annotations":{"a":"`+strings.Repeat("x", KubernetesMaxRequestBytes)+`"}}`, okSpec)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "http://127.0.0.1/api/v1/workflows/argo", io.MultiReader(strings.NewReader(body)))
	req.ContentLength = -1
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 413 || !strings.Contains(rec.Body.String(), `{"code":8,"message":"Request entity too large: limit is 3145728"}`) {
		t.Errorf("a chunked body of %d bytes: %d %.300s", len(body), rec.Code, rec.Body.String())
	}
}

// samplePeakHeap samples the heap in use every 5 ms until stop is called,
// and then holds its peak.
func samplePeakHeap() (*uint64, func()) {
	var peak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return &peak, func() { close(done); <-stopped }
}
