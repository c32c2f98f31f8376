package app

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/braidwf/braid/internal/runtime/local"
)

// TestOpenEmbeddedDataDirPrivate checks that OpenEmbedded makes the data
// directory 0700 (a new one, and one an older braid made 0755) and the
// store 0600.
func TestOpenEmbeddedDataDirPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	base := t.TempDir()
	loose := filepath.Join(base, "loose")
	if err := os.Mkdir(loose, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(base, "new", "data"), loose} {
		e, err := OpenEmbedded(context.Background(), EmbeddedConfig{DataDir: dir, Isolation: local.IsolationNone})
		if err != nil {
			t.Fatalf("OpenEmbedded %s: %v", dir, err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		wantMode(t, dir, 0o700)
		wantMode(t, e.Config.StorePath(), 0o600)
	}
}

func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}
