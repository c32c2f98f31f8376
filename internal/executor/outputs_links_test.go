package executor

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const secret = "s3cr3t-token-of-braid"

// viewLayout is a step's root laid out as a root view has it: an upper
// layer (what the step wrote), the host standing for the lower layer (a
// directory outside /tmp, so that view paths under it are host paths), a
// private /tmp, and braid's data directory on the host, holding secrets
// and the step's pod directory.
type viewLayout struct {
	upper, tmp string
	host       string // a host directory the step sees at its own path
	data, pod  string
	paths      Paths
}

func newViewLayout(t *testing.T) *viewLayout {
	t.Helper()
	base := t.TempDir()
	host := hostDir(t)
	l := &viewLayout{upper: filepath.Join(base, "upper"), tmp: filepath.Join(base, "tmp"), host: host,
		data: filepath.Join(host, "data")}
	l.pod = filepath.Join(l.data, "runs", "argo", "wf", "pod")
	for _, d := range []string{l.upper, l.tmp, l.pod} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(l.data, "config.yaml"), "token: "+secret+"\n")
	writeFile(t, filepath.Join(l.data, "braid.db"), secret)
	l.paths = Paths{WorkDir: "/", Tmp: l.tmp, Root: l.upper, Hidden: l.data, Visible: l.pod}
	return l
}

