package e2e

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/testutil"
)

// crashServer is a `braid server` on a data directory that a test kills
// with SIGKILL and starts again.
type crashServer struct {
	t    *testing.T
	home string
	// srv reaches the running server, over TLS with the local token; a
	// start replaces it (the port changes, the certificate and the token
	// stay with the data directory).
	srv  *braidServer
	cmd  *exec.Cmd
	log  *syncBuffer
	addr string
}

func newCrashServer(t *testing.T) *crashServer {
	t.Helper()
	s := &crashServer{t: t, home: t.TempDir()}
	// The steps count their runs in a marker file on the host, which a step
	// in its own root view cannot reach: these tests are about durability,
	// so the steps run as plain processes.
	if err := os.WriteFile(filepath.Join(s.home, "config.yaml"), []byte("isolation: none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.start()
	t.Cleanup(func() { s.kill() })
	return s
}

// start runs the server on a free port and waits until it is ready.
func (s *crashServer) start() {
	s.t.Helper()
	s.startUnready()
	err := testutil.Poll(20*time.Second, func() error {
		srv, err := readyServer(s.home, s.addr, s.cmd.Process.Pid)
		if err == nil {
			s.srv = srv
		}
		return err
	})
	if err != nil {
		s.t.Fatalf("server not ready: %v\n%s", err, s.log.String())
	}
}

// startUnready runs the server on a free port and returns at once.
func (s *crashServer) startUnready() {
	s.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.addr = fmt.Sprintf("127.0.0.1:%d", port)
	s.log = &syncBuffer{}
	s.cmd = exec.Command(braidBin, "server", "--port", fmt.Sprint(port), "--data-dir", s.home)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.Env = cleanEnv()
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	if s.srv != nil {
		s.srv.client.CloseIdleConnections()
	}
}

// awaitReady polls /readyz of a server that startUnready started until it
// answers 200, and then connects to it as start does. It returns how long
// that took since now, and the last answer other than 200 it saw.
func (s *crashServer) awaitReady() (time.Duration, string) {
	s.t.Helper()
	start := time.Now()
	probe := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // only /readyz, which is public
	defer probe.CloseIdleConnections()
	var saw string
	var took time.Duration
	// A fixed, short gap: callers time this and look for a 503.
	err := testutil.PollEvery(120*time.Second, 10*time.Millisecond, func() error {
		resp, err := probe.Get("https://" + s.addr + "/readyz")
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			saw = fmt.Sprintf("%s %s", resp.Status, strings.TrimSpace(string(body)))
			return errors.New(saw)
		}
		took = time.Since(start)
		return nil
	})
	if err != nil {
		s.t.Fatalf("server not ready: %v\n%s", err, tail(s.log.String()))
	}
	s.connect()
	return took, saw
}

// connect connects to the ready server that startUnready started.
func (s *crashServer) connect() {
	s.t.Helper()
	srv, err := readyServer(s.home, s.addr, s.cmd.Process.Pid)
	if err != nil {
		s.t.Fatal(err)
	}
	s.srv = srv
}

// kill stops the server with SIGKILL, as a crash would.
func (s *crashServer) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// submit posts a workflow; it returns the created name, or "" when the
// request failed (the server died during it).
func (s *crashServer) submit(src string) (string, error) {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(src), &obj); err != nil {
		s.t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"workflow": obj})
	resp, err := s.srv.post("/api/v1/workflows/default", body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("submit: %d %s", resp.StatusCode, data)
	}
	var wf struct {
		Metadata struct{ Name string } `json:"metadata"`
	}
	if err := json.Unmarshal(data, &wf); err != nil {
		return "", err
	}
	return wf.Metadata.Name, nil
}

// crashWF is the part of a workflow the tests look at.
type crashWF struct {
	Status struct {
		Phase   string `json:"phase"`
		Message string `json:"message"`
		Nodes   map[string]struct {
			DisplayName string `json:"displayName"`
			Type        string `json:"type"`
			Phase       string `json:"phase"`
			Message     string `json:"message"`
		} `json:"nodes"`
	} `json:"status"`
}

func (s *crashServer) get(name string) (crashWF, error) {
	var wf crashWF
	resp, err := s.srv.get("/api/v1/workflows/default/" + name)
	if err != nil {
		return wf, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return wf, fmt.Errorf("get %s: %d", name, resp.StatusCode)
	}
	return wf, json.NewDecoder(resp.Body).Decode(&wf)
}

// waitFor polls a workflow until cond holds.
func (s *crashServer) waitFor(name string, what string, cond func(crashWF) bool) crashWF {
	s.t.Helper()
	var wf crashWF
	err := testutil.Poll(60*time.Second, func() error {
		var err error
		if wf, err = s.get(name); err == nil && !cond(wf) {
			err = fmt.Errorf("last %+v", wf.Status)
		}
		return err
	})
	if err != nil {
		s.t.Fatalf("%s: never %s: %v\n%s", name, what, err, s.log.String())
	}
	return wf
}

func completed(wf crashWF) bool {
	switch wf.Status.Phase {
	case "Succeeded", "Failed", "Error":
		return true
	}
	return false
}

func countNodes(wf crashWF, phase string) int {
	n := 0
	for _, node := range wf.Status.Nodes {
		if node.Type == "Pod" && node.Phase == phase {
			n++
		}
	}
	return n
}

// markerCounts counts the lines of the marker file: one per step that ran
// to its end.
func markerCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, line := range strings.Fields(string(data)) {
		counts[line]++
	}
	return counts
}

