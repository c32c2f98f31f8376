package server

import (
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"testing"
)

// The raw log of a step is served in ranges: a range of a 256 MiB log is
// read without reading the log, and the usual errors say what is wrong.
func TestStepLogsRanges(t *testing.T) {
	srv, path := logServer(t)
	const size = 256 << 20
	writeOneLine(t, path, size)
	h := srv.Handler()
	get := func(target, rng string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "http://127.0.0.1"+target, nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec := get("/step-logs/argo/big/big", fmt.Sprintf("bytes=%d-%d", size-65536, size-1))
	runtime.ReadMemStats(&after)
	if rec.Code != 206 || rec.Body.Len() != 65536 || rec.Header().Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", size-65536, size-1, size) {
		t.Fatalf("range: %d, %d bytes, %q", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Range"))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("a 64 KiB range allocated %d MiB", alloc>>20)
	}
	// HEAD gives the size; the pod name works as the node ID does.
	req := httptest.NewRequest("HEAD", "http://127.0.0.1/step-logs/argo/big/big", nil)
	hrec := httptest.NewRecorder()
	h.ServeHTTP(hrec, req)
	if hrec.Code != 200 || hrec.Header().Get("Content-Length") != fmt.Sprint(size) || hrec.Header().Get("Accept-Ranges") != "bytes" {
		t.Errorf("HEAD: %d %v", hrec.Code, hrec.Header())
	}
	for _, tc := range []struct {
		target, rng string
		code        int
	}{
		{"/step-logs/argo/nope/big", "", 404},
		{"/step-logs/argo/big/nope", "", 404},
		{"/step-logs/argo/big/big", fmt.Sprintf("bytes=%d-", size+10), 416},
		{"/step-logs/argo/big/big?container=wait", "", 200},
	} {
		if rec := get(tc.target, tc.rng); rec.Code != tc.code {
			t.Errorf("%s %s: %d, want %d: %s", tc.target, tc.rng, rec.Code, tc.code, rec.Body.String())
		}
	}
	// A step with no log yet is an empty one.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if rec := get("/step-logs/argo/big/big", ""); rec.Code != 200 || rec.Body.Len() != 0 {
		t.Errorf("no log: %d %q", rec.Code, rec.Body.String())
	}
}
