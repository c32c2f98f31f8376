package compat

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	defer stopShared()
	if bin := os.Getenv("BRAID_BIN"); bin != "" {
		braidBin = bin
		return finish(m.Run()), nil
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
	return finish(m.Run()), nil
}

// shared is the one server most tests use (sharedServer), started on first
// use and stopped when the tests end. Its data directory (with
// server.log) is kept when a test failed, and its path printed.
var shared struct {
	once sync.Once
	s    *server
	stop func()
	home string
	err  error
}

func sharedServer(t *testing.T) *server {
	t.Helper()
	shared.once.Do(func() {
		shared.home, shared.err = os.MkdirTemp("", "braid-compat-home-")
		if shared.err == nil {
			shared.s, shared.stop, shared.err = launch(shared.home)
		}
	})
	if shared.err != nil {
		t.Fatalf("start the shared braid server: %v", shared.err)
	}
	return shared.s
}

// finish stops the shared server and keeps its directory if a test failed.
func finish(code int) int {
	stopShared()
	if shared.home != "" {
		if code != 0 {
			fmt.Fprintf(os.Stderr, "compat: the shared server's data and log are kept in %s (server.log)\n", shared.home)
		} else {
			os.RemoveAll(shared.home)
		}
	}
	return code
}

func stopShared() {
	if shared.stop != nil {
		shared.stop()
		shared.stop = nil
	}
}

// server is a braid server on loopback with its defaults (TLS, client
// auth with the local token).
type server struct {
	addr, token string
}

// launch starts `braid server` on home and waits until it answers
// /readyz; stop interrupts it and waits for it to exit.
func launch(home string) (*server, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	addr := l.Addr().String()
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(braidBin, "server", "--data-dir", home, "--port", fmt.Sprint(port))
	cmd.Env = append(os.Environ(), "BRAID_HOME="+home)
	log, err := os.Create(filepath.Join(home, "server.log"))
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		log.Close()
	}
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var token []byte
	err = poll(20*time.Second, func() error {
		var err error
		if token, err = os.ReadFile(filepath.Join(home, "token")); err != nil {
			return err
		}
		resp, err := hc.Get("https://" + addr + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz: %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("braid server did not become ready on %s (log: %s): %w", addr, log.Name(), err)
	}
	return &server{addr: addr, token: strings.TrimSpace(string(token))}, stop, nil
}

// client is Argo's client for the server, over gRPC or HTTP/1. The context
// carries no deadline: the gRPC client starts it from a background context.
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
