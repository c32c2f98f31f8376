package s3_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/braidwf/braid/internal/artifact"
)

// A directory saved without an archive is a set of objects under key/: it
// has no stream of its own, and OpenDir streams it as a tar of top/....
func TestDirectoryAsTar(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "out")
	files := map[string]string{"a.txt": "A", "sub/b.txt": "BB", "sub/deeper/c.bin": "C\x00C"}
	for name, content := range files {
		writeFile(t, filepath.Join(src, name), content)
	}
	art := e.art("tree", "wf-3/tree")
	if err := e.drv.Save(ctx, src, art); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if _, err := e.drv.OpenStream(ctx, art); !errors.Is(err, artifact.ErrNotFound) {
		t.Fatalf("OpenStream of a directory: %v, want ErrNotFound", err)
	}
	dir, err := artifact.OpenDir(ctx, e.drv, art)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := dir.WriteTar(ctx, &buf, "tree"); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			got[h.Name] = string(b)
		}
	}
	for name, content := range files {
		if got["tree/"+name] != content {
			t.Errorf("tar entry tree/%s = %q, want %q (all: %q)", name, got["tree/"+name], content, got)
		}
	}
	if len(got) != len(files) {
		t.Errorf("tar has %d files, want %d: %q", len(got), len(files), got)
	}
	empty, err := artifact.OpenDir(ctx, e.drv, e.art("none", "wf-3/nothing"))
	if err != nil || empty.Files() != 0 {
		t.Errorf("OpenDir of an empty prefix: %v files, %v", empty, err)
	}
}