// up, low and tmpPath are where the view's path lies in each layer.
func (l *viewLayout) up(view string) string  { return filepath.Join(l.upper, view) }
func (l *viewLayout) low(view string) string { return view } // the host is the lower layer
func (l *viewLayout) tmpPath(view string) string {
	return filepath.Join(l.tmp, strings.TrimPrefix(view, "/tmp"))
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// readParam reads one output parameter at path (with a default when dflt
// is not nil).
func readParam(t *testing.T, paths Paths, path string, dflt *string) (string, error) {
	t.Helper()
	vf := &v1alpha1.ValueFrom{Path: path}
	if dflt != nil {
		vf.Default = v1alpha1.AnyStringPtr(*dflt)
	}
	tp := &v1alpha1.Template{Name: "t", Outputs: v1alpha1.Outputs{Parameters: []v1alpha1.Parameter{{Name: "p", ValueFrom: vf}}}}
	got, err := ReadOutputParameters(tp, paths)
	if err != nil {
		return "", err
	}
	return got[0].Value.String(), nil
}

// Output parameters are read as the step saw them: links resolve inside its
// root (absolute ones from its root, ".." stopping there), through the
// upper layer, the lower one and the private /tmp; a link that leads into
// braid's data directory (but the pod directory), or /proc, is refused and
// names the parameter and the path; loops, dangling links and files over
// the bound are errors.
func TestOutputParameterLinks(t *testing.T) {
	l := newViewLayout(t)
	h := l.host
	writeFile(t, l.up(h+"/out/real"), "upper")
	writeFile(t, l.low(h+"/lower/real"), "lower")
	writeFile(t, l.tmpPath("/tmp/real"), "tmp")
	writeFile(t, filepath.Join(l.pod, "result"), "pod")
	writeFile(t, l.up(h+"/big"), strings.Repeat("x", MaxParameter+1))
	cfg := filepath.Join(l.data, "config.yaml")
	rel := func(from string) string { // a relative link from the view's directory from to the config file
		r, err := filepath.Rel(from, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	symlink(t, cfg, l.tmpPath("/tmp/secret"))
	symlink(t, rel(h+"/out"), l.up(h+"/out/secret"))
	symlink(t, cfg, l.low(h+"/lower/secret"))
	symlink(t, l.pod+"/../../../../config.yaml", l.tmpPath("/tmp/via-pod"))
	symlink(t, l.data, l.up(h+"/data-link"))
	symlink(t, "/proc/self/environ", l.tmpPath("/tmp/environ"))
	symlink(t, h+"/out/real", l.tmpPath("/tmp/abs"))
	symlink(t, "real", l.low(h+"/lower/rel"))
	symlink(t, "../lower/real", l.up(h+"/out/to-lower"))
	symlink(t, "/tmp/chain2", l.up(h+"/chain1"))
	symlink(t, "../"+strings.Repeat("../", 8)+h[1:]+"/lower/real", l.tmpPath("/tmp/chain2"))
	symlink(t, "loop-b", l.up(h+"/loop-a"))
	symlink(t, "loop-a", l.up(h+"/loop-b"))
	symlink(t, "nowhere", l.up(h+"/dangling"))
	symlink(t, l.pod+"/result", l.tmpPath("/tmp/to-pod"))
	symlink(t, "/tmp", l.up(h+"/tmp-link"))

	dflt := "d"
	cases := []struct {
		name, path string
		dflt       *string
		want       string // the value, or "error: ..." for an error that contains ...
	}{
		{"absolute link in /tmp to the config file", "/tmp/secret", nil, "error: path /tmp/secret leads to " + cfg + ", in braid's data directory"},
		{"relative link in the upper layer to the config file", h + "/out/secret", nil, "error: leads to " + cfg},
		{"link in the lower layer to the config file", h + "/lower/secret", nil, "error: leads to " + cfg},
		{"refused even with a default", h + "/lower/secret", &dflt, "error: refused"},
		{"through the pod directory and up", "/tmp/via-pod", nil, "error: leads to " + cfg},
		{"through a link to the data directory", h + "/data-link/braid.db", nil, "error: leads to " + l.data + "/braid.db"},
		{"the data directory named directly", cfg, nil, "error: path " + cfg + " is in braid's data directory"},
		{"a link to /proc", "/tmp/environ", nil, "error: leads to /proc/self/environ, in /proc"},
		{"absolute link to the upper layer", "/tmp/abs", nil, "upper"},
		{"relative link in the lower layer", h + "/lower/rel", nil, "lower"},
		{"relative link from the upper layer to the lower", h + "/out/to-lower", nil, "lower"},
		{"a chain of links, .. stopping at the root", h + "/chain1", nil, "lower"},
		{"a link to the pod directory", "/tmp/to-pod", nil, "pod"},
		{"a directory link to the private /tmp", h + "/tmp-link/real", nil, "tmp"},
		{"relative to the working directory", h[1:] + "/out/real", nil, "upper"},
		{"a loop", h + "/loop-a", nil, "error: too many levels of symbolic links"},
		{"a dangling link", h + "/dangling", nil, "error: open " + h + "/dangling: no such file or directory"},
		{"a dangling link with a default", h + "/dangling", &dflt, "d"},
		{"over the bound", h + "/big", nil, "error: larger than 16777216 bytes"},
		{"a directory", h + "/out", nil, "error: " + h + "/out is a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readParam(t, l.paths, tc.path, tc.dflt)
			checkOutcome(t, got, err, tc.want)
			if err != nil && !strings.Contains(err.Error(), `output parameter "p"`) {
				t.Errorf("the error does not name the parameter: %v", err)
			}
		})
	}
}

// checkOutcome compares a value or an error with want ("error: ..." for an
// error containing ...), and fails if a secret shows in either.
func checkOutcome(t *testing.T, got string, err error, want string) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), secret) || strings.Contains(got, secret) {
		t.Fatalf("the secret leaked: %q %v", got, err)
	}
	if w, ok := strings.CutPrefix(want, "error: "); ok {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("got %q, %v; want an error containing %q", got, err, w)
		}
		return
	}
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// The overlay's own marks: a whiteout in the upper layer deletes the lower
// file, and an opaque directory hides the lower directory's files.
func TestOutputParameterOverlayMarks(t *testing.T) {
	l := newViewLayout(t)
	h := l.host
	writeFile(t, l.low(h+"/gone"), "lower")
	writeFile(t, l.low(h+"/dir/hidden"), "lower")
	writeFile(t, l.low(h+"/dir2/shown"), "lower")
	if err := syscall.Mknod(l.up(h+"/gone"), syscall.S_IFCHR, 0); err != nil {
		t.Skipf("cannot make a whiteout here: %v", err)
	}
	if err := os.MkdirAll(l.up(h+"/dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(l.up(h+"/dir2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setxattr(l.up(h+"/dir"), "trusted.overlay.opaque", []byte("y"), 0); err != nil {
		t.Skipf("cannot mark a directory opaque here: %v", err)
	}
	_, err := readParam(t, l.paths, h+"/gone", nil)
	checkOutcome(t, "", err, "error: no such file or directory")
	_, err = readParam(t, l.paths, h+"/dir/hidden", nil)
	checkOutcome(t, "", err, "error: no such file or directory")
	got, err := readParam(t, l.paths, h+"/dir2/shown", nil)
	checkOutcome(t, got, err, "lower")
}

// Without a view, paths resolve on the host, and still never into the data
// directory (but the pod directory) nor /proc.
func TestOutputParameterLinksWithoutView(t *testing.T) {
	l := newViewLayout(t)
	p := Paths{WorkDir: l.pod, Hidden: l.data, Visible: l.pod}
	writeFile(t, filepath.Join(l.host, "real"), "host")
	writeFile(t, filepath.Join(l.pod, "own"), "own")
	symlink(t, "../../../../config.yaml", filepath.Join(l.pod, "secret"))
	symlink(t, "/proc/1/environ", filepath.Join(l.pod, "environ"))
	symlink(t, filepath.Join(l.host, "real"), filepath.Join(l.pod, "host"))
	for path, want := range map[string]string{
		"secret":  "error: leads to " + filepath.Join(l.data, "config.yaml"),
		"environ": "error: in /proc",
		"host":    "host",
		"own":     "own",
	} {
		got, err := readParam(t, p, path, nil)
		t.Run(path, func(t *testing.T) { checkOutcome(t, got, err, want) })
	}
}

// saveFixture is a view laid out as above, a file repository, and SaveOutputs
// saving the template's outputs to it.
type saveFixture struct {
	*viewLayout
	repo    string
	drivers *artifact.Drivers
}

func newSaveFixture(t *testing.T) *saveFixture {
	t.Helper()
	repo := t.TempDir()
	return &saveFixture{viewLayout: newViewLayout(t), repo: repo, drivers: &artifact.Drivers{File: file.New(repo)}}
}

func (f *saveFixture) save(t *testing.T, paths Paths, arts string, logPath string) ([]v1alpha1.Artifact, error) {
	t.Helper()
	paths.Scratch = t.TempDir()
	tp := parseTemplate(t, `{name: t, outputs: {artifacts: `+arts+`}}`)
	plan := &step.ArtifactPlan{Repository: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}},
		Key: "wf/pod", ArchiveLogs: logPath != ""}
	got, err := SaveOutputs(context.Background(), tp, plan, f.drivers, paths, logPath)
	if entries, _ := os.ReadDir(paths.Scratch); len(entries) != 0 {
		t.Errorf("scratch files left: %v", entries)
	}
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Fatalf("the secret leaked into the error: %v", err)
	}
	return got, err
}

