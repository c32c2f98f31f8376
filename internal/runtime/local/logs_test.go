package local

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A step's log is served only when it is a regular file: a step that
// replaced it with a link to braid's secrets, or with a FIFO, gets nothing
// served and blocks nobody.
func TestLogFilesRefuseLinks(t *testing.T) {
	dataDir := t.TempDir()
	secret := filepath.Join(dataDir, "config.yaml")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := NewLogFiles(dataDir)
	place := func(pod string) string {
		p := logPath(filepath.Join(dataDir, "runs"), "argo", "wf", pod)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := os.WriteFile(place("plain"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, place("link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(place("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := logs.Open(context.Background(), "argo", "wf", "plain")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(f)
	f.Close()
	if string(data) != "hello\n" {
		t.Fatalf("read %q", data)
	}
	for _, pod := range []string{"link", "fifo"} {
		if f, err := logs.Open(context.Background(), "argo", "wf", pod); !errors.Is(err, errNotRegular) {
			if f != nil {
				f.Close()
			}
			t.Errorf("%s: %v, want a refusal", pod, err)
		}
	}
}
