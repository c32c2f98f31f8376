package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// example is one row of expected.tsv that braid run can check.
type example struct {
	path, phase string
}

type outcome struct {
	example
	got    string
	reason string
	took   time.Duration
}

// TestConformance runs, through braid run, every example that needs only a
// host: host_runnable=yes, needs=none, action=none and a single expected
// phase. It requires 95% to pass and every smoke example (but the one that
// needs a resume) to pass.
func TestConformance(t *testing.T) {
	dir := conformanceDir(t)
	examples, err := runnableExamples(filepath.Join(dir, "expected.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	smoke, err := smokeSet(filepath.Join(dir, "smoke.txt"))
	if err != nil {
		t.Fatal(err)
	}
	results := runAll(t, dir, examples, syncConfig(t))
	passed, failed := 0, 0
	for _, r := range results {
		if r.reason == "" {
			passed++
			t.Logf("pass %-55s %-9s %s", r.path, r.got, r.took.Round(time.Millisecond))
			continue
		}
		failed++
		t.Logf("FAIL %-55s want %s, got %s: %s", r.path, r.phase, r.got, r.reason)
		if smoke[r.path] {
			t.Errorf("smoke example %s failed: want %s, got %s: %s", r.path, r.phase, r.got, r.reason)
		}
	}
	t.Logf("%d passed, %d failed (%.1f%%)", passed, failed, 100*float64(passed)/float64(len(results)))
	fmt.Printf("conformance: %d passed, %d failed\n", passed, failed)
	if float64(passed) < 0.95*float64(len(results)) {
		t.Errorf("pass rate %d/%d is below 95%%", passed, len(results))
	}
}

// syncConfig writes the config the synchronization examples need: the
// ConfigMap my-config that their semaphores name, and the limits of their
// database semaphores (without them a workflow waits, as it should).
func syncConfig(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, file, `configMaps:
  my-config: {workflow: "1", template: "2"}
synchronization:
  limits: {default/workflow: 1, default/template: 2}
`)
	return file
}

func runnableExamples(tsv string) ([]example, error) { return examplesNeeding(tsv, "none") }

// examplesNeeding lists the host-runnable examples whose needs column is
// exactly needs, that need no action, and whose phase is fixed.
func examplesNeeding(tsv, want string) ([]example, error) {
	f, err := os.Open(tsv)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []example
	sc := bufio.NewScanner(f)
	header := true
	for sc.Scan() {
		if header {
			header = false
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 9 {
			continue
		}
		path, phase, needs, hostRunnable, action := c[0], c[2], c[4], c[6], c[8]
		if hostRunnable != "yes" || needs != want || action != "none" {
			continue
		}
		if phase != "Succeeded" && phase != "Failed" && phase != "Error" {
			continue
		}
		out = append(out, example{path: path, phase: phase})
	}
	return out, sc.Err()
}

func smokeSet(file string) (map[string]bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.Contains(line, "resume") {
			continue
		}
		out[strings.Fields(line)[0]] = true
	}
	return out, nil
}

// runAll runs the examples a few at a time and returns the outcomes in path order.
// runAll runs the examples a few at a time, each with braid run and the
// config file given ("" for none), and returns the outcomes in path order.
func runAll(t *testing.T, dir string, examples []example, config string) []outcome {
	const workers = 4
	jobs := make(chan example)
	var mu sync.Mutex
	var results []outcome
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ex := range jobs {
				r := runExample(t, dir, ex, config)
				if r.reason != "" && randomOutcome(dir, ex.path) {
					r = runExample(t, dir, ex, config) // a random exit code may fail every retry once in a while
				}
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			}
		}()
	}
	for _, ex := range examples {
		jobs <- ex
	}
	close(jobs)
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].path < results[j].path })
	return results
}

func runExample(t *testing.T, dir string, ex example, config string) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), exampleTimeout())
	defer cancel()
	work := t.TempDir()
	// The corpus's WorkflowTemplates are available, as if created beforehand
	// (Argo's own e2e suite creates them before it submits these examples).
	args := []string{"run", "-o", "json", "--data-dir", filepath.Join(work, "home"),
		"--templates", filepath.Join(dir, "examples"), filepath.Join(dir, ex.path)}
	if config != "" {
		args = append(args, "--config", config)
	}
	cmd := exec.CommandContext(ctx, braidBin, args...)
	cmd.Dir = work
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := outcome{example: ex, took: time.Since(start)}
	var wf struct {
		Status struct {
			Phase   string `json:"phase"`
			Message string `json:"message"`
		} `json:"status"`
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &wf); jerr != nil {
		r.got = "none"
		r.reason = fmt.Sprintf("no workflow printed (%v): %s", err, lastLines(stderr.String(), 3))
		return r
	}
	r.got = wf.Status.Phase
	if r.got != ex.phase {
		r.reason = fmt.Sprintf("message %q; %s", wf.Status.Message, lastLines(stderr.String(), 3))
	}
	return r
}

// randomOutcome says whether an example draws its exit codes at random
// (retry-container fails all of its retries about once in 85 runs), so a
// failure earns it one more run.
func randomOutcome(dir, path string) bool {
	data, err := os.ReadFile(filepath.Join(dir, path))
	return err == nil && bytes.Contains(data, []byte("random."))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// exampleTimeout bounds one example: $BRAID_CONFORMANCE_TIMEOUT, default 5m
// (the template-level mutex examples hold a mutex 5 x 50 s in a row).
// examples/forever.yaml runs for 1,000 s by design and fails under the default.
func exampleTimeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("BRAID_CONFORMANCE_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 5 * time.Minute
}