// tarEntries lists a stored tarball as "name", "name -> target" or
// "name content" lines, and its size.
func tarEntries(t *testing.T, path string) ([]string, int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(secret)) {
		t.Fatal("the secret is in the tarball")
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch hdr.Typeflag {
		case tar.TypeSymlink:
			out = append(out, hdr.Name+" -> "+hdr.Linkname)
		case tar.TypeReg:
			body, _ := io.ReadAll(tr)
			if bytes.Contains(body, []byte(secret)) {
				t.Fatalf("the secret is in %s", hdr.Name)
			}
			out = append(out, hdr.Name+" "+string(body))
		default:
			out = append(out, hdr.Name)
		}
	}
	sort.Strings(out)
	return out, int64(len(data))
}

// A directory output stores its links as links, whatever they point to
// ("/", a parent, the data directory): nothing is followed, so the tarball
// stays small. With archive none they are copied as links.
func TestOutputArtifactDirectoryLinks(t *testing.T) {
	f := newSaveFixture(t)
	d := f.tmpPath("/tmp/d")
	writeFile(t, filepath.Join(d, "a"), "A")
	symlink(t, "/", filepath.Join(d, "root"))
	symlink(t, "..", filepath.Join(d, "up"))
	symlink(t, f.data, filepath.Join(d, "data"))
	symlink(t, "a", filepath.Join(d, "to-a"))
	symlink(t, "nowhere", filepath.Join(d, "dangling"))
	if _, err := f.save(t, f.paths, `[{name: d, path: /tmp/d}, {name: raw, path: /tmp/d, archive: {none: {}}}]`, ""); err != nil {
		t.Fatal(err)
	}
	got, size := tarEntries(t, filepath.Join(f.repo, "wf/pod/d.tgz"))
	want := []string{"d/", "d/a A", "d/dangling -> nowhere", "d/data -> " + f.data, "d/root -> /", "d/to-a -> a", "d/up -> .."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tarball:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if size > 4096 {
		t.Errorf("the tarball has %d bytes: a link was followed", size)
	}
	stored := filepath.Join(f.repo, "wf/pod/raw")
	for name, target := range map[string]string{"root": "/", "up": "..", "data": f.data, "dangling": "nowhere"} {
		if got, err := os.Readlink(filepath.Join(stored, name)); err != nil || got != target {
			t.Errorf("archive none: %s is %q, %v; want a link to %q", name, got, err, target)
		}
	}
}

// The path of an artifact is resolved as a parameter's: a link to braid's
// files is refused (archive none as well), a link inside the view is
// followed, and a link to a parent of the data directory packs only what
// the step sees there: the way to its pod directory.
func TestOutputArtifactPathLinks(t *testing.T) {
	f := newSaveFixture(t)
	writeFile(t, f.up(f.host+"/out/real"), "real")
	writeFile(t, filepath.Join(f.pod, "mine"), "mine")
	symlink(t, filepath.Join(f.data, "braid.db"), f.tmpPath("/tmp/db"))
	symlink(t, f.host+"/out/real", f.tmpPath("/tmp/ok"))
	symlink(t, f.host, f.tmpPath("/tmp/parent"))
	symlink(t, "nowhere", f.tmpPath("/tmp/dangling"))

	_, err := f.save(t, f.paths, `[{name: db, path: /tmp/db, archive: {none: {}}}]`, "")
	checkOutcome(t, "", err, `error: output artifact "db": path /tmp/db leads to `+f.data+"/braid.db, in braid's data directory")
	if _, err := os.Lstat(filepath.Join(f.repo, "wf/pod/db")); err == nil {
		t.Error("the refused artifact was stored")
	}
	_, err = f.save(t, f.paths, `[{name: dangling, path: /tmp/dangling}, {name: opt, path: /tmp/dangling, optional: true}]`, "")
	checkOutcome(t, "", err, `error: output artifact "dangling": stat /tmp/dangling: no such file or directory`)
	if strings.Contains(err.Error(), `"opt"`) {
		t.Errorf("an optional dangling link is an error: %v", err)
	}

	if _, err := f.save(t, f.paths, `[{name: ok, path: /tmp/ok, archive: {none: {}}}, {name: parent, path: /tmp/parent}]`, ""); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(f.repo, "wf/pod/ok")); err != nil || string(data) != "real" {
		t.Errorf("archive none of a link: %q, %v", data, err)
	}
	got, _ := tarEntries(t, filepath.Join(f.repo, "wf/pod/parent.tgz"))
	var under []string
	for _, e := range got {
		if strings.HasPrefix(e, "parent/data") {
			under = append(under, e)
		}
	}
	want := []string{"parent/data/", "parent/data/runs/", "parent/data/runs/argo/", "parent/data/runs/argo/wf/",
		"parent/data/runs/argo/wf/pod/", "parent/data/runs/argo/wf/pod/mine mine"}
	if strings.Join(under, "\n") != strings.Join(want, "\n") {
		t.Errorf("under the data directory:\n%s\nwant:\n%s", strings.Join(under, "\n"), strings.Join(want, "\n"))
	}
}

