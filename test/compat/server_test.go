package compat

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-workflows/v4/pkg/apiclient"
)

// braidBin is the binary under test.
var braidBin string

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	if bin := os.Getenv("BRAID_BIN"); bin != "" {
		braidBin = bin
		return m.Run(), nil
	}
	dir, err := os.MkdirTemp("", "braid-compat-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	braidBin = filepath.Join(dir, "braid")
	build := exec.Command("go", "build", "-o", braidBin, "./cmd/braid")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return 0, fmt.Errorf("build braid: %w", err)
	}
	return m.Run(), nil
}

// server is a braid server on loopback with its defaults (TLS, client
// auth with the local token).
type server struct {
	addr, token string
}

func startServer(t *testing.T) *server {
	t.Helper()
	home := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(braidBin, "server", "--data-dir", home, "--port", fmt.Sprint(port))
	cmd.Env = append(os.Environ(), "BRAID_HOME="+home)
	log, err := os.Create(filepath.Join(home, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			data, _ := os.ReadFile(log.Name())
			t.Logf("server log:\n%s", data)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		token, err := os.ReadFile(filepath.Join(home, "token"))
		if err == nil {
			if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
				c.Close()
				return &server{addr: l.Addr().String(), token: strings.TrimSpace(string(token))}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("braid server did not start on %s", l.Addr())
	return nil
}

// client is Argo's client for the server, over gRPC or HTTP/1.
func (s *server) client(t *testing.T, http1 bool) (context.Context, apiclient.Client) {
	t.Helper()
	ctx, c, err := apiclient.NewClientFromOptsWithContext(context.Background(), apiclient.Opts{
		ArgoServerOpts: apiclient.ArgoServerOpts{URL: s.addr, Secure: true, InsecureSkipVerify: true, HTTP1: http1},
		AuthSupplier:   func() string { return "Bearer " + s.token },
	})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, c
}
