package kube_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// prepareNamespace creates a namespace named prefix plus a random suffix,
// with the default ServiceAccount and kube-root-ca.crt ConfigMap that no
// controller creates on the hack/kube cluster. The namespace is deleted
// when the test ends (it stays Terminating: no namespace controller runs).
func prepareNamespace(t *testing.T, ctx context.Context, c *apiClient, prefix string) string {
	t.Helper()
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	ns := prefix + "-" + hex.EncodeToString(suffix)
	ca, err := c.servingCA(ctx)
	if err != nil {
		t.Fatal(err)
	}
	objs := []struct {
		path string
		obj  any
	}{
		{"/api/v1/namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}},
		{"/api/v1/namespaces/" + ns + "/serviceaccounts", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
		{"/api/v1/namespaces/" + ns + "/configmaps", &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": ca}}},
	}
	for _, o := range objs {
		if err := c.create(ctx, o.path, o.obj); err != nil {
			t.Fatalf("prepare namespace %s: %v", ns, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		zero := int64(0)
		opts := &metav1.DeleteOptions{GracePeriodSeconds: &zero}
		if _, err := c.do(ctx, http.MethodDelete, "/api/v1/namespaces/"+ns+"/pods", opts, nil); err != nil {
			t.Logf("delete pods in %s: %v", ns, err)
		}
		if _, err := c.do(ctx, http.MethodDelete, "/api/v1/namespaces/"+ns, nil, nil); err != nil {
			t.Logf("delete namespace %s: %v", ns, err)
		}
	})
	return ns
}

// waitPod polls the pod until it ends (Succeeded or Failed) and returns it.
func waitPod(ctx context.Context, c *apiClient, ns, name string) (*corev1.Pod, error) {
	for {
		var pod corev1.Pod
		if _, err := c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/"+name, nil, &pod); err != nil {
			return nil, err
		}
		switch pod.Status.Phase {
		case corev1.PodSucceeded, corev1.PodFailed:
			return &pod, nil
		}
		select {
		case <-ctx.Done():
			return &pod, fmt.Errorf("pod %s/%s still %s: %w", ns, name, pod.Status.Phase, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestPodSmoke runs real pods on the node, one per image that `make
// kube-images` imports, and checks phase, exit code and logs.
func TestPodSmoke(t *testing.T) {
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel) // not defer: the parallel subtests run after this function returns
	ns := prepareNamespace(t, ctx, c, "braid-smoke")
	tests := []struct {
		name     string
		image    string
		command  []string
		args     []string
		phase    corev1.PodPhase
		exitCode int32
		log      string
	}{
		{name: "busybox", image: "busybox:1.36", command: []string{"sh", "-c"},
			args: []string{"echo hello from $(hostname); ls /bin/sh >/dev/null"}, phase: corev1.PodSucceeded, log: "hello from busybox"},
		{name: "busybox-untagged", image: "busybox", command: []string{"echo", "untagged means latest"},
			phase: corev1.PodSucceeded, log: "untagged means latest"},
		{name: "exit-code", image: "busybox:1.36", command: []string{"sh", "-c", "echo failing; exit 3"},
			phase: corev1.PodFailed, exitCode: 3, log: "failing"},
		{name: "alpine", image: "alpine:3.23", command: []string{"sh", "-c", "cat /etc/os-release"},
			phase: corev1.PodSucceeded, log: "busybox"},
		{name: "argosay", image: "argoproj/argosay:v2", args: []string{"echo", "hello argosay"},
			phase: corev1.PodSucceeded, log: "hello argosay"},
		{name: "argosay-fails", image: "argoproj/argosay:v2", args: []string{"exit 1"},
			phase: corev1.PodFailed, exitCode: 1},
		{name: "braid", image: "braid:dev", args: []string{"version"}, phase: corev1.PodSucceeded, log: "braid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: tc.name},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "main", Image: tc.image, ImagePullPolicy: corev1.PullIfNotPresent,
						Command: tc.command, Args: tc.args,
					}},
				},
			}
			start := time.Now()
			if err := c.create(ctx, "/api/v1/namespaces/"+ns+"/pods", pod); err != nil {
				t.Fatal(err)
			}
			got, err := waitPod(ctx, c, ns, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: create -> %s in %v", tc.name, got.Status.Phase, time.Since(start).Round(time.Millisecond))
			if got.Status.Phase != tc.phase {
				t.Errorf("phase = %s, want %s (status: %+v)", got.Status.Phase, tc.phase, got.Status.ContainerStatuses)
			}
			if n := len(got.Status.ContainerStatuses); n != 1 || got.Status.ContainerStatuses[0].State.Terminated == nil {
				t.Fatalf("container statuses = %+v, want one terminated", got.Status.ContainerStatuses)
			}
			if code := got.Status.ContainerStatuses[0].State.Terminated.ExitCode; code != tc.exitCode {
				t.Errorf("exit code = %d, want %d", code, tc.exitCode)
			}
			logs, err := c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/"+tc.name+"/log?container=main", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(logs), tc.log) {
				t.Errorf("logs = %q, want them to contain %q", logs, tc.log)
			}
		})
	}
}

// nodeImages are the images hack/kube/images.sh imports (an untagged name
// means :latest); an example using another image cannot run on the node.
var nodeImages = []string{
	"braid:dev", "busybox:1.36", "busybox:latest", "alpine:3.23", "alpine:3.6", "debian:9.1", "debian:8.9",
	"debian:latest", "ubuntu:17.10", "argoproj/argosay:v2",
	"python:alpine3.23", "python:alpine3.6", "python:3.11", "python:3", "python:latest",
}

// missingImage returns the first image of an expected.tsv image column
// ("a,b:1,{{param}}=>[c|d]") that the node lacks, or "".
func missingImage(column string) string {
	for _, tok := range strings.Split(column, ",") {
		imgs := []string{tok}
		if _, list, ok := strings.Cut(tok, "=>["); ok {
			imgs = strings.Split(strings.TrimSuffix(list, "]"), "|")
		}
		for _, img := range imgs {
			img = strings.TrimSpace(img)
			if img == "" || img == "-" {
				continue
			}
			ref := img
			if !strings.Contains(ref[strings.LastIndex(ref, "/")+1:], ":") {
				ref += ":latest"
			}
			if !slices.Contains(nodeImages, ref) {
				return img
			}
		}
	}
	return ""
}

// corpusRow is one row of the conformance corpus's expected.tsv.
type corpusRow struct {
	path   string
	phase  string // "Succeeded", "Failed|Error", "Succeeded|Failed(random)", "n/a", ...
	needs  string // "none" or a comma-separated list
	images string
	action string // none, resume, apply-only, ...
}

// wantPhases are the phases the row accepts.
func (r corpusRow) wantPhases() []string {
	return strings.Split(strings.ReplaceAll(r.phase, "(random)", ""), "|")
}

// conformanceCorpus returns the corpus directory ($BRAID_CONFORMANCE_DIR,
// else ../shared/conformance beside the repository) and its rows by path;
// the test skips when the corpus is absent.
func conformanceCorpus(t *testing.T) (string, map[string]corpusRow) {
	t.Helper()
	dir := os.Getenv("BRAID_CONFORMANCE_DIR")
	if dir == "" {
		dir = filepath.Join(repoRootDir(), "..", "shared", "conformance")
	}
	data, err := os.ReadFile(filepath.Join(dir, "expected.tsv"))
	if err != nil {
		if os.Getenv("BRAID_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("no conformance corpus at %s, and BRAID_REQUIRE_CONFORMANCE=1 (set BRAID_CONFORMANCE_DIR): %v", dir, err)
		}
		t.Skipf("no conformance corpus: %v", err)
	}
	rows := map[string]corpusRow{}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		c := strings.Split(line, "\t")
		if len(c) < 9 {
			continue
		}
		rows[c[0]] = corpusRow{path: c[0], phase: c[2], needs: c[4], images: c[5], action: c[8]}
	}
	if len(rows) == 0 {
		t.Fatalf("%s/expected.tsv has no rows", dir)
	}
	return dir, rows
}

