package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	wfapi "github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// logTail is L2: a real braid server runs one step that prints one line of
// size bytes (no newline at all, as `head -c N /dev/zero | tr '\0' x`
// writes), then the bench GETs that step's log over REST with tailLines
// (and limitBytes), as `argo logs --tail` does. It reports, per query, the
// median time of the whole GET and the largest growth of the server's peak
// RSS above its RSS before the GET (VmHWM, reset through
// /proc/<pid>/clear_refs before each GET).
type logTail struct {
	size  int64
	runs  int
	plain bool // the server without TLS or client auth
}

// logTailResult is one query's measurement.
type logTailResult struct {
	query     string
	took      time.Duration // median
	bytes     int64
	growthKiB int64 // largest
	hwmReset  bool
}

// logTailQueries are the log options L2 measures.
var logTailQueries = []string{
	"logOptions.tailLines=10",
	"logOptions.tailLines=10&logOptions.limitBytes=1048576",
	"logOptions.tailLines=1",
}

// runL2 runs L2 and prints a line per query.
func runL2(bin, dir string, w logTail) error {
	res, wrote, err := w.run(bin, dir)
	if err != nil {
		return fmt.Errorf("L2: %w", err)
	}
	fmt.Printf("\nL2 (GET the log of a step that printed one %d MiB line, over REST, %s; the step took %s; median of %d):\n",
		w.size>>20, serverKind(w.plain), wrote.Round(time.Millisecond), w.runs)
	for _, r := range res {
		note := ""
		if !r.hwmReset {
			note = " (VmHWM could not be reset: growth over the server's lifetime peak)"
		}
		fmt.Printf("  %-55s %s, %.1f MB sent, server RSS growth %.1f MiB%s\n",
			r.query, r.took.Round(100*time.Microsecond), float64(r.bytes)/1e6, float64(r.growthKiB)/1024, note)
	}
	return nil
}

func (w logTail) run(bin, dir string) ([]logTailResult, time.Duration, error) {
	home := filepath.Join(dir, "home-l2")
	defer os.RemoveAll(home)
	srv, err := startServer(bin, home, filepath.Join(dir, "l2-server.log"), w.plain)
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
	if _, err := srv.client.CreateWorkflow(ctx, &wfapi.WorkflowCreateRequest{Namespace: "default", Workflow: l2Workflow(w.size)}); err != nil {
		return nil, 0, fmt.Errorf("create: %w", err)
	}
	if err := waitCompleted(ctx, srv.client, 1); err != nil {
		return nil, 0, err
	}
	wrote := time.Since(start)
	if err := waitIdle(ctx, srv.pid()); err != nil {
		return nil, 0, err
	}
	var out []logTailResult
	for _, q := range logTailQueries {
		r := logTailResult{query: q, hwmReset: true}
		var took []time.Duration
		for range max(w.runs, 1) {
			d, n, growth, reset, err := getLog(ctx, srv, q)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", q, err)
			}
			took = append(took, d)
			r.bytes, r.growthKiB, r.hwmReset = n, max(r.growthKiB, growth), r.hwmReset && reset
		}
		slices.Sort(took)
		r.took = took[len(took)/2]
		out = append(out, r)
	}
	return out, wrote, nil
}

// l2Workflow's one step prints size bytes of 'x' and no newline.
func l2Workflow(size int64) *v1alpha1.Workflow {
	return &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "l2"},
		Spec: v1alpha1.WorkflowSpec{
			Entrypoint: "main",
			Templates: []v1alpha1.Template{{Name: "main", Container: &corev1.Container{Image: "busybox", Command: []string{"sh", "-c",
				"head -c " + strconv.FormatInt(size, 10) + " /dev/zero | tr '\\0' x"}}}},
		},
	}
}

// getLog GETs the workflow's log once with query and measures it: the time
// to the end of the body, its size, and the server's RSS growth.
func getLog(ctx context.Context, srv *benchServer, query string) (took time.Duration, n, growthKiB int64, reset bool, err error) {
	pid := srv.pid()
	reset = resetPeakRSS(pid)
	before := procStatusKiB(pid, "VmRSS:")
	path := "/api/v1/workflows/default/l2/log?logOptions.container=main&" + query
	start := time.Now()
	resp, err := srv.conn.Get(ctx, path)
	if err != nil {
		return 0, 0, 0, reset, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		return 0, 0, 0, reset, fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	if n, err = io.Copy(io.Discard, resp.Body); err != nil {
		return 0, 0, 0, reset, fmt.Errorf("GET %s: %w", path, err)
	}
	took = time.Since(start)
	return took, n, procStatusKiB(pid, "VmHWM:") - before, reset, nil
}
