package image

import (
	"archive/tar"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/braidwf/braid/internal/image/imagetest"
)

func busybox(t *testing.T, applets ...string) []imagetest.File {
	t.Helper()
	files, err := imagetest.Busybox(applets...)
	if err != nil {
		t.Skipf("%v (hack/test-deps.sh installs it)", err)
	}
	return files
}

func layer(t *testing.T, plain bool, files ...imagetest.File) []byte {
	t.Helper()
	l, err := imagetest.Layer(plain, files...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func busyboxImage(t *testing.T, refName string) imagetest.Image {
	files := append(busybox(t, "ls", "cat"),
		imagetest.File{Name: "etc/", Type: tar.TypeDir},
		imagetest.File{Name: "etc/only-in-image", Body: []byte("hello from the image\n")})
	return imagetest.Image{RefName: refName, Layers: [][]byte{layer(t, false, files...)},
		Config: map[string]any{"Entrypoint": []string{"/bin/sh", "-c"}, "Cmd": []string{"echo hi"},
			"Env": []string{"PATH=/bin", "FROM_IMAGE=1"}, "WorkingDir": "/etc", "User": "0"}}
}

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	return NewStore(filepath.Join(dir, "images"), filepath.Join(dir, "rootfs")), filepath.Join(dir, "images")
}

// The layouts and archives of the images directory are found by reference,
// resolved and unpacked, and the unpacked busybox runs.
func TestGet(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, images string) error
		refs  []string // each names the image
	}{
		{"layout in a subdirectory, tag ref name", func(t *testing.T, images string) error {
			return imagetest.WriteLayout(filepath.Join(images, "test", "busybox"), busyboxImage(t, "1"))
		}, []string{"test/busybox:1", "mirror.example/test/busybox:1"}},
		{"layout as the images directory, full ref name", func(t *testing.T, images string) error {
			return imagetest.WriteLayout(images, busyboxImage(t, "busybox:1.36"))
		}, []string{"busybox:1.36", "mirror.example/library/busybox:1.36"}},
		{"archive", func(t *testing.T, images string) error {
			return imagetest.WriteArchive(filepath.Join(images, "test", "busybox.tar"), busyboxImage(t, "1"))
		}, []string{"test/busybox:1"}},
		{"multi-platform index, no name", func(t *testing.T, images string) error {
			img := busyboxImage(t, "")
			img.Index = true
			return imagetest.WriteLayout(filepath.Join(images, "tool"), img)
		}, []string{"tool", "tool:latest"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, images := newStore(t)
			if err := tc.write(t, images); err != nil {
				t.Fatal(err)
			}
			for _, ref := range tc.refs {
				img, err := s.Get(context.Background(), ref)
				if err != nil {
					t.Fatalf("%s: %v", ref, err)
				}
				if got, err := os.ReadFile(filepath.Join(img.Root, "etc/only-in-image")); err != nil || string(got) != "hello from the image\n" {
					t.Fatalf("%s: etc/only-in-image = %q, %v", ref, got, err)
				}
				if img.Config.WorkingDir != "/etc" || !slices.Equal(img.Config.Entrypoint, []string{"/bin/sh", "-c"}) ||
					!slices.Equal(img.Config.Env, []string{"PATH=/bin", "FROM_IMAGE=1"}) || img.Config.User != "0" {
					t.Fatalf("%s: config %+v", ref, img.Config)
				}
				out, err := exec.Command(filepath.Join(img.Root, "bin/busybox"), "echo", "ran").Output()
				if err != nil || string(out) != "ran\n" {
					t.Fatalf("%s: busybox: %q, %v", ref, out, err)
				}
				if p, err := img.LookPath("ls", "/usr/bin:/bin"); err != nil || p != "/bin/ls" {
					t.Fatalf("%s: LookPath(ls) = %q, %v", ref, p, err)
				}
				if _, err := img.LookPath("python3", "/usr/bin:/bin"); err == nil {
					t.Fatalf("%s: python3 found in busybox", ref)
				}
			}
			if n := s.unpacked.Load(); n != 1 {
				t.Fatalf("unpacked %d times, want 1", n)
			}
			for _, ref := range []string{"test/busybox:2", "busybox:1", "other"} {
				if _, err := s.Get(context.Background(), ref); !errors.Is(err, ErrNotFound) {
					t.Fatalf("%s: %v, want ErrNotFound", ref, err)
				}
			}
		})
	}
}