// exampleResult is how one corpus example ended on the backend.
type exampleResult struct {
	row      corpusRow
	got, msg string
	err      error
	took     time.Duration
}

func (r exampleResult) passed() bool {
	return r.err == nil && slices.Contains(r.row.wantPhases(), r.got)
}

// runExamples runs the rows on the backend, workers at a time, and returns
// their results in path order.
func (b *backend) runExamples(ctx context.Context, dir string, rows []corpusRow, workers int) []exampleResult {
	jobs := make(chan corpusRow)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results []exampleResult
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for row := range jobs {
				r := b.runExample(ctx, dir, row)
				if !r.passed() && drawsAtRandom(dir, row.path) {
					r = b.runExample(ctx, dir, row) // a random exit code may fail every retry once in a while
				}
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			}
		}()
	}
	for _, row := range rows {
		jobs <- row
	}
	close(jobs)
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].row.path < results[j].row.path })
	return results
}

// drawsAtRandom: the example picks exit codes at random (retry-container
// fails all of its retries once in a while), so a failure earns one more run.
func drawsAtRandom(dir, path string) bool {
	data, err := os.ReadFile(filepath.Join(dir, path))
	return err == nil && bytes.Contains(data, []byte("random."))
}

// runExample submits one example through braid server, does what its
// action column asks (resume: one `braid resume` once a suspend node
// waits), and waits for the workflow to complete.
func (b *backend) runExample(ctx context.Context, dir string, row corpusRow) (r exampleResult) {
	r.row = row
	start := time.Now()
	defer func() { r.took = time.Since(start) }()
	out, err := b.cli(ctx, "submit", filepath.Join(dir, row.path), "-o", "name")
	if err != nil {
		r.err = err
		return r
	}
	name := strings.TrimSpace(lastLine(out))
	if row.action == "resume" {
		if err := b.resumeOnce(ctx, name); err != nil {
			r.err = err
			return r
		}
	}
	wf, err := b.waitPhase(ctx, name)
	if wf != nil {
		r.got, r.msg = string(wf.Status.Phase), wf.Status.Message
		if !slices.Contains(row.wantPhases(), r.got) {
			r.msg += failedNodes(wf)
		}
	}
	r.err = err
	return r
}

