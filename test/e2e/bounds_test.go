package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// maxServerRSS is the peak RSS (VmHWM) the server may reach for any one
// hostile input of issue 15.
const maxServerRSS = 512 << 20

// storedWorkflows is how many completed workflows the list case reads.
const storedWorkflows = 10000

// boundsCase is one hostile input sent to a running server, with the outcome
// it must get.
type boundsCase struct {
	name string
	run  func(t *testing.T, s *crashServer)
}

// TestBounds sends each hostile input of issue 15 to one real braid server
// and checks its clear outcome, that the server stays up, and that its peak
// RSS stays at or under 512 MiB for each of them.
func TestBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("long: stores 10,000 workflows and writes a 1 GB log")
	}
	s := &crashServer{t: t, home: t.TempDir()}
	writeFile(t, filepath.Join(s.home, "config.yaml"), "isolation: none\n")
	seedWorkflows(t, s.home, storedWorkflows, completedWorkflow)
	s.start()
	t.Cleanup(func() { s.kill() })

	cases := []boundsCase{
		{"recursion bomb", caseRecursionBomb},
		{"wide recursion bomb", caseWideBomb},
		{"nested repeat expression", caseExpression(`{{=len(sprig.repeat(100000, sprig.repeat(100000, 'x')))}}`)},
		{"repeat 2e9 expression", caseExpression(`{{=len(sprig.repeat(2000000000, 'x'))}}`)},
		{"loop of 1,048,576", caseHugeLoop},
		{"terminate in a long loop", caseTerminateLoop},
		{"full list of 10,000", caseFullList},
		{"one 1 GB log line", caseHugeLogLine},
		{"100,000 templates", caseManyTemplates},
		{"directory artifact without archive", caseDirectoryArtifact},
		{"escaped slash in a path", caseEscapedSlash},
		{"DAG ends Error", caseDAGError},
	}
	for _, c := range cases {
		pid := s.cmd.Process.Pid
		resetPeakRSS(t, pid)
		t.Run(c.name, func(t *testing.T) { c.run(t, s) })
		s.mustBeUp(t, c.name)
		peak := peakRSS(t, pid)
		t.Logf("%s: server peak RSS %.1f MiB", c.name, float64(peak)/(1<<20))
		if peak > maxServerRSS {
			t.Errorf("%s: server peak RSS %.1f MiB, over %d MiB", c.name, float64(peak)/(1<<20), maxServerRSS>>20)
		}
	}
}

// mustBeUp fails the test when the server process has exited or does not
// answer /readyz.
func (s *crashServer) mustBeUp(t *testing.T, after string) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("after %s the server is gone: %v\n%s", after, err, tail(s.log.String()))
	}
	resp, err := s.srv.get("/readyz")
	if err != nil {
		t.Fatalf("after %s the server does not answer: %v\n%s", after, err, tail(s.log.String()))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("after %s /readyz is %s", after, resp.Status)
	}
}

// runToEnd submits src and waits until the workflow completes. It polls
// the phase alone (a bomb's workflow is large), then reads the whole
// workflow once.
func (s *crashServer) runToEnd(t *testing.T, src string) (string, crashWF) {
	t.Helper()
	name, err := s.submit(src)
	if err != nil {
		t.Fatal(err)
	}
	// A fixed gap: callers time the run.
	err = testutil.PollEvery(3*time.Minute, 50*time.Millisecond, func() error {
		var wf crashWF
		resp, err := s.srv.get("/api/v1/workflows/default/" + name + "?fields=status.phase")
		if err != nil {
			return err
		}
		err = json.NewDecoder(resp.Body).Decode(&wf)
		resp.Body.Close()
		if err == nil && !completed(wf) {
			err = fmt.Errorf("phase %q", wf.Status.Phase)
		}
		return err
	})
	if err != nil {
		t.Fatalf("%s: not completed: %v\n%s", name, err, tail(s.log.String()))
	}
	wf, err := s.get(name)
	if err != nil {
		t.Fatal(err)
	}
	return name, wf
}

// mentions reports whether the workflow's message, or one of its nodes'
// messages, contains each of want.
func mentions(wf crashWF, want ...string) bool {
	msgs := []string{wf.Status.Message}
	for _, n := range wf.Status.Nodes {
		msgs = append(msgs, n.Message)
	}
	for _, w := range want {
		found := false
		for _, m := range msgs {
			found = found || strings.Contains(m, w)
		}
		if !found {
			return false
		}
	}
	return true
}

func expectEnded(t *testing.T, wf crashWF, phases string, want ...string) {
	t.Helper()
	if !strings.Contains(phases, wf.Status.Phase) || wf.Status.Phase == "" {
		t.Errorf("phase %s (%q), want one of %s", wf.Status.Phase, wf.Status.Message, phases)
	}
	if wf.Status.Message == "" {
		t.Errorf("a %s workflow has no status.message", wf.Status.Phase)
	}
	if !mentions(wf, want...) {
		t.Errorf("no message names %q; workflow message %q", want, wf.Status.Message)
	}
}