// A missing images directory means no image, quietly.
func TestGetNoImagesDir(t *testing.T) {
	s, _ := newStore(t)
	if _, err := s.Get(context.Background(), "busybox"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("%v, want ErrNotFound", err)
	}
}

// A second layer's whiteout removes a file of the first, and its opaque
// marker empties a directory of what the first put there, keeping what it
// adds itself; hard links and links through a symbolic directory land
// inside the root.
func TestWhiteouts(t *testing.T) {
	s, images := newStore(t)
	dir := byte(tar.TypeDir)
	l1 := layer(t, false,
		imagetest.File{Name: "a/", Type: dir},
		imagetest.File{Name: "a/keep", Body: []byte("keep")},
		imagetest.File{Name: "a/gone", Body: []byte("gone")},
		imagetest.File{Name: "o/", Type: dir},
		imagetest.File{Name: "o/old", Body: []byte("old")},
		imagetest.File{Name: "o/sub/", Type: dir},
		imagetest.File{Name: "usr/lib/", Type: dir},
		imagetest.File{Name: "lib", Type: tar.TypeSymlink, Link: "/usr/lib"},
		imagetest.File{Name: "x", Type: tar.TypeSymlink, Link: "../../../../etc"},
	)
	l2 := layer(t, true, // uncompressed
		imagetest.File{Name: "a/.wh.gone"},
		imagetest.File{Name: "o/new", Body: []byte("new")},
		imagetest.File{Name: "o/.wh..wh..opq"},
		imagetest.File{Name: "lib/libz.so", Body: []byte("z")},
		imagetest.File{Name: "hard", Type: tar.TypeLink, Link: "a/keep"},
		imagetest.File{Name: "x/escape", Body: []byte("must stay inside")},
		imagetest.File{Name: "ro/", Type: dir, Mode: 0o555},
		imagetest.File{Name: "ro/f", Body: []byte("f")},
	)
	if err := imagetest.WriteLayout(filepath.Join(images, "wh"), imagetest.Image{RefName: "1", Layers: [][]byte{l1, l2}}); err != nil {
		t.Fatal(err)
	}
	img, err := s.Get(context.Background(), "wh:1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = filepath.Walk(img.Root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(img.Root, p)
		got = append(got, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".", "a", "a/keep", "etc", "etc/escape", "hard", "lib", "o", "o/new", "ro", "ro/f", "usr", "usr/lib", "usr/lib/libz.so", "x"}
	if !slices.Equal(got, want) {
		t.Fatalf("root holds\n%v\nwant\n%v", got, want)
	}
	a, _ := os.Stat(filepath.Join(img.Root, "a/keep"))
	h, _ := os.Stat(filepath.Join(img.Root, "hard"))
	if !os.SameFile(a, h) {
		t.Fatal("hard is not a hard link of a/keep")
	}
	if info, err := os.Stat(filepath.Join(img.Root, "ro")); err != nil || info.Mode().Perm() != 0o555 {
		t.Fatalf("ro: %v, %v", info.Mode(), err)
	}
}

// A layer that would write outside the root is refused with the image
// named, and leaves nothing in the cache; so is a blob whose digest does
// not match.
func TestBrokenImages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []imagetest.File
		spoil func(t *testing.T, layoutDir string)
		want  string
	}{
		{"dot-dot entry", []imagetest.File{{Name: "../../../evil", Body: []byte("x")}}, nil, "leaves the root file system"},
		{"dot-dot inside", []imagetest.File{{Name: "a/../../evil", Body: []byte("x")}}, nil, "leaves the root file system"},
		{"hard link out", []imagetest.File{{Name: "h", Type: tar.TypeLink, Link: "../../etc/passwd"}}, nil, "leaves the root file system"},
		{"bad digest", []imagetest.File{{Name: "f", Body: []byte("x")}}, func(t *testing.T, dir string) {
			spoilLayer(t, dir)
		}, "does not match its digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, images := newStore(t)
			dir := filepath.Join(images, "bad")
			if err := imagetest.WriteLayout(dir, imagetest.Image{RefName: "1", Layers: [][]byte{layer(t, false, tc.files...)}}); err != nil {
				t.Fatal(err)
			}
			if tc.spoil != nil {
				tc.spoil(t, dir)
			}
			_, err := s.Get(context.Background(), "bad:1")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "image bad:1") {
				t.Fatalf("err = %v, want one naming the image and %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(s.cache); len(entries) != 0 {
				t.Fatalf("the cache holds %v", entries)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(images), "evil")); err == nil {
				t.Fatal("a file escaped the root")
			}
		})
	}
}