// An artifact over its bound, in bytes or in entries, is an error that names
// it and the bound.
func TestOutputArtifactBounds(t *testing.T) {
	f := newSaveFixture(t)
	writeFile(t, f.tmpPath("/tmp/big"), strings.Repeat("x", 2000))
	for i := range 10 {
		writeFile(t, f.tmpPath("/tmp/many/"+string(rune('a'+i))), "x")
	}
	p := f.paths
	p.Limits = artifact.Limits{Bytes: 1024, Entries: 5}
	for _, tc := range []struct{ arts, want string }{
		{`[{name: big, path: /tmp/big}]`, `output artifact "big" (file wf/pod/big.tgz): pack big: holds more than 1 KiB of files (over the bound of an artifact)`},
		{`[{name: big, path: /tmp/big, archive: {none: {}}}]`, `output artifact "big" (file wf/pod/big): holds more than 1024 bytes`},
		{`[{name: many, path: /tmp/many}]`, `output artifact "many" (file wf/pod/many.tgz): pack many: holds more than 5 files, directories and links`},
		{`[{name: many, path: /tmp/many, archive: {none: {}}}]`, `output artifact "many" (file wf/pod/many): holds more than 5 files, directories and links`},
	} {
		_, err := f.save(t, p, tc.arts, "")
		checkOutcome(t, "", err, "error: "+tc.want)
		if !errors.Is(err, artifact.ErrTooLarge) {
			t.Errorf("%v does not wrap ErrTooLarge", err)
		}
	}
}

