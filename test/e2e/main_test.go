package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// braidBin is the binary under test.
var braidBin string

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	if bin := os.Getenv("BRAID_BIN"); bin != "" {
		braidBin = bin
		return m.Run(), nil
	}
	dir, err := os.MkdirTemp("", "braid-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	braidBin = filepath.Join(dir, "braid")
	build := exec.Command("go", "build", "-o", braidBin, "./cmd/braid")
	build.Dir = repoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return 0, fmt.Errorf("build braid: %w", err)
	}
	return m.Run(), nil
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// conformanceDir returns Argo's corpus beside the repository, or skips.
func conformanceDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BRAID_CONFORMANCE_DIR")
	if dir == "" {
		dir = filepath.Join(repoRoot(), "..", "shared", "conformance")
	}
	if _, err := os.Stat(filepath.Join(dir, "expected.tsv")); err != nil {
		if os.Getenv("BRAID_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("conformance corpus not found at %s, and BRAID_REQUIRE_CONFORMANCE=1 (set BRAID_CONFORMANCE_DIR)", dir)
		}
		t.Skipf("conformance corpus not found at %s (set BRAID_CONFORMANCE_DIR)", dir)
	}
	return dir
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
