package git_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const ns = "argo"

type secrets map[string]string

func (s secrets) Secret(_ context.Context, namespace, name, key string) (string, error) {
	v, ok := s[namespace+"/"+name+"/"+key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %q", namespace, name, key)
	}
	return v, nil
}

// origin is a repository made with the git CLI under base/repo:
//
//	main: c1 (a.txt=one, tag v1) -> c2 (a.txt=two, annotated tag v2)
//	dev:  c2 -> c3 (dev.txt)
//	refs/pull/1/head: c2 -> c4 (pr.txt), on no branch
type origin struct {
	base           string
	c1, c2, c3, c4 string
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=braid", "-c", "user.email=braid@example.invalid",
		"-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func commit(t *testing.T, dir, file, content string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "add", file)
	run(t, dir, "commit", "-q", "-m", file+"="+content)
	return run(t, dir, "rev-parse", "HEAD")
}

func newOrigin(t *testing.T) *origin {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the git tests need the git CLI (hack/test-deps.sh installs it): %v", err)
	}
	o := &origin{base: t.TempDir()}
	dir := filepath.Join(o.base, "repo")
	run(t, o.base, "init", "-q", dir)
	o.c1 = commit(t, dir, "a.txt", "one")
	run(t, dir, "tag", "v1")
	o.c2 = commit(t, dir, "a.txt", "two")
	run(t, dir, "tag", "-a", "v2", "-m", "release two")
	run(t, dir, "checkout", "-q", "-b", "dev")
	o.c3 = commit(t, dir, "dev.txt", "dev")
	run(t, dir, "checkout", "-q", "-b", "pr", "main")
	o.c4 = commit(t, dir, "pr.txt", "pr")
	run(t, dir, "update-ref", "refs/pull/1/head", o.c4)
	run(t, dir, "checkout", "-q", "main")
	run(t, dir, "branch", "-q", "-D", "pr")
	return o
}

func (o *origin) fileURL() string { return "file://" + filepath.Join(o.base, "repo") }

// daemon serves the origin with `git daemon` on 127.0.0.1 and returns its git:// URL.
func (o *origin) daemon(t *testing.T) string {
	t.Helper()
	port := freePort(t)
	// Run git-daemon itself, not `git daemon`: the git wrapper would fork it, and stopping the wrapper by
	// its PID would leave the daemon running.
	bin := filepath.Join(run(t, o.base, "--exec-path"), "git-daemon")
	cmd := exec.Command(bin, "--export-all", "--reuseaddr", "--base-path="+o.base,
		"--listen=127.0.0.1", "--port="+strconv.Itoa(port), o.base)
	logFile, err := os.Create(filepath.Join(t.TempDir(), "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile // a file, not a pipe: the daemon's children must not hold go test's output open
	if err := cmd.Start(); err != nil {
		t.Fatalf("start git daemon: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	testutil.Eventually(t, 10*time.Second, "git daemon listening on "+addr, func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	})
	return "git://" + addr + "/repo"
}

// httpServer serves the origin through `git http-backend` behind basic auth and returns its URL.
func (o *origin) httpServer(t *testing.T, user, pass string) string {
	t.Helper()
	backend := filepath.Join(run(t, o.base, "--exec-path"), "git-http-backend")
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + o.base, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/repo"
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func gitArt(loc v1alpha1.GitArtifact) *v1alpha1.Artifact {
	return &v1alpha1.Artifact{Name: "src", ArtifactLocation: v1alpha1.ArtifactLocation{Git: &loc}}
}

func depth(n uint64) *uint64 { return &n }

func selector(name, key string) *apiv1.SecretKeySelector {
	return &apiv1.SecretKeySelector{LocalObjectReference: apiv1.LocalObjectReference{Name: name}, Key: key}
}

// files reads the checkout's top-level files (not .git) as name=content.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.Name() == ".git" || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func commitCount(t *testing.T, dir string) int {
	t.Helper()
	n, err := strconv.Atoi(run(t, dir, "rev-list", "--count", "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
