package file

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func art(key string) *v1alpha1.Artifact {
	return &v1alpha1.Artifact{Name: "out", ArtifactLocation: v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: key}}}
}

func write(t *testing.T, p, data string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// tree lists everything under dir, sorted: "rel/" for directories, "rel -> target" for links,
// "rel mode content" for files.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, _ := d.Info()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, rel+" -> "+target)
		case d.IsDir():
			out = append(out, rel+"/")
		default:
			data, _ := os.ReadFile(p)
			out = append(out, rel+" "+info.Mode().Perm().String()+" "+string(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestSaveLoadRoundTrip(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string // tree of the loaded path
	}{{
		name: "file",
		setup: func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "f.txt"), "content", 0o750)
			return filepath.Join(dir, "f.txt")
		},
		want: ". -rwxr-x--- content",
	}, {
		name: "directory",
		setup: func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "d", "a"), "A", 0o644)
			write(t, filepath.Join(dir, "d", "s", "b"), "B", 0o600)
			if err := os.Mkdir(filepath.Join(dir, "d", "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("s/b", filepath.Join(dir, "d", "l")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "d")
		},
		want: "./,a -rw-r--r-- A,empty/,l -> s/b,s/,s/b -rw------- B",
	}, {
		name: "a symbolic link to a file is saved as the file",
		setup: func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "real"), "R", 0o644)
			if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "link")
		},
		want: ". -rw-r--r-- R",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "repo")
			d := New(root)
			src := tc.setup(t, t.TempDir())
			a := art("wf/pod/" + tc.name)
			if err := d.Save(ctx, src, a); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "in", "x")
			if err := d.Load(ctx, a, dst); err != nil {
				t.Fatal(err)
			}
			if got := tree(t, dst); got != tc.want {
				t.Errorf("loaded tree = %s\nwant          %s", got, tc.want)
			}
			if got := tree(t, filepath.Join(root, "wf", "pod")); !strings.HasPrefix(got, "./,"+tc.name) ||
				strings.Contains(got, ".tmp-") {
				t.Errorf("repository holds %s: want the key only, no temporary files", got)
			}
		})
	}
}

func TestSaveReplaces(t *testing.T) {
	ctx := context.Background()
	d := New(t.TempDir())
	dir := t.TempDir()
	write(t, filepath.Join(dir, "d", "old"), "old", 0o644)
	write(t, filepath.Join(dir, "f"), "new file", 0o644)
	write(t, filepath.Join(dir, "g"), "newer file", 0o644)
	a := art("k")
	for _, src := range []string{"d", "f", "g"} { // directory -> file -> file
		if err := d.Save(ctx, filepath.Join(dir, src), a); err != nil {
			t.Fatalf("Save(%s): %v", src, err)
		}
	}
	if got := tree(t, d.Root()); got != "./,k -rw-r--r-- newer file" {
		t.Errorf("repository = %s", got)
	}
	if err := d.Save(ctx, filepath.Join(dir, "d"), a); err != nil { // file -> directory
		t.Fatal(err)
	}
	if got := tree(t, d.Root()); got != "./,k/,k/old -rw-r--r-- old" {
		t.Errorf("repository = %s", got)
	}
}