func caseRecursionBomb(t *testing.T, s *crashServer) {
	_, wf := s.runToEnd(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: bomb-}
spec:
  entrypoint: bomb
  templates:
  - name: bomb
    steps:
    - - {name: a, template: bomb}
      - {name: b, template: bomb}
`)
	expectEnded(t, wf, "Error Failed", "limit")
	t.Logf("bomb: %d nodes, message %.200q", len(wf.Status.Nodes), wf.Status.Message)
}

// caseWideBomb recurses ten ways at each of six levels, so it passes
// limits.maxNodes (a million steps) long before limits.maxDepth.
func caseWideBomb(t *testing.T, s *crashServer) {
	_, wf := s.runToEnd(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: wide-bomb-}
spec:
  entrypoint: bomb
  arguments: {parameters: [{name: d, value: "0"}]}
  templates:
  - name: bomb
    inputs: {parameters: [{name: d}]}
    steps:
    - - name: a
        template: bomb
        withSequence: {count: "10"}
        arguments: {parameters: [{name: d, value: "{{=asInt(inputs.parameters.d) + 1}}"}]}
        when: "{{inputs.parameters.d}} < 6"
`)
	expectEnded(t, wf, "Error Failed", "limits.maxNodes")
	t.Logf("wide bomb: %d nodes, message %.200q", len(wf.Status.Nodes), wf.Status.Message)
}

func caseExpression(expression string) func(t *testing.T, s *crashServer) {
	return func(t *testing.T, s *crashServer) {
		_, wf := s.runToEnd(t, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: expr-}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: s
        template: echo
        arguments: {parameters: [{name: p, value: %q}]}
  - name: echo
    inputs: {parameters: [{name: p}]}
    container: {image: busybox, command: [echo, "{{inputs.parameters.p}}"]}
`, expression))
		// The step group errors, as for any argument that does not resolve.
		expectEnded(t, wf, "Error Failed", "expression exceeded its budget")
	}
}

func caseHugeLoop(t *testing.T, s *crashServer) {
	_, wf := s.runToEnd(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: loop-}
spec:
  entrypoint: main
  templates:
  - name: main
    parallelism: 2
    steps:
    - - {name: s, template: nap, withSequence: {count: "1048576"}}
  - name: nap
    container: {image: busybox, command: ["true"]}
`)
	expectEnded(t, wf, "Error Failed", "limits.maxLoopItems")
}

// caseTerminateLoop terminates a workflow in the middle of a loop of the
// largest allowed length; it must end within a second or so.
func caseTerminateLoop(t *testing.T, s *crashServer) {
	name, err := s.submit(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: long-loop-}
spec:
  entrypoint: main
  templates:
  - name: main
    parallelism: 2
    steps:
    - - {name: s, template: nap, withSequence: {count: "100000"}}
  - name: nap
    container: {image: busybox, command: [sleep, "30"]}
`)
	if err != nil {
		t.Fatal(err)
	}
	s.waitFor(name, "running two steps", func(wf crashWF) bool { return countNodes(wf, "Running") == 2 })
	start := time.Now()
	resp, err := s.srv.do(mustRequest(t, http.MethodPut, s.srv.url("/api/v1/workflows/default/"+name+"/terminate"), "{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("terminate: %s", resp.Status)
	}
	wf := s.waitFor(name, "completed", completed)
	took := time.Since(start)
	t.Logf("terminated in %v", took.Round(time.Millisecond))
	if took > 3*time.Second {
		t.Errorf("terminate took %v; want about a second", took)
	}
	expectEnded(t, wf, "Failed", "Stopped with strategy 'Terminate'")
}

func mustRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

func caseFullList(t *testing.T, s *crashServer) {
	start := time.Now()
	resp, err := s.srv.get("/api/v1/workflows/default")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := time.Since(start)
	var list struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	t.Logf("full list: %d items, first byte %v, all %v", len(list.Items), first.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond))
	if resp.StatusCode != http.StatusOK || len(list.Items) < storedWorkflows {
		t.Fatalf("list: %s with %d items, want at least %d", resp.Status, len(list.Items), storedWorkflows)
	}
}

func caseHugeLogLine(t *testing.T, s *crashServer) {
	name, wf := s.runToEnd(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: loud-line-}
spec:
  entrypoint: main
  templates:
  - name: main
    script:
      image: busybox
      command: [sh]
      source: head -c 1073741824 /dev/zero | tr '\0' x
`)
	if wf.Status.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", wf.Status.Phase, wf.Status.Message)
	}
	base := "/api/v1/workflows/default/" + name + "/log?logOptions.container=main"
	for _, q := range []struct {
		query string
		max   int64
	}{
		{"&logOptions.tailLines=1", 2 << 20},
		{"&logOptions.tailLines=10&logOptions.limitBytes=1000", 4000},
		{"&logOptions.limitBytes=1048576", 2 << 20},
		{"", 2 << 30},
	} {
		start := time.Now()
		resp, err := s.srv.get(base + q.query)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t.Logf("log%s: %s, %d bytes in %v", q.query, resp.Status, n, time.Since(start).Round(time.Millisecond))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("log%s: %s, %v", q.query, resp.Status, err)
		}
		if n > q.max {
			t.Errorf("log%s: %d bytes, want at most %d", q.query, n, q.max)
		}
	}
}

