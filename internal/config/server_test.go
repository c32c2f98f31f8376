package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestServerInfoRoundTrip(t *testing.T) {
	path := ServerFile(t.TempDir())
	if _, err := ReadServerInfo(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no file: %v, want os.ErrNotExist", err)
	}
	// A stale temporary file with a wider mode does not widen the new one.
	if err := os.WriteFile(path+".tmp", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := ServerInfo{Address: "127.0.0.1:2746", PID: 42, Secure: true, Fingerprint: "ab12"}
	if err := WriteServerInfo(path, want); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("mode %o, want 600", m)
	}
	got, err := ReadServerInfo(path)
	if err != nil || got != want {
		t.Fatalf("read %+v, %v; want %+v", got, err, want)
	}

	// A plain server's file has neither field.
	if err := WriteServerInfo(path, ServerInfo{Address: "a:1", PID: 1}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != `{"address":"a:1","pid":1}`+"\n" {
		t.Errorf("plain server file %s", data)
	}
	if left, _ := filepath.Glob(path + ".tmp"); len(left) > 0 {
		t.Errorf("temporary file left: %v", left)
	}
}
