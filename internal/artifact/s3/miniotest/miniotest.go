package miniotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Environment variables naming a running server, as `hack/minio.sh up` prints them.
const (
	EnvEndpoint  = "BRAID_TEST_S3_ENDPOINT"
	EnvAccessKey = "BRAID_TEST_S3_ACCESS_KEY"
	EnvSecretKey = "BRAID_TEST_S3_SECRET_KEY"
	// EnvRequire makes a missing MinIO binary fail the tests instead of skipping them.
	EnvRequire = "BRAID_REQUIRE_MINIO"
)

// Server is a running MinIO, reachable over plain HTTP at Endpoint (host:port).
type Server struct {
	Endpoint  string
	AccessKey string
	SecretKey string
	cmd       *exec.Cmd
	done      chan error
}

// Main runs a package's tests with a MinIO server (see the package doc) and returns the exit code.
func Main(m *testing.M) int {
	if os.Getenv(EnvEndpoint) != "" {
		return m.Run()
	}
	bin, err := Binary()
	if err != nil {
		if os.Getenv(EnvRequire) != "" {
			fmt.Fprintf(os.Stderr, "miniotest: %v, and %s is set; run hack/minio.sh build\n", err, EnvRequire)
			return 1
		}
		fmt.Fprintf(os.Stderr, "miniotest: %v; the tests that need MinIO skip (run hack/minio.sh build)\n", err)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "braid-minio-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "miniotest: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	srv, err := Start(context.Background(), bin, dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "miniotest: %v\n", err)
		return 1
	}
	defer srv.Stop()
	for k, v := range map[string]string{EnvEndpoint: srv.Endpoint, EnvAccessKey: srv.AccessKey, EnvSecretKey: srv.SecretKey} {
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintf(os.Stderr, "miniotest: %v\n", err)
			return 1
		}
	}
	return m.Run()
}

// FromEnv returns the server Main exported, and skips t when there is none.
func FromEnv(t testing.TB) (endpoint, accessKey, secretKey string) {
	t.Helper()
	endpoint = os.Getenv(EnvEndpoint)
	if endpoint == "" {
		t.Skipf("no MinIO: %s is not set and bin/tools/minio is missing (run hack/minio.sh build)", EnvEndpoint)
	}
	return endpoint, os.Getenv(EnvAccessKey), os.Getenv(EnvSecretKey)
}

// Binary returns bin/tools/minio under the module root (found from the working directory up).
func Binary() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the MinIO binary: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			bin := filepath.Join(dir, "bin", "tools", "minio")
			if _, err := os.Stat(bin); err != nil {
				return "", fmt.Errorf("the MinIO binary %s is missing", bin)
			}
			return bin, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find the MinIO binary: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Start runs bin as a MinIO server storing its data in dir, and waits until it is ready.
func Start(ctx context.Context, bin, dir string) (*Server, error) {
	user, pass := "braid"+randomHex(6), randomHex(16)
	var lastErr error
	for range 3 { // the free port may be taken between choosing and binding it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Endpoint: "127.0.0.1:" + strconv.Itoa(port), AccessKey: user, SecretKey: pass}
		if lastErr = s.start(ctx, bin, dir); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

func (s *Server) start(ctx context.Context, bin, dir string) error {
	logPath := filepath.Join(dir, "minio.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("start MinIO: %w", err)
	}
	defer logFile.Close()
	s.cmd = exec.Command(bin, "server", "--quiet", "--address", s.Endpoint, filepath.Join(dir, "data"))
	s.cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+s.AccessKey, "MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start MinIO %s: %w", bin, err)
	}
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait() }()
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		out, _ := os.ReadFile(logPath)
		return fmt.Errorf("start MinIO on %s: %w; its log:\n%s", s.Endpoint, err, out)
	}
	return nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	url := "http://" + s.Endpoint + "/minio/health/ready"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("MinIO exited: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("MinIO not ready: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop stops the server by its PID: SIGTERM, then SIGKILL after 10 s.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case err := <-s.done:
		s.done <- err
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		s.done <- <-s.done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
