package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// entry is one tar entry of a hand-made archive.
type entry struct {
	name, body, link string
	typ              byte
	mode             int64
}

// tgz builds a gzipped tarball from entries, exactly as given (names are not cleaned).
func tgz(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ, mode := e.typ, e.mode
		if typ == 0 {
			typ = tar.TypeReg
		}
		if mode == 0 {
			mode = 0o644
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Mode: mode, Linkname: e.link, Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tree lists everything under dir as "path kind[ content|target]" lines, sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
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
	return out
}

func write(t *testing.T, p, data string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func pack(t *testing.T, src string, s *v1alpha1.ArchiveStrategy) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Pack(src, s, &buf); err != nil {
		t.Fatalf("Pack(%s): %v", src, err)
	}
	return buf.Bytes()
}

func TestPackUnpackInputRoundTrip(t *testing.T) {
	level := int32(9)
	tests := []struct {
		name     string
		setup    func(t *testing.T, dir string) string // returns the path to pack
		strategy *v1alpha1.ArchiveStrategy
		want     []string // tree of what UnpackInput places at "out"
	}{{
		name: "a file becomes that file",
		setup: func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "x.txt"), "hello", 0o640)
			return filepath.Join(dir, "x.txt")
		},
		want: []string{". -rw-r----- hello"},
	}, {
		name: "a directory becomes that directory",
		setup: func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "d", "a"), "A", 0o644)
			write(t, filepath.Join(dir, "d", "sub", "b.sh"), "B", 0o755)
			if err := os.MkdirAll(filepath.Join(dir, "d", "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("sub/b.sh", filepath.Join(dir, "d", "link")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "d")
		},
		strategy: &v1alpha1.ArchiveStrategy{Tar: &v1alpha1.TarStrategy{CompressionLevel: &level}},
		want: []string{"./", "a -rw-r--r-- A", "empty/", "link -> sub/b.sh", "sub/",
			"sub/b.sh -rwxr-xr-x B"},
	}, {
		name: "an empty archive strategy is tar",
		setup: func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "y"), "", 0o600)
			return filepath.Join(dir, "y")
		},
		strategy: &v1alpha1.ArchiveStrategy{},
		want:     []string{". -rw------- "},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.setup(t, t.TempDir())
			data := pack(t, src, tc.strategy)
			arc := filepath.Join(t.TempDir(), "art.tgz")
			write(t, arc, string(data), 0o644)
			if !IsTarGz(arc) {
				t.Fatalf("IsTarGz(packed) = false")
			}
			out := filepath.Join(t.TempDir(), "in", "out")
			if err := UnpackInput(bytes.NewReader(data), out); err != nil {
				t.Fatal(err)
			}
			got := tree(t, out)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("placed tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 1 {
				t.Errorf("UnpackInput left %d entries beside out, want only out", len(left))
			}
		})
	}
}

func TestPackEntryNames(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "d", "f"), "1", 0o644)
	write(t, filepath.Join(dir, "x"), "2", 0o644)
	for src, want := range map[string]string{
		filepath.Join(dir, "d"): "d/,d/f",
		filepath.Join(dir, "x"): "x",
	} {
		tr := tar.NewReader(gunzip(t, pack(t, src, nil)))
		var names []string
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, hdr.Name)
		}
		if got := strings.Join(names, ","); got != want {
			t.Errorf("Pack(%s) entries = %s, want %s", filepath.Base(src), got, want)
		}
	}
}

func gunzip(t *testing.T, data []byte) io.Reader {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return gz
}

func TestUnpackInputSeveralTopEntriesMakeADirectory(t *testing.T) {
	data := tgz(t, entry{name: "a", body: "A"}, entry{name: "b/c", body: "C"})
	out := filepath.Join(t.TempDir(), "out")
	if err := UnpackInput(bytes.NewReader(data), out); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(tree(t, out), ",")
	if want := "./,a -rw-r--r-- A,b/,b/c -rw-r--r-- C"; got != want {
		t.Errorf("tree = %s, want %s", got, want)
	}
}