func assertOnce(t *testing.T, counts map[string]int) {
	t.Helper()
	for step, n := range counts {
		if n > 1 {
			t.Errorf("step %s ran to completion %d times", step, n)
		}
	}
}

// A DAG whose steps retry on any failure: killed with some steps done and
// others running, then started again, it succeeds, and every step ran to
// completion exactly once.
func TestCrashMidDAG(t *testing.T) {
	s := newCrashServer(t)
	marker := filepath.Join(t.TempDir(), "marker")
	name, err := s.submit(fmt.Sprintf(`
metadata: {name: mid-dag}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: work, arguments: {parameters: [{name: id, value: a}]}}
      - {name: b, template: work, depends: a, arguments: {parameters: [{name: id, value: b}]}}
      - {name: c, template: work, depends: a, arguments: {parameters: [{name: id, value: c}]}}
      - {name: d, template: work, depends: "b && c", arguments: {parameters: [{name: id, value: d}]}}
      - {name: e, template: work, depends: d, arguments: {parameters: [{name: id, value: e}]}}
  - name: work
    retryStrategy: {limit: 3, retryPolicy: Always}
    inputs: {parameters: [{name: id}]}
    container:
      image: alpine
      command: [sh, -c, "sleep 0.4; echo {{inputs.parameters.id}} >> %s"]
`, marker))
	if err != nil {
		t.Fatal(err)
	}
	s.waitFor(name, "with a finished step", func(wf crashWF) bool { return countNodes(wf, "Succeeded") >= 1 })
	s.kill()
	before := markerCounts(t, marker)
	s.start()
	wf := s.waitFor(name, "completed", completed)
	if wf.Status.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", wf.Status.Phase, wf.Status.Message)
	}
	counts := markerCounts(t, marker)
	assertOnce(t, counts)
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if counts[id] != 1 {
			t.Errorf("step %s completed %d times, want 1 (before the kill: %v)", id, counts[id], before)
		}
	}
}

// Workflows submitted while the server is killed: every one the server
// accepted completes after the restart, and no step completes twice.
func TestCrashDuringSubmit(t *testing.T) {
	s := newCrashServer(t)
	marker := filepath.Join(t.TempDir(), "marker")
	var (
		mu       sync.Mutex
		accepted []string
		wg       sync.WaitGroup
		next     int
		twenty   = make(chan struct{}) // closed at the 20th accepted workflow
	)
	// Four clients submit one workflow after another until the server dies.
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				name, err := s.submit(fmt.Sprintf(`
metadata: {name: sub-%d}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: one, template: work, arguments: {parameters: [{name: id, value: "%d-1"}]}}
    - - {name: two, template: work, arguments: {parameters: [{name: id, value: "%d-2"}]}}
  - name: work
    inputs: {parameters: [{name: id}]}
    container:
      image: alpine
      command: [sh, -c, "echo {{inputs.parameters.id}} >> %s"]
`, i, i, i, marker))
				if err != nil {
					return
				}
				mu.Lock()
				accepted = append(accepted, name)
				if len(accepted) == 20 {
					close(twenty)
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-twenty:
	case <-time.After(2 * time.Minute):
		t.Fatal("the server did not accept 20 workflows")
	}
	s.kill()
	wg.Wait()
	s.start()
	mu.Lock()
	defer mu.Unlock()
	if len(accepted) == 0 {
		t.Fatal("the server accepted nothing before the kill")
	}
	for _, name := range accepted {
		wf := s.waitFor(name, "completed", completed)
		// The steps run in the supervisor: the kill interrupts none of them.
		if wf.Status.Phase != "Succeeded" {
			t.Errorf("%s: %s: %s", name, wf.Status.Phase, wf.Status.Message)
		}
	}
	assertOnce(t, markerCounts(t, marker))
}

// Killed while a workflow's exit handler runs: after the restart the
// workflow completes, its main steps are not run again, and the exit
// handler completes once.
func TestCrashDuringExitHandler(t *testing.T) {
	s := newCrashServer(t)
	marker := filepath.Join(t.TempDir(), "marker")
	name, err := s.submit(fmt.Sprintf(`
metadata: {name: exit-crash}
spec:
  entrypoint: main
  onExit: cleanup
  templates:
  - name: main
    container: {image: alpine, command: [sh, -c, "echo main >> %[1]s"]}
  - name: cleanup
    retryStrategy: {limit: 2, retryPolicy: Always}
    container: {image: alpine, command: [sh, -c, "sleep 0.5; echo cleanup >> %[1]s"]}
`, marker))
	if err != nil {
		t.Fatal(err)
	}
	s.waitFor(name, "running its exit handler", func(wf crashWF) bool {
		for _, n := range wf.Status.Nodes {
			if strings.HasSuffix(n.DisplayName, "onExit") || strings.Contains(n.DisplayName, "onExit(") {
				if n.Phase == "Running" || n.Phase == "Pending" {
					return true
				}
			}
		}
		return false
	})
	s.kill()
	s.start()
	wf := s.waitFor(name, "completed", completed)
	if wf.Status.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", wf.Status.Phase, wf.Status.Message)
	}
	counts := markerCounts(t, marker)
	if counts["main"] != 1 || counts["cleanup"] != 1 {
		t.Fatalf("main ran %d times and cleanup %d times, want 1 and 1", counts["main"], counts["cleanup"])
	}
}
