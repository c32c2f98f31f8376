package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apiclient "github.com/braidwf/braid/pkg/apiclient/client"
)

// braidServer is a `braid server` started by a test on a free port, with
// the secure defaults: TLS with a self-signed certificate and client auth
// with the local token of its data directory.
type braidServer struct {
	addr string
	home string
	// fingerprint is the SHA-256 of the server's certificate, as its
	// server.json records it.
	fingerprint string
	// token is the local token of the data directory (braid_...).
	token string
	// pid is the server process's.
	pid int
	// client trusts exactly the server's certificate (pinned by its
	// fingerprint) and sends nothing on its own: do adds the token.
	client *http.Client
}

// startBraidServer starts `braid server` on home and stops it (by PID)
// when the test ends.
// startServerProcess starts `braid server args...` with a clean
// environment; when the test ends it is interrupted (killed after 10 s),
// and its log is shown if the test failed. done closes when it exits.
func startServerProcess(t *testing.T, args ...string) (*exec.Cmd, <-chan struct{}, *syncBuffer) {
	t.Helper()
	log := &syncBuffer{}
	cmd := exec.Command(braidBin, append([]string{"server"}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = cleanEnv()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	return cmd, done, log
}

func startBraidServer(t *testing.T, home string) *braidServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd, done, log := startServerProcess(t, "--port", strconv.Itoa(port), "--data-dir", home)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(15 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		srv, err := readyServer(home, addr, cmd.Process.Pid)
		if err == nil {
			t.Cleanup(srv.client.CloseIdleConnections)
			return srv
		}
		last = err
		select {
		case <-done:
			t.Fatalf("braid server exited:\n%s", log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("braid server not ready after 15s (%v):\n%s", last, log.String())
	return nil
}

// readyServer is the server of process pid on addr with its data in home,
// once it is ready: its server.json names addr and pid, and it answers
// /readyz over TLS with the certificate server.json pins.
func readyServer(home, addr string, pid int) (*braidServer, error) {
	var info struct {
		Address     string `json:"address"`
		PID         int    `json:"pid"`
		Secure      bool   `json:"secure"`
		Fingerprint string `json:"fingerprint"`
	}
	data, err := os.ReadFile(filepath.Join(home, "server.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, fmt.Errorf("server.json: %w", err)
	}
	if info.Address != addr || info.PID != pid {
		return nil, fmt.Errorf("server.json names %s (pid %d), not %s (pid %d)", info.Address, info.PID, addr, pid)
	}
	if !info.Secure || info.Fingerprint == "" {
		return nil, fmt.Errorf("server.json: the server does not serve TLS by default: %s", data)
	}
	token, err := os.ReadFile(filepath.Join(home, "token"))
	if err != nil {
		return nil, fmt.Errorf("the local token: %w", err)
	}
	tc, err := apiclient.TLSConfig(apiclient.Options{Address: addr, Secure: true, CertFingerprint: info.Fingerprint})
	if err != nil {
		return nil, err
	}
	srv := &braidServer{addr: addr, home: home, fingerprint: info.Fingerprint, token: strings.TrimSpace(string(token)), pid: pid,
		client: &http.Client{
			Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true},
			Timeout:   time.Minute,
		}}
	resp, err := srv.client.Get(srv.url("/readyz"))
	if err != nil {
		srv.client.CloseIdleConnections()
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		srv.client.CloseIdleConnections()
		return nil, fmt.Errorf("/readyz: %s", resp.Status)
	}
	return srv, nil
}

// url is the server's https URL of path.
func (s *braidServer) url(path string) string { return "https://" + s.addr + path }

// bearer is the Authorization header of the local token.
func (s *braidServer) bearer() string { return "Bearer " + s.token }

// env is the CLI's environment to talk to the server: its data directory,
// where the CLI finds the server's certificate fingerprint to pin and the
// local token to send, and its address; then extra.
func (s *braidServer) env(extra ...string) []string {
	return append([]string{"BRAID_HOME=" + s.home, "ARGO_SERVER=" + s.addr}, extra...)
}

// do sends req to the server with the local token (unless req has an
// Authorization header already).
func (s *braidServer) do(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", s.bearer())
	}
	return s.client.Do(req)
}

// get GETs path with the local token.
func (s *braidServer) get(path string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, s.url(path), nil)
	if err != nil {
		return nil, err
	}
	return s.do(req)
}

// post POSTs the JSON body to path with the local token.
func (s *braidServer) post(path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, s.url(path), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return s.do(req)
}

// curlArgs are the arguments with which the real curl trusts the server's
// certificate and sends the local token, then args.
func (s *braidServer) curlArgs(args ...string) []string {
	return append([]string{"--cacert", filepath.Join(s.home, "tls", "tls.crt"), "-H", "Authorization: " + s.bearer()}, args...)
}

// cleanEnv is the environment without the variables that choose a server
// or how to reach it.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "ARGO_SERVER", "BRAID_SERVER", "ARGO_HTTP1", "ARGO_NAMESPACE", "ARGO_TOKEN", "ARGO_SECURE",
			"ARGO_INSECURE_SKIP_VERIFY", "ARGO_BASE_HREF", "BRAID_HOME", "TERM":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// cliResult is one run of the CLI.
type cliResult struct {
	out, err string
	code     int
}

// braidCLI runs the CLI with env and args, within a minute.
func braidCLI(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(braidBin, args...)
	cmd.Env = cleanEnv(env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliResult{out.String(), errOut.String(), code}
}

// cliModes are the two transports every CLI test runs with.
var cliModes = []struct {
	name string
	env  []string
}{
	{"grpc", nil},
	{"http1", []string{"ARGO_HTTP1=true"}},
}

// expect runs the CLI and checks the exit code and that stdout holds want.
func expect(t *testing.T, env []string, code int, want string, args ...string) cliResult {
	t.Helper()
	r := braidCLI(t, env, args...)
	if r.code != code || !strings.Contains(r.out, want) {
		t.Fatalf("braid %s: exit %d (want %d), stdout lacks %q\nstdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), r.code, code, want, r.out, r.err)
	}
	return r
}

func workflowYAML(name, command string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: %s, labels: {suite: cli}}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: hello, template: say}
  - name: say
    container: {image: busybox, command: [sh, -c, %q]}
`, name, command)
}

// The workflow commands against a real braid server, over gRPC and over
// HTTP/1: submit --wait, list filters, get -o json, logs, delete.
func TestCLIWorkflowCommands(t *testing.T) {
	for _, mode := range cliModes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			srv := startBraidServer(t, filepath.Join(dir, "home"))
			env := srv.env(mode.env...)
			good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
			writeFile(t, good, workflowYAML("good", "echo hello from good"))
			writeFile(t, bad, workflowYAML("bad", "echo going down; exit 3"))

			expect(t, env, 0, "good Succeeded at ", "submit", good, "--wait")
			r := expect(t, env, 1, "bad Failed at ", "submit", bad, "--wait")
			if !strings.Contains(r.out, "Status:              Pending") {
				t.Fatalf("submit should print the created workflow first:\n%s", r.out)
			}
			expect(t, env, 0, "good\n", "list", "--status", "Succeeded", "-o", "name")
			if r := expect(t, env, 0, "bad\n", "list", "--status", "Failed,Error", "-o", "name"); strings.Contains(r.out, "good") {
				t.Fatalf("--status Failed listed good:\n%s", r.out)
			}
			expect(t, env, 0, "No workflows found", "list", "--running")
			expect(t, env, 0, "No workflows found", "list", "--prefix", "zzz")
			expect(t, env, 0, "No workflows found", "list", "-l", "suite=other")
			r = expect(t, env, 0, "NAME", "list", "--completed")
			if !strings.Contains(r.out, "good ") || !strings.Contains(r.out, "bad ") {
				t.Fatalf("list --completed:\n%s", r.out)
			}

			r = expect(t, env, 0, `"name": "good"`, "get", "good", "-o", "json")
			var wf struct {
				Metadata struct {
					Name, Namespace string
				}
				Status struct {
					Phase string
					Nodes map[string]struct {
						Type, Phase, DisplayName string
					}
				}
			}
			if err := json.Unmarshal([]byte(r.out), &wf); err != nil {
				t.Fatalf("get -o json is not JSON: %v\n%s", err, r.out)
			}
			pods := 0
			for _, n := range wf.Status.Nodes {
				if n.Type == "Pod" && n.DisplayName == "hello" && n.Phase == "Succeeded" {
					pods++
				}
			}
			if wf.Metadata.Namespace != "default" || wf.Status.Phase != "Succeeded" || pods != 1 {
				t.Fatalf("get -o json: %+v", wf)
			}
			expect(t, env, 0, "✔ hello", "get", "good")
			expect(t, env, 1, "", "get", "nope")

			expect(t, env, 0, ": hello from good", "logs", "good")
			expect(t, env, 0, ": going down", "logs", "bad")
			expect(t, env, 0, ": going down", "logs", "@latest", "--grep", "going")
			if r := expect(t, env, 0, "", "logs", "good", "--grep", "nothing-like-this"); r.out != "" {
				t.Fatalf("logs --grep printed lines that do not match:\n%s", r.out)
			}

			r = expect(t, env, 0, "Workflow 'good' deleted", "delete", "--completed")
			if !strings.Contains(r.out, "Workflow 'bad' deleted") {
				t.Fatalf("delete --completed:\n%s", r.out)
			}
			expect(t, env, 0, "Workflow 'good' not found", "delete", "good")
			expect(t, env, 0, "No workflows found", "list")
		})
	}
}

// Without a server named, the CLI works on the data directory: directly
// when no server runs there (submit stores the workflow and says it waits),
// and through the server that `braid server` records in server.json.
func TestCLIDirectThenLocalServer(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	file := filepath.Join(dir, "wf.yaml")
	writeFile(t, file, workflowYAML("later", "echo ran later"))
	env := []string{"BRAID_HOME=" + home}

	r := expect(t, env, 0, "Status:              Pending", "submit", file)
	if !strings.Contains(r.err, "will run when `braid server` starts") {
		t.Fatalf("direct submit should say the workflow waits for a server:\n%s", r.err)
	}
	expect(t, env, 0, "later   Pending", "list")
	expect(t, append(env, "ARGO_HTTP1=true"), 0, "later\n", "list", "-o", "name")
	expect(t, env, 0, "✔ no linting errors found!", "lint", file)

	startBraidServer(t, home)
	expect(t, env, 0, "later Succeeded at ", "wait", "later")
	expect(t, env, 0, ": ran later", "logs", "later")
	expect(t, env, 0, "braid-server: ", "version", "--short")
	expect(t, env, 0, "✔ no linting errors found!", "lint", file)
	expect(t, env, 0, "", "wait", "missing", "--ignore-not-found")
	expect(t, env, 1, "", "wait", "missing")
}