func caseManyTemplates(t *testing.T, s *crashServer) {
	var b strings.Builder
	b.WriteString(`{"workflow":{"metadata":{"generateName":"many-"},"spec":{"entrypoint":"t0","templates":[`)
	for i := range 100000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","container":{"image":"busybox","command":["true"]}}`, i)
	}
	b.WriteString(`]}}}`)
	resp, err := s.srv.post("/api/v1/workflows/default", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("%d-byte workflow: %s %s", b.Len(), resp.Status, tail(string(body)))
	if resp.StatusCode >= 500 {
		t.Errorf("a %d-byte workflow got %s", b.Len(), resp.Status)
	}
}

func caseDirectoryArtifact(t *testing.T, s *crashServer) {
	name, wf := s.runToEnd(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: dir-art-}
spec:
  entrypoint: main
  templates:
  - name: main
    script:
      image: busybox
      command: [sh]
      source: mkdir -p /tmp/out/sub && echo a > /tmp/out/a.txt && echo b > /tmp/out/sub/b.txt
    outputs:
      artifacts:
      - {name: out, path: /tmp/out, archive: {none: {}}}
`)
	if wf.Status.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", wf.Status.Phase, wf.Status.Message)
	}
	resp, err := s.srv.get("/artifacts/default/" + name + "/" + name + "/out")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		if !strings.Contains(string(body), "sub/b.txt") {
			t.Errorf("the directory's tar stream does not hold sub/b.txt (%s, %d bytes)", resp.Header.Get("Content-Type"), len(body))
		}
	case http.StatusBadRequest:
		t.Logf("400: %s", body)
	default:
		t.Errorf("directory artifact: %s %s", resp.Status, body)
	}
}

func caseEscapedSlash(t *testing.T, s *crashServer) {
	for _, p := range []string{
		"/api/v1/workflows/default/a%2Fb",
		"/api/v1/workflows/default%2Fx/name",
		"/api/v1/workflow-templates/default/a%2F..%2Fb",
		"/api/v1/archived-workflows/a%2Fb",
		"/artifacts/default/a%2Fb/n/out",
	} {
		resp, err := s.srv.get(p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s %s; want 400 or 404", p, resp.Status, body)
		}
	}
}

func caseDAGError(t *testing.T, s *crashServer) {
	_, wf := s.runToEnd(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: dag-error-}
spec:
  entrypoint: d
  templates:
  - name: d
    dag:
      tasks:
      - {name: x, template: bad}
  - name: bad
    container: {image: busybox, command: [/no/such/command]}
`)
	expectEnded(t, wf, "Error")
}

// TestReadyAfterRecovery starts a server over 10,000 unfinished
// workflows: /readyz must not answer ready before they are recovered, a new
// workflow then runs at once, and the server's peak RSS stays within bounds.
func TestReadyAfterRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("long: stores 10,000 workflows")
	}
	s := &crashServer{t: t, home: t.TempDir()}
	writeFile(t, filepath.Join(s.home, "config.yaml"), "isolation: none\n")
	seedWorkflows(t, s.home, storedWorkflows, suspendedWorkflow)
	s.startUnready()
	t.Cleanup(func() { s.kill() })
	ready, saw := s.awaitReady()
	t.Logf("ready %v after start; not ready before: %q", ready.Round(time.Millisecond), saw)
	if saw == "" {
		t.Errorf("/readyz never answered 503 while recovering %d workflows", storedWorkflows)
	}
	start := time.Now()
	_, wf := s.runToEnd(t, workflowYAML("hello", "echo hello"))
	took := time.Since(start)
	t.Logf("a one-step workflow after recovery: %v", took.Round(time.Millisecond))
	if wf.Status.Phase != "Succeeded" {
		t.Errorf("hello after recovery: %s %s", wf.Status.Phase, wf.Status.Message)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("hello took %v after /readyz said ready: the recovery was not over", took)
	}
	peak := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("server peak RSS %.1f MiB", float64(peak)/(1<<20))
	if peak > maxServerRSS {
		t.Errorf("server peak RSS %.1f MiB over %d unfinished workflows, over %d MiB", float64(peak)/(1<<20), storedWorkflows, maxServerRSS>>20)
	}
}