func TestOpenStreamAndDelete(t *testing.T) {
	ctx := context.Background()
	d := New(t.TempDir())
	src := filepath.Join(t.TempDir(), "f")
	write(t, src, "streamed", 0o644)
	a := art("a/b/c.tgz")
	if err := d.Save(ctx, src, a); err != nil {
		t.Fatal(err)
	}
	rc, err := d.OpenStream(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(data) != "streamed" {
		t.Fatalf("OpenStream read %q, %v", data, err)
	}
	if _, err := d.OpenStream(ctx, art("a/b")); !errors.Is(err, artifact.ErrIsDirectory) || !strings.Contains(err.Error(), "holds a directory") {
		t.Errorf("OpenStream(directory) error = %v", err)
	}
	if err := d.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, d.Root()); got != "./" {
		t.Errorf("after Delete the repository holds %s; want empty parents removed", got)
	}
	if err := d.Delete(ctx, a); err != nil {
		t.Errorf("deleting an absent key: %v", err)
	}
	if err := New(filepath.Join(t.TempDir(), "never-created")).Delete(ctx, a); err != nil {
		t.Errorf("deleting from a repository never written: %v", err)
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	for name, d := range map[string]*Driver{
		"missing key":  New(t.TempDir()),
		"missing root": New(filepath.Join(t.TempDir(), "nope")),
	} {
		t.Run(name, func(t *testing.T) {
			err := d.Load(ctx, art("wf/pod/x.tgz"), filepath.Join(t.TempDir(), "x"))
			if !errors.Is(err, artifact.ErrNotFound) {
				t.Errorf("Load error = %v, want ErrNotFound", err)
			}
			if err == nil || !strings.Contains(err.Error(), `artifact "out": load key "wf/pod/x.tgz" in file repository`) {
				t.Errorf("Load error = %v, want it to name the artifact and key", err)
			}
			if _, err := d.OpenStream(ctx, art("x")); !errors.Is(err, artifact.ErrNotFound) {
				t.Errorf("OpenStream error = %v, want ErrNotFound", err)
			}
		})
	}
	d := New(t.TempDir())
	err := d.Save(ctx, filepath.Join(t.TempDir(), "missing"), art("k"))
	if err == nil || errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Save of a missing path = %v; want an error that is not ErrNotFound", err)
	}
}

func TestKeysThatEscape(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	root := filepath.Join(parent, "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(parent, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(parent, "secret"), "s", 0o600)
	src := filepath.Join(t.TempDir(), "f")
	write(t, src, "x", 0o644)
	d := New(root)
	for _, key := range []string{"../x", "/etc/x", "a/../../x", "", "out/secret", "out/new"} {
		t.Run(key, func(t *testing.T) {
			if err := d.Save(ctx, src, art(key)); err == nil {
				t.Errorf("Save to key %q succeeded", key)
			}
			if err := d.Load(ctx, art(key), filepath.Join(t.TempDir(), "x")); err == nil {
				t.Errorf("Load of key %q succeeded", key)
			}
			if err := d.Delete(ctx, art(key)); err == nil && key != "out/new" && key != "out/secret" {
				t.Errorf("Delete of key %q succeeded", key)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(parent, "secret")); err != nil {
		t.Errorf("a file outside the repository was touched: %v", err)
	}
	if _, err := os.Stat(filepath.Join(parent, "new")); err == nil {
		t.Errorf("Save wrote outside the repository through a symbolic link")
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 2 {
		t.Errorf("the repository's parent holds %d entries, want 2 (repo, secret)", len(entries))
	}
}

func TestCancelledSave(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := New(t.TempDir())
	src := filepath.Join(t.TempDir(), "f")
	write(t, src, "x", 0o644)
	if err := d.Save(ctx, src, art("k")); !errors.Is(err, context.Canceled) {
		t.Errorf("Save with a cancelled context = %v", err)
	}
	if got := tree(t, d.Root()); got != "./" {
		t.Errorf("a cancelled Save left %s", got)
	}
}

func TestWrongLocation(t *testing.T) {
	d := New(t.TempDir())
	a := &v1alpha1.Artifact{Name: "x", ArtifactLocation: v1alpha1.ArtifactLocation{Raw: &v1alpha1.RawArtifact{}}}
	if err := d.Load(context.Background(), a, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no file location") {
		t.Errorf("Load(raw location) = %v", err)
	}
}

// TestSaveLoadStreams moves a 128 MiB file through the repository and checks that the process allocated
// a small fraction of that: nothing holds the artifact in memory.
func TestSaveLoadStreams(t *testing.T) {
	const size = 128 << 20
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d := New(t.TempDir())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	dst := filepath.Join(t.TempDir(), "big")
	if err := d.Save(ctx, src, art("k/big")); err != nil {
		t.Fatal(err)
	}
	if err := d.Load(ctx, art("k/big"), dst); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if info, err := os.Stat(dst); err != nil || info.Size() != size {
		t.Fatalf("loaded %v, %v", info, err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 16<<20 {
		t.Errorf("allocated %d MiB to move 2 x %d MiB: buffered, not streamed", allocated>>20, size>>20)
	}
}
