package artifact

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A directory's links are packed and copied as links, whatever they point
// to, so a link to "/" or to a parent costs one entry.
func TestPackAndCopyKeepLinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	write(t, filepath.Join(dir, "f"), "F", 0o644)
	for name, target := range map[string]string{"root": "/", "up": "..", "self": "."} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	data := pack(t, dir, nil)
	if len(data) > 1024 {
		t.Errorf("the tarball has %d bytes: a link was followed", len(data))
	}
	tr := tar.NewReader(gunzip(t, data))
	var got []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, hdr.Name+" "+hdr.Linkname)
	}
	if want := "d/ ,d/f ,d/root /,d/self .,d/up .."; strings.Join(got, ",") != want {
		t.Errorf("entries %q, want %q", strings.Join(got, ","), want)
	}

	src, err := OpenHost(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out, err := CopySource(context.Background(), src, t.TempDir(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "./,f -rw-r--r-- F,root -> /,self -> .,up -> .."; strings.Join(tree(t, out), ",") != want {
		t.Errorf("copied %q, want %q", strings.Join(tree(t, out), ","), want)
	}
}

// Limits bound the bytes and the entries; the error says which and wraps
// ErrTooLarge.
func TestPackLimits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	for _, n := range []string{"a", "b", "c"} {
		write(t, filepath.Join(dir, n), strings.Repeat("x", 600), 0o644)
	}
	for _, tc := range []struct {
		lim  Limits
		want string
	}{
		{Limits{Entries: 3}, "pack d: holds more than 3 files, directories and links"},
		{Limits{Bytes: 1 << 10}, "pack d: holds more than 1 KiB of files"},
	} {
		src, err := OpenHost(dir)
		if err != nil {
			t.Fatal(err)
		}
		err = PackSource(src, nil, io.Discard, tc.lim)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrTooLarge) {
			t.Errorf("%+v: err = %v, want %q wrapping ErrTooLarge", tc.lim, err, tc.want)
		}
		_, err = CopySource(context.Background(), src, t.TempDir(), tc.lim)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%+v: CopySource err = %v, want ErrTooLarge", tc.lim, err)
		}
		src.Close()
	}
	if err := PackSource(Source{Name: "d"}, nil, &bytes.Buffer{}, Limits{}); err == nil {
		t.Error("an empty source packed")
	}
}
