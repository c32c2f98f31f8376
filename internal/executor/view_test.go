package executor

import (
	"os"
	"path/filepath"
	"testing"
)

// In a root view, a path resolves to the upper layer when the step wrote
// it there and to the host's path otherwise; /tmp maps to the private
// /tmp; links among the host's parent directories are followed.
func TestPathsInView(t *testing.T) {
	root, tmp, host := t.TempDir(), t.TempDir(), hostDir(t)
	if err := os.MkdirAll(filepath.Join(root, host, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, host, "real", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(host, "real"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(host, "link")); err != nil {
		t.Fatal(err)
	}
	p := Paths{WorkDir: "/", Tmp: tmp, Root: root}
	cases := []struct{ path, want string }{
		{host + "/real/f", root + host + "/real/f"},         // written by the step
		{host + "/real/g", host + "/real/g"},                // the host's
		{host + "/link/f", root + host + "/real/f"},         // through the host's link
		{"/tmp/x", tmp + "/x"},                              // the private /tmp
		{"/tmp", tmp},                                       //
		{"rel", "/rel"},                                     // against the working directory
		{host[1:] + "/real/f", root + host + "/real/f"},     // relative, written by the step
		{"/etc/../etc/hostname-nope", "/etc/hostname-nope"}, // cleaned
	}
	for _, c := range cases {
		if got := p.Resolve(c.path); got != c.want {
			t.Errorf("Resolve(%q) = %q, want %q", c.path, got, c.want)
		}
	}
	// Target makes the parents in the upper layer with the host's modes,
	// following the host's links.
	got, err := p.Target(host + "/link/new/x")
	if err != nil {
		t.Fatal(err)
	}
	if want := root + host + "/real/new/x"; got != want {
		t.Errorf("Target = %q, want %q", got, want)
	}
	if _, err := os.Lstat(filepath.Join(root, host, "link")); err == nil {
		t.Error("Target made a directory over the host's link")
	}
	got, err = p.Target(host + "/real/y")
	if err != nil || got != root+host+"/real/y" {
		t.Fatalf("Target = %q, %v", got, err)
	}
	// Outside a view, nothing changes.
	plain := Paths{WorkDir: "/w", Tmp: tmp}
	if got := plain.Resolve("a"); got != "/w/a" {
		t.Errorf("Resolve outside a view = %q", got)
	}
	if got, _ := plain.Target("/tmp/a"); got != tmp+"/a" {
		t.Errorf("Target outside a view = %q", got)
	}
}

// mirrorDirs copies the host directory's mode into the upper layer.
func TestMirrorDirsMode(t *testing.T) {
	root, host := t.TempDir(), hostDir(t)
	if err := os.Mkdir(filepath.Join(host, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := Paths{Root: root}
	if _, err := p.Target(host + "/d/x"); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(root, host, "d"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, want 0700", info.Mode().Perm())
	}
}

// hostDir is a directory of the host outside /tmp, which a view maps to
// the step's private /tmp.
func hostDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "braid-view-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