// spoilLayer changes one byte of the biggest blob (the layer) in place.
func spoilLayer(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "blobs/sha256"))
	if err != nil {
		t.Fatal(err)
	}
	var biggest string
	var size int64
	for _, e := range entries {
		info, _ := e.Info()
		if info.Size() > size {
			biggest, size = e.Name(), info.Size()
		}
	}
	p := filepath.Join(dir, "blobs/sha256", biggest)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-9] ^= 0xff // inside the gzip trailer's CRC: still gzip, another digest
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Steps asking for the same image at once share one unpack.
func TestConcurrentFirstUse(t *testing.T) {
	s, images := newStore(t)
	if err := imagetest.WriteArchive(filepath.Join(images, "test", "busybox.tar"), busyboxImage(t, "1")); err != nil {
		t.Fatal(err)
	}
	const n = 8
	roots := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			img, err := s.Get(context.Background(), "test/busybox:1")
			errs[i] = err
			if err == nil {
				roots[i] = img.Root
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || roots[i] != roots[0] {
			t.Fatalf("get %d: %q, %v (first %q)", i, roots[i], errs[i], roots[0])
		}
	}
	if got := s.unpacked.Load(); got != 1 {
		t.Fatalf("unpacked %d times, want 1", got)
	}
	entries, _ := os.ReadDir(s.cache)
	if len(entries) != 1 || strings.HasPrefix(entries[0].Name(), ".") {
		t.Fatalf("cache holds %v, want one root", entries)
	}
	// A second Store (another braid) finds the root in place.
	s2 := NewStore(images, s.cache)
	if img, err := s2.Get(context.Background(), "test/busybox:1"); err != nil || img.Root != roots[0] || s2.unpacked.Load() != 0 {
		t.Fatalf("second store: %v, %v, unpacked %d", img, err, s2.unpacked.Load())
	}
}

func TestReferences(t *testing.T) {
	for _, tc := range []struct {
		annotations map[string]string
		layout      string
		want        string
	}{
		{map[string]string{annotationRefName: "1.36"}, "busybox", "busybox:1.36"},
		{map[string]string{annotationRefName: "busybox"}, "", "busybox:latest"},
		{map[string]string{annotationRefName: "mirror.example/library/busybox:1.36"}, "x", "busybox:1.36"},
		{map[string]string{annotationRefName: "1.36", annotationContainerName: "mirror.example/myorg/tool:2"}, "x", "myorg/tool:2"},
		{map[string]string{annotationRefName: "localhost:5000/tool"}, "x", "tool:latest"},
		{nil, "a/b", "a/b:latest"},
	} {
		ref, ok := indexEntryName(tc.annotations, tc.layout, true)
		if !ok || ref.String() != tc.want {
			t.Errorf("%v in %q: %v %v, want %s", tc.annotations, tc.layout, ref, ok, tc.want)
		}
	}
	if _, ok := indexEntryName(nil, "", true); ok {
		t.Error("an unnamed manifest of the images directory's own layout got a name")
	}
	if _, ok := indexEntryName(nil, "a", false); ok {
		t.Error("an unnamed manifest among several got a name")
	}
}