func TestPackStrategies(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "f"), "as is", 0o644)
	write(t, filepath.Join(dir, "d", "g"), "x", 0o644)
	none := &v1alpha1.ArchiveStrategy{None: &v1alpha1.NoneStrategy{}}
	if got := string(pack(t, filepath.Join(dir, "f"), none)); got != "as is" {
		t.Errorf("Pack(none) wrote %q, want the file as is", got)
	}
	bad := int32(42)
	tests := []struct {
		name, src string
		strategy  *v1alpha1.ArchiveStrategy
		want      string
	}{
		{"zip", "f", &v1alpha1.ArchiveStrategy{Zip: &v1alpha1.ZipStrategy{}}, "archive strategy zip is not supported"},
		{"none of a directory", "d", none, "is a directory"},
		{"bad level", "f", &v1alpha1.ArchiveStrategy{Tar: &v1alpha1.TarStrategy{CompressionLevel: &bad}}, "compressionLevel 42"},
		{"missing", "nope", nil, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Pack(filepath.Join(dir, tc.src), tc.strategy, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Pack error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := Archived(&v1alpha1.ArchiveStrategy{Zip: &v1alpha1.ZipStrategy{}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Archived(zip) = %v, want ErrUnsupported", err)
	}
}

func TestUnpackRefuses(t *testing.T) {
	tests := []struct {
		name    string
		entries []entry
		want    string
	}{
		{"dot dot", []entry{{name: "../x", body: "evil"}}, `tar entry "../x" escapes the destination`},
		{"dot dot inside", []entry{{name: "a/../../x", body: "evil"}}, `tar entry "a/../../x" escapes the destination`},
		{"absolute", []entry{{name: "/tmp/x", body: "evil"}}, `tar entry "/tmp/x" escapes the destination`},
		{"symlink absolute", []entry{{name: "l", typ: tar.TypeSymlink, link: "/etc"}},
			`tar entry "l" is a symbolic link to "/etc", which escapes the destination`},
		{"symlink up", []entry{{name: "d/l", typ: tar.TypeSymlink, link: "../../x"}},
			`tar entry "d/l" is a symbolic link to "../../x", which escapes the destination`},
		{"symlink chain", []entry{
			{name: "p/", typ: tar.TypeDir, mode: 0o755},
			{name: "p/q", typ: tar.TypeSymlink, link: ".."},
			{name: "a", typ: tar.TypeSymlink, link: "p/q/.."},
		}, `tar entry "a" is a symbolic link that escapes the destination once resolved`},
		{"entry under a symlinked dir", []entry{
			{name: "sub/", typ: tar.TypeDir, mode: 0o755},
			{name: "l", typ: tar.TypeSymlink, link: "sub"},
			{name: "l/x", body: "through the link"},
		}, `tar entry "l/x" is under the symbolic link "l"`},
		{"hard link up", []entry{{name: "h", typ: tar.TypeLink, link: "../x"}},
			`tar entry "h" is a hard link to "../x", which escapes the destination`},
		{"hard link absolute", []entry{{name: "h", typ: tar.TypeLink, link: "/etc/passwd"}},
			`tar entry "h" is a hard link to "/etc/passwd", which escapes the destination`},
		{"hard link through symlink", []entry{
			{name: "l", typ: tar.TypeSymlink, link: "."},
			{name: "f", body: "x"},
			{name: "h", typ: tar.TypeLink, link: "l/f"},
		}, `tar entry "h" is under the symbolic link "l"`},
		{"char device", []entry{{name: "null", typ: tar.TypeChar}}, `tar entry "null" is a device file or pipe`},
		{"block device", []entry{{name: "sda", typ: tar.TypeBlock}}, `tar entry "sda" is a device file or pipe`},
		{"fifo", []entry{{name: "p", typ: tar.TypeFifo}}, `tar entry "p" is a device file or pipe`},
		{"replaces the destination", []entry{{name: ".", body: "x"}}, `would replace the destination`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "dst")
			err := Unpack(bytes.NewReader(tgz(t, tc.entries...)), dst)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Unpack error = %v, want it to contain %q", err, tc.want)
			}
			assertOnly(t, parent, "dst")
		})
	}
}

// assertOnly fails unless dir holds exactly the named entry: nothing was written beside it.
func assertOnly(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != name {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("%s holds %v, want only %s", dir, names, name)
	}
}

