package sqlite

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFileModes checks that the database and its -wal and -shm files are
// braid's user's only (0600), whatever the umask, both for a new store and
// for one an older braid left readable by everyone.
func TestFileModes(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask, under which SQLite would make 0644
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "braid.db")

	s := openStore(t, path)
	must(t, s.Create(context.Background(), bigWorkflow("wf", 3)), "Create")
	checkModes(t, path)
	if info, err := os.Stat(dir); err != nil {
		t.Error(err)
	} else if info.Mode().Perm() != 0o700 {
		t.Errorf("the store's new directory has mode %v, want 0700", info.Mode().Perm())
	}

	// A store an older braid left readable by everyone (the files exist
	// while it is open) is tightened by the next Open.
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		must(t, os.Chmod(p, 0o644), "chmod")
	}
	again, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatalf("Open again: %v", err)
	}
	defer again.Close()
	checkModes(t, path)
}

// checkModes fails the test unless the store's files (all there while it
// is open) are 0600.
func checkModes(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
			continue
		}
		if got := info.Mode().Perm(); got != fs.FileMode(0o600) {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(p), got)
		}
	}
}