// seedWorkflows writes n workflows, made by mk, straight into the stopped
// server's store.
func seedWorkflows(t *testing.T, home string, n int, mk func(i int) *v1alpha1.Workflow) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(home, "braid.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const batch = 500
	for i := 0; i < n; i += batch {
		err := st.Tx(ctx, func(tx *sqlite.Tx) error {
			for j := i; j < min(i+batch, n); j++ {
				if err := tx.Create(mk(j)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func seededWorkflow(name string) *v1alpha1.Workflow {
	return &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"seeded": "true"}},
		Spec: v1alpha1.WorkflowSpec{Entrypoint: "main", Templates: []v1alpha1.Template{{
			Name:      "main",
			Container: &corev1.Container{Image: "busybox", Command: []string{"echo", "hello"}},
		}}},
	}
}

func completedWorkflow(i int) *v1alpha1.Workflow {
	wf := seededWorkflow("done-" + strconv.Itoa(i))
	at := metav1.NewTime(time.Now().Add(-time.Duration(i) * time.Second))
	wf.Status = v1alpha1.WorkflowStatus{Phase: v1alpha1.WorkflowSucceeded, StartedAt: at, FinishedAt: at}
	return wf
}

func suspendedWorkflow(i int) *v1alpha1.Workflow {
	wf := seededWorkflow("held-" + strconv.Itoa(i))
	wf.Spec.Suspend = ptr(true)
	return wf
}

func ptr[T any](v T) *T { return &v }

// stop interrupts the server and waits for it to exit.
func (s *crashServer) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// peakRSS is the process's VmHWM in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	v, err := procStatusBytes(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// procStatusBytes reads a kB field of /proc/<pid>/status, in bytes.
func procStatusBytes(pid int, field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// resetPeakRSS sets the process's VmHWM back to its current RSS.
func resetPeakRSS(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
}

// TestQuarantineAfterCrashes kills the server, as an OOM would, while it
// reconciles a recursion bomb that the config lets grow without bound, as
// many times in a row as limits.quarantineAfterCrashes (3 by default). The
// next start quarantines that workflow, with no manual step, and runs a new
// one to Succeeded.
func TestQuarantineAfterCrashes(t *testing.T) {
	s := &crashServer{t: t, home: t.TempDir()}
	writeFile(t, filepath.Join(s.home, "config.yaml"), `isolation: none
limits: {maxNodes: 100000000, maxNodesPerPass: 100000000, maxDepth: 100000000}
`)
	s.start()
	t.Cleanup(func() { s.kill() })
	bomb, err := s.submit(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: bomb-}
spec:
  entrypoint: bomb
  templates:
  - name: bomb
    steps:
    - - {name: a, template: bomb}
      - {name: b, template: bomb}
`)
	if err != nil {
		t.Fatal(err)
	}
	const crashes = 3
	for i := range crashes {
		if i > 0 {
			s.startUnready()
		}
		s.killAtRSS(300 << 20)
	}
	s.start()
	wf := s.waitFor(bomb, "quarantined", completed)
	t.Logf("after %d crashes: %s %q", crashes, wf.Status.Phase, wf.Status.Message)
	if wf.Status.Phase != "Error" || !strings.Contains(wf.Status.Message, "quarantine") {
		t.Errorf("the bomb after %d crashes: %s %q; want Error, quarantined", crashes, wf.Status.Phase, wf.Status.Message)
	}
	_, hello := s.runToEnd(t, workflowYAML("hello", "echo hello"))
	if hello.Status.Phase != "Succeeded" {
		t.Errorf("hello after the quarantine: %s %s", hello.Status.Phase, hello.Status.Message)
	}
}

// killAtRSS waits until the server's RSS passes limit (the bomb is being
// reconciled), then kills it with SIGKILL.
func (s *crashServer) killAtRSS(limit int64) {
	s.t.Helper()
	pid := s.cmd.Process.Pid
	err := testutil.PollEvery(60*time.Second, 20*time.Millisecond, func() error {
		if rss := currentRSS(s.t, pid); rss <= limit {
			return fmt.Errorf("RSS %d MiB", rss>>20)
		}
		return nil
	})
	if err != nil {
		s.t.Fatalf("the server's RSS never passed %d MiB: %v\n%s", limit>>20, err, tail(s.log.String()))
	}
	s.kill()
}

// currentRSS is the process's VmRSS in bytes (0 once it has exited).
func currentRSS(t *testing.T, pid int) int64 {
	t.Helper()
	v, _ := procStatusBytes(pid, "VmRSS")
	return v
}
