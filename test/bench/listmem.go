package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// listMem is L1: a real braid server holds count workflows, each suspended
// at its one step (a node each, and nothing runs), and the bench GETs the
// whole list over REST, as the UI and `argo list` do, with no limit. It
// reports, for the full list, the fields of `argo list` and names only:
// the time to the first byte of the body, the total time, the body size
// and how far the server's peak RSS (VmHWM, reset before each GET through
// /proc/<pid>/clear_refs) rose above its RSS before the GET.
type listMem struct {
	count   int
	clients int
	plain   bool // the server without TLS or client auth
}

// listMemResult is one GET's measurement.
type listMemResult struct {
	what             string
	firstByte, total time.Duration
	bytes            int64
	items            int
	growthKiB        int64 // the peak RSS during the GET over rssKiB
	rssKiB           int64 // the server's RSS before the first GET
	hwmReset         bool  // false: growth is against the server's lifetime peak
}

// argoListFields are the fields `argo list` asks for.
const argoListFields = "metadata,items.metadata.uid,items.metadata.name,items.metadata.namespace," +
	"items.metadata.creationTimestamp,items.metadata.labels,items.metadata.annotations,items.status.phase," +
	"items.status.message,items.status.finishedAt,items.status.startedAt,items.status.estimatedDuration," +
	"items.status.progress,items.spec.suspend"

// runL1 runs L1 once and prints a line per GET.
func runL1(bin, dir string, w listMem) error {
	res, created, err := w.run(bin, dir)
	if err != nil {
		return fmt.Errorf("L1: %w", err)
	}
	fmt.Printf("\nL1 (GET the whole list of %d stored workflows over REST, %s; created in %s):\n",
		w.count, serverKind(w.plain), created.Round(time.Millisecond))
	for _, r := range res {
		note := ""
		if !r.hwmReset {
			note = " (VmHWM could not be reset: growth over the server's lifetime peak)"
		}
		fmt.Printf("  %-18s first byte %s, total %s, %d items, %.1f MB; server RSS growth %.1f MiB over %.1f MiB%s\n",
			r.what, r.firstByte.Round(time.Millisecond), r.total.Round(time.Millisecond), r.items,
			float64(r.bytes)/1e6, float64(r.growthKiB)/1024, float64(r.rssKiB)/1024, note)
	}
	return nil
}

func (w listMem) run(bin, dir string) ([]listMemResult, time.Duration, error) {
	home := filepath.Join(dir, "home-l1")
	defer os.RemoveAll(home)
	srv, err := startServer(bin, home, filepath.Join(dir, "l1-server.log"), w.plain)
	if err != nil {
		return nil, 0, err
	}
	defer srv.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := waitReady(ctx, srv.client); err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if err := createAll(ctx, srv.client, w.count, w.clients, l1Workflow); err != nil {
		return nil, 0, err
	}
	created := time.Since(start)
	if err := waitIdle(ctx, srv.pid()); err != nil {
		return nil, 0, err
	}
	// The smallest list first, and each GET's growth counted from the RSS
	// before the first: memory one GET left to the Go heap counts against
	// the next, never for it.
	baseline := procStatusKiB(srv.pid(), "VmRSS:")
	var out []listMemResult
	for _, g := range []struct{ what, fields string }{
		{"names only", "items.metadata.name"},
		{"argo list fields", argoListFields},
		{"full list", ""},
	} {
		r, err := getList(ctx, srv, g.fields, baseline)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", g.what, err)
		}
		if r.items != w.count {
			return nil, 0, fmt.Errorf("%s: %d items, want %d", g.what, r.items, w.count)
		}
		r.what = g.what
		out = append(out, r)
	}
	return out, created, nil
}

// l1Workflow suspends at its only step: it gets a node and runs nothing.
func l1Workflow(i int64) *v1alpha1.Workflow {
	n := strconv.FormatInt(i, 10)
	return &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "l1-" + n, Labels: map[string]string{"bench": "l1"}},
		Spec: v1alpha1.WorkflowSpec{
			Entrypoint: "main",
			Arguments:  v1alpha1.Arguments{Parameters: []v1alpha1.Parameter{{Name: "n", Value: v1alpha1.AnyStringPtr(n)}}},
			Templates: []v1alpha1.Template{
				{Name: "main", Suspend: &v1alpha1.SuspendTemplate{}},
				{Name: "unused", Container: trueContainer()},
			},
		},
	}
}

// waitIdle waits until the server has used under 5% of a CPU for two
// seconds running: the controller has reconciled every new workflow.
func waitIdle(ctx context.Context, pid int) error {
	const period = time.Second
	quiet := 0
	last := cpuTime(pid)
	for quiet < 2 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("server did not go idle: %w", ctx.Err())
		case <-time.After(period):
		}
		now := cpuTime(pid)
		if now-last < period/20 {
			quiet++
		} else {
			quiet = 0
		}
		last = now
	}
	return nil
}

// cpuTime is a live process's user and system CPU time.
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command (which may hold spaces) start after ")".
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100
}

// getList GETs the whole list once and measures it; the RSS growth is
// the peak RSS during the GET over baseline (KiB).
func getList(ctx context.Context, srv *benchServer, fields string, baseline int64) (listMemResult, error) {
	var r listMemResult
	pid := srv.pid()
	r.hwmReset = resetPeakRSS(pid)
	path := "/api/v1/workflows/default"
	if fields != "" {
		path += "?fields=" + url.QueryEscape(fields)
	}
	start := time.Now()
	resp, err := srv.conn.Get(ctx, path)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		return r, fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	cr := &countingReader{r: resp.Body, start: start}
	items, err := countItems(cr)
	if err != nil {
		return r, fmt.Errorf("GET %s: %w", path, err)
	}
	r.total, r.firstByte, r.bytes, r.items = time.Since(start), cr.first, cr.n, items
	r.growthKiB = procStatusKiB(pid, "VmHWM:") - baseline
	r.rssKiB = baseline
	return r, nil
}

// countItems reads a list body to its end and counts its items, without
// holding it: the top-level "items" array's elements.
func countItems(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	var (
		depth, items int
		inString     bool
		escaped      bool
		sawArray     bool
	)
	for {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
				}
			case c == '"':
				inString = true
			case c == '{' || c == '[':
				depth++
				if depth == 2 && c == '[' {
					sawArray = true
				}
				if depth == 3 && sawArray {
					items++
				}
			case c == '}' || c == ']':
				depth--
				if depth == 1 {
					sawArray = false
				}
			}
		}
		if errors.Is(err, io.EOF) {
			if depth != 0 {
				return items, errors.New("the body ends inside a JSON value")
			}
			return items, nil
		}
		if err != nil {
			return items, err
		}
	}
}

// countingReader counts bytes and notes when the first one came.
type countingReader struct {
	r     io.Reader
	start time.Time
	first time.Duration
	n     int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 && c.n == 0 {
		c.first = time.Since(c.start)
	}
	c.n += int64(n)
	return n, err
}

// resetPeakRSS sets a live process's VmHWM back to its current RSS; false
// when the kernel refuses.
func resetPeakRSS(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// procStatusKiB reads a "kB" field of a live process's /proc/<pid>/status.
func procStatusKiB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}