// failedNodes lists the messages of the workflow's failed pod nodes.
func failedNodes(wf *v1alpha1.Workflow) string {
	var out []string
	for _, n := range wf.Status.Nodes {
		if n.Type == v1alpha1.NodeTypePod && (n.Phase == v1alpha1.NodeFailed || n.Phase == v1alpha1.NodeError) {
			out = append(out, fmt.Sprintf("%s: %s %q", n.DisplayName, n.Phase, n.Message))
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return ""
	}
	return "; failed nodes: " + strings.Join(out, "; ")
}

// resumeOnce waits until a suspend node of the workflow waits, then
// resumes the workflow with `braid resume` through the server.
func (b *backend) resumeOnce(ctx context.Context, name string) error {
	for {
		wf, err := b.workflow(ctx, name)
		if err == nil && wf.Status.Phase.Completed() {
			return fmt.Errorf("workflow %s completed (%s) before it suspended", name, wf.Status.Phase)
		}
		if err == nil && suspended(wf) {
			if _, err := b.cli(ctx, "resume", name); err != nil {
				return err
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("workflow %s never suspended: %w", name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// suspended: a suspend node of the workflow is running.
func suspended(wf *v1alpha1.Workflow) bool {
	for _, n := range wf.Status.Nodes {
		if n.Type == v1alpha1.NodeTypeSuspend && n.Phase == v1alpha1.NodeRunning {
			return true
		}
	}
	return false
}

// waitPhase waits for a workflow to complete without failing the test.
func (b *backend) waitPhase(ctx context.Context, name string) (*v1alpha1.Workflow, error) {
	for {
		wf, err := b.workflow(ctx, name)
		if err == nil && wf.Status.Phase.Completed() {
			return wf, nil
		}
		select {
		case <-ctx.Done():
			return wf, fmt.Errorf("workflow %s not completed: %w", name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// smokeSkip says why a smoke example cannot run on the hack/kube node, or "".
func smokeSkip(row corpusRow) string {
	if img := missingImage(row.images); img != "" {
		return "image " + img + " is not on the node (hack/kube/images.sh does not build it)"
	}
	switch row.action {
	case "none", "resume":
		return ""
	}
	return "action " + row.action + " is not done by this test"
}

// TestKubeSmoke submits the smoke set (../shared/conformance/smoke.txt)
// through braid server on the Kubernetes backend, each example to reach the
// phase expected.tsv gives it; suspend-template gets its one resume through
// the server. Every example of the set must run: none is skipped.
func TestKubeSmoke(t *testing.T) {
	dir, corpus := conformanceCorpus(t)
	smoke, err := os.ReadFile(filepath.Join(dir, "smoke.txt"))
	if err != nil {
		t.Skipf("no smoke set: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b := newBackend(t, ctx)
	var rows []corpusRow
	skipped := 0
	for _, line := range strings.Split(string(smoke), "\n") {
		path := strings.Fields(line + " #")[0]
		if strings.HasPrefix(path, "#") {
			continue
		}
		row, ok := corpus[path]
		if !ok {
			t.Fatalf("smoke example %s has no row in expected.tsv", path)
		}
		if why := smokeSkip(row); why != "" {
			skipped++
			t.Errorf("skip %-45s %s", path, why)
			continue
		}
		rows = append(rows, row)
	}
	results := b.runExamples(ctx, dir, rows, len(rows))
	passed := 0
	for _, r := range results {
		if r.passed() {
			passed++
			t.Logf("pass %-45s %-9s %s", r.row.path, r.got, r.took.Round(time.Millisecond))
			continue
		}
		t.Errorf("FAIL %-45s got %s (%s), want %s; %v", r.row.path, r.got, r.msg, r.row.phase, r.err)
	}
	t.Logf("smoke set on Kubernetes: %d passed, %d failed, %d skipped", passed, len(results)-passed, skipped)
	fmt.Printf("kube-smoke: %d passed, %d failed, %d skipped\n", passed, len(results)-passed, skipped)
}