// A log that the step replaced with a link is not saved.
func TestArchiveLogsLink(t *testing.T) {
	f := newSaveFixture(t)
	logPath := filepath.Join(f.pod, "main.log")
	symlink(t, filepath.Join(f.data, "config.yaml"), logPath)
	_, err := f.save(t, f.paths, `[]`, logPath)
	checkOutcome(t, "", err, "error: archive logs: open "+logPath+": is a symbolic link")
	if err := os.Remove(logPath); err != nil {
		t.Fatal(err)
	}
	writeFile(t, logPath, "the log\n")
	if _, err := f.save(t, f.paths, `[]`, logPath); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(f.repo, "wf/pod/main.log")); err != nil || string(data) != "the log\n" {
		t.Errorf("stored log %q, %v", data, err)
	}
}

// An image's root as the lower layer: its absolute links resolve in the
// image, not on the host.
func TestOutputParameterImageLower(t *testing.T) {
	l := newViewLayout(t)
	img := t.TempDir()
	writeFile(t, filepath.Join(img, "etc/conf"), "image")
	symlink(t, "/etc/conf", filepath.Join(img, "link"))
	p := l.paths
	p.Lower = img
	got, err := readParam(t, p, "/link", nil)
	checkOutcome(t, got, err, "image")
	if _, err := readParam(t, p, "/etc/passwd", nil); !errors.Is(err, fs.ErrNotExist) && !strings.Contains(fmtErr(err), "no such file") {
		t.Errorf("the host's /etc/passwd through an image's root: %v", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Without a view, a step whose working directory lies under its private
// /tmp works in the host's directory: its relative paths, and the ".." of
// their links, are the host's; its absolute /tmp paths are the private
// /tmp's.
func TestOutputParameterWorkDirUnderTmp(t *testing.T) {
	base := t.TempDir()
	rel, ok := strings.CutPrefix(base, "/tmp/")
	if !ok {
		t.Skipf("the test directory %s is not under /tmp", base)
	}
	wd, tmp := filepath.Join(base, "work"), hostDir(t)
	writeFile(t, filepath.Join(wd, "rel"), "wd")
	writeFile(t, filepath.Join(base, "sib", "f"), "host")
	writeFile(t, filepath.Join(tmp, rel, "sib", "f"), "private")
	symlink(t, "../sib/f", filepath.Join(wd, "up"))
	p := Paths{WorkDir: wd, Tmp: tmp}
	for path, want := range map[string]string{"rel": "wd", "up": "host", base + "/sib/f": "private", wd + "/up": "error: no such file or directory"} {
		got, err := readParam(t, p, path, nil)
		t.Run(path, func(t *testing.T) { checkOutcome(t, got, err, want) })
	}
}