func TestUnpackAccepts(t *testing.T) {
	data := tgz(t,
		entry{name: "./", typ: tar.TypeDir, mode: 0o755},
		entry{name: "./d/f", body: "F"},
		entry{name: "d/l", typ: tar.TypeSymlink, link: "f"},
		entry{name: "up", typ: tar.TypeSymlink, link: "d/../d/f"},
		entry{name: "h", typ: tar.TypeLink, link: "d/f"},
		entry{name: "d/f", body: "F2"}, // a later entry replaces an earlier one
		entry{name: "ro/", typ: tar.TypeDir, mode: 0o555},
		entry{name: "ro/x", body: "X"},
	)
	dst := filepath.Join(t.TempDir(), "dst")
	if err := Unpack(bytes.NewReader(data), dst); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(tree(t, dst), ",")
	want := "./,d/,d/f -rw-r--r-- F2,d/l -> f,h -rw-r--r-- F,ro/,ro/x -rw-r--r-- X,up -> d/../d/f"
	if got != want {
		t.Errorf("tree = %s\nwant   %s", got, want)
	}
}

func TestUnpackBadArchives(t *testing.T) {
	good := tgz(t, entry{name: "f", body: strings.Repeat("payload ", 4096)})
	corrupt := bytes.Clone(good)
	for i := len(corrupt) / 3; i < len(corrupt)/3+16; i++ {
		corrupt[i] ^= 0xff
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)/2], "the artifact is not a valid tar.gz: unexpected EOF"},
		{"truncated trailer", good[:len(good)-4], "the artifact is not a valid tar.gz: unexpected EOF"},
		{"corrupt", corrupt, "the artifact is not a valid tar.gz: "},
		{"not gzip", []byte("just some text"), "the artifact is not a valid tar.gz: gzip: invalid header"},
		{"empty", nil, "the artifact is not a valid tar.gz: unexpected EOF"},
		{"gzip but not tar", gzipped(t, strings.Repeat("not a tar header ", 64)), "the artifact is not a valid tar.gz: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			err := UnpackInput(bytes.NewReader(tc.data), out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("UnpackInput error = %v, want it to contain %q", err, tc.want)
			}
			if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 0 {
				t.Errorf("a failed UnpackInput left %d entries behind", len(left))
			}
		})
	}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	if _, err := gz.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestIsTarGz(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"tgz":        tgz(t, entry{name: "a", body: "x"}),
		"plain gzip": gzipped(t, "hello world, this is not a tarball at all, but it is long enough"),
		"text":       []byte("hello"),
		"empty":      nil,
	}
	for name, data := range files {
		write(t, filepath.Join(dir, name), string(data), 0o644)
	}
	for name, want := range map[string]bool{"tgz": true, "plain gzip": false, "text": false, "empty": false, "missing": false} {
		if got := IsTarGz(filepath.Join(dir, name)); got != want {
			t.Errorf("IsTarGz(%s) = %v, want %v", name, got, want)
		}
	}
}

func FuzzUnpack(f *testing.F) {
	f.Add(tgz(f, entry{name: "a/b", body: "x"}))
	f.Add(tgz(f, entry{name: "../x", body: "x"}))
	f.Add(tgz(f, entry{name: "l", typ: tar.TypeSymlink, link: "/etc"}, entry{name: "l/x", body: "x"}))
	f.Add(tgz(f, entry{name: "p/q", typ: tar.TypeSymlink, link: ".."}, entry{name: "a", typ: tar.TypeSymlink, link: "p/q/.."}))
	f.Add(tgz(f, entry{name: "h", typ: tar.TypeLink, link: "a/b"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "dst")
		err := Unpack(bytes.NewReader(data), dst)
		assertOnly(t, parent, "dst")
		if err != nil {
			return
		}
		// Every symbolic link left behind resolves inside dst.
		realDst, _ := filepath.EvalSymlinks(dst)
		_ = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			if real, err := filepath.EvalSymlinks(p); err == nil &&
				real != realDst && !strings.HasPrefix(real, realDst+string(filepath.Separator)) {
				t.Errorf("symbolic link %s resolves to %s, outside %s", p, real, realDst)
			}
			return nil
		})
	})
}
