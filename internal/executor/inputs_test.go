package executor

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	arthttp "github.com/braidwf/braid/internal/artifact/http"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// fixture is a file repository, an http server over the same files, and a
// step's directories.
type fixture struct {
	repo    string // the file repository's root
	drivers *artifact.Drivers
	paths   Paths
	url     string // the http server's base URL, serving repo
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{repo: filepath.Join(root, "repo"), paths: Paths{WorkDir: filepath.Join(root, "work"), Tmp: filepath.Join(root, "tmp")}}
	for _, d := range []string{f.repo, f.paths.WorkDir, f.paths.Tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := filepath.Join(f.repo, filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/")))
		switch r.Method {
		case http.MethodGet:
			http.ServeFile(w, r, p)
		case http.MethodPut:
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			out, err := os.Create(p)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			defer out.Close()
			if _, err := io.Copy(out, r.Body); err != nil {
				http.Error(w, err.Error(), 500)
			}
		}
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	f.drivers = &artifact.Drivers{File: file.New(f.repo), HTTP: arthttp.New(nil, "argo")}
	return f
}

// put writes a file into the repository.
func (f *fixture) put(t *testing.T, key string, data []byte) {
	t.Helper()
	p := filepath.Join(f.repo, key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// packed returns the tar.gz Pack makes of a tree built by files (path ->
// content; a path ending in "/" is a directory) under the top name.
func packed(t *testing.T, top string, files map[string]string) []byte {
	t.Helper()
	dir := t.TempDir()
	base := filepath.Join(dir, top)
	for p, content := range files {
		full := filepath.Join(base, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(files) == 0 { // a single file named top
		if err := os.WriteFile(base, []byte("file "+top), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := artifact.Pack(base, nil, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// evilTar is a tar.gz holding the given headers (regular files get "x").
func evilTar(t *testing.T, hdrs ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, h := range hdrs {
		if h.Typeflag == tar.TypeReg {
			h.Size = 1
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			_, _ = tw.Write([]byte("x"))
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

func TestLoadInputs(t *testing.T) {
	fileRepo := &step.ArtifactPlan{Repository: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}}}
	type check struct {
		path    string // as the step sees it
		content string // "" with dir set: a directory
		dir     bool
		mode    os.FileMode // 0: not checked
		absent  bool
	}
	cases := []struct {
		name   string
		setup  func(t *testing.T, f *fixture)
		inputs string // YAML list; $URL is the http server
		plan   *step.ArtifactPlan
		nilDrv bool
		checks []check
		err    string // "" for success; else a substring of the error
		is     error
	}{{
		name:   "raw, relative to the working directory, with a mode",
		inputs: `[{name: r, path: sub/r.txt, mode: 0600, raw: {data: "raw data"}}]`,
		nilDrv: true,
		checks: []check{{path: "sub/r.txt", content: "raw data", mode: 0o600}},
	}, {
		name:   "a tarball of one file becomes that file",
		setup:  func(t *testing.T, f *fixture) { f.put(t, "wf/pod/out.tgz", packed(t, "out.txt", nil)) },
		inputs: `[{name: a, path: /tmp/in/a.txt, file: {key: wf/pod/out.tgz}}]`,
		checks: []check{{path: "/tmp/in/a.txt", content: "file out.txt"}},
	}, {
		name: "a tarball of a directory becomes that directory",
		setup: func(t *testing.T, f *fixture) {
			f.put(t, "d.tgz", packed(t, "d", map[string]string{"x.txt": "x", "s/y.txt": "y"}))
		},
		inputs: `[{name: a, path: in/dir, file: {key: d.tgz}, mode: 0700, recurseMode: true}]`,
		checks: []check{{path: "in/dir", dir: true, mode: 0o700}, {path: "in/dir/x.txt", content: "x", mode: 0o700},
			{path: "in/dir/s/y.txt", content: "y", mode: 0o700}},
	}, {
		name: "subPath places one file of a directory artifact",
		setup: func(t *testing.T, f *fixture) {
			f.put(t, "d.tgz", packed(t, "d", map[string]string{"x.txt": "x", "s/y.txt": "y"}))
		},
		inputs: `[{name: a, path: /tmp/y.txt, file: {key: d.tgz}, subPath: s/y.txt, mode: 0640}]`,
		checks: []check{{path: "/tmp/y.txt", content: "y", mode: 0o640}},
	}, {
		name:   "a plain file is placed as it is",
		setup:  func(t *testing.T, f *fixture) { f.put(t, "plain.txt", []byte("plain")) },
		inputs: `[{name: a, path: /tmp/p, file: {key: plain.txt}}]`,
		checks: []check{{path: "/tmp/p", content: "plain"}},
	}, {
		name:   "a key-only s3 location inherits the file repository",
		setup:  func(t *testing.T, f *fixture) { f.put(t, "my/key.txt", []byte("k")) },
		inputs: `[{name: a, path: k.txt, s3: {key: my/key.txt}}]`,
		plan:   fileRepo,
		checks: []check{{path: "k.txt", content: "k"}},
	}, {
		name: "an existing file and an earlier run's directory are replaced",
		setup: func(t *testing.T, f *fixture) {
			f.put(t, "plain.txt", []byte("new"))
			_ = os.WriteFile(filepath.Join(f.paths.Tmp, "old"), []byte("old"), 0o644)
			_ = os.MkdirAll(filepath.Join(f.paths.WorkDir, "old-dir/sub"), 0o755)
		},
		inputs: `[{name: a, path: /tmp/old, file: {key: plain.txt}}, {name: b, path: old-dir, file: {key: plain.txt}}]`,
		checks: []check{{path: "/tmp/old", content: "new"}, {path: "old-dir", content: "new"}},
	}, {
		name:   "http, a tarball",
		setup:  func(t *testing.T, f *fixture) { f.put(t, "h/out.tgz", packed(t, "out.txt", nil)) },
		inputs: `[{name: h, path: h.txt, http: {url: "$URL/h/out.tgz"}}]`,
		checks: []check{{path: "h.txt", content: "file out.txt"}},
	}, {
		name:   "optional and missing: skipped",
		inputs: `[{name: a, path: /tmp/a, optional: true, file: {key: nope.tgz}}, {name: h, path: h, optional: true, http: {url: "$URL/nope"}}, {name: n, path: /tmp/n, optional: true}]`,
		checks: []check{{path: "/tmp/a", absent: true}, {path: "h", absent: true}, {path: "/tmp/n", absent: true}},
	}, {
		name:   "required and missing",
		inputs: `[{name: x, path: /tmp/x, file: {key: wf/nope.tgz}}]`,
		err:    `input artifact "x" (file wf/nope.tgz): not found`,
		is:     artifact.ErrNotFound,
		checks: []check{{path: "/tmp/x", absent: true}},
	}, {
		name:   "required and missing over http",
		inputs: `[{name: x, path: x, http: {url: "$URL/nope?token=secret"}}]`,
		err:    `input artifact "x" (http $URL/nope): not found`,
		is:     artifact.ErrNotFound,
	}, {
		name:   "required without a location",
		inputs: `[{name: x, path: /tmp/x}]`,
		err:    `input artifact "x": required artifact not supplied (it has no location)`,
	}, {
		name:   "no driver for the kind",
		inputs: `[{name: s, path: /tmp/s, s3: {bucket: b, key: k}}]`,
		nilDrv: true,
		err:    `input artifact "s" (s3 b/k): artifact location kind "s3" is not supported`,
		is:     artifact.ErrUnsupported,
	}, {
		name: "a truncated tarball",
		setup: func(t *testing.T, f *fixture) {
			data := packed(t, "d", map[string]string{"big.txt": strings.Repeat("0123456789", 100000)})
			f.put(t, "t.tgz", data[:len(data)/2])
		},
		inputs: `[{name: t, path: /tmp/t, file: {key: t.tgz}}]`,
		err:    `input artifact "t" (file t.tgz): the artifact is not a valid tar.gz: unexpected EOF`,
		checks: []check{{path: "/tmp/t", absent: true}},
	}, {
		name: "a corrupt tarball at a .tgz key",
		setup: func(t *testing.T, f *fixture) {
			data := packed(t, "out.txt", nil)
			copy(data[10:], bytes.Repeat([]byte{0xff}, 20))
			f.put(t, "c.tgz", data)
		},
		inputs: `[{name: c, path: /tmp/c, file: {key: c.tgz}}]`,
		err:    `input artifact "c" (file c.tgz): the artifact is not a valid tar.gz`,
		checks: []check{{path: "/tmp/c", absent: true}},
	}, {
		name: "a tar entry climbing out with ..",
		setup: func(t *testing.T, f *fixture) {
			f.put(t, "e.tgz", evilTar(t, &tar.Header{Name: "../evil", Typeflag: tar.TypeReg}))
		},
		inputs: `[{name: e, path: /tmp/e, file: {key: e.tgz}}]`,
		err:    `input artifact "e" (file e.tgz): tar entry "../evil" escapes the destination`,
		checks: []check{{path: "/tmp/e", absent: true}, {path: "/tmp/evil", absent: true}},
	}, {
		name: "a tar entry written through a symbolic link",
		setup: func(t *testing.T, f *fixture) {
			f.put(t, "l.tgz", evilTar(t, &tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755},
				&tar.Header{Name: "d/link", Typeflag: tar.TypeSymlink, Linkname: "../../.."},
				&tar.Header{Name: "d/link/escaped", Typeflag: tar.TypeReg}))
		},
		inputs: `[{name: l, path: /tmp/l, file: {key: l.tgz}}]`,
		err:    `input artifact "l" (file l.tgz): tar entry "d/link" is a symbolic link to "../../..", which escapes the destination`,
		checks: []check{{path: "/tmp/l", absent: true}},
	}, {
		name:   "subPath leaving the artifact",
		setup:  func(t *testing.T, f *fixture) { f.put(t, "d.tgz", packed(t, "d", map[string]string{"x.txt": "x"})) },
		inputs: `[{name: a, path: /tmp/a, file: {key: d.tgz}, subPath: ../../x}]`,
		err:    `input artifact "a" (file d.tgz): subPath "../../x" leaves the artifact`,
	}, {
		name:   "subPath missing",
		setup:  func(t *testing.T, f *fixture) { f.put(t, "d.tgz", packed(t, "d", map[string]string{"x.txt": "x"})) },
		inputs: `[{name: a, path: /tmp/a, file: {key: d.tgz}, subPath: nope}]`,
		err:    `input artifact "a" (file d.tgz): subPath "nope" does not exist in the artifact`,
	}, {
		name:   "an unreachable endpoint, after bounded retries",
		inputs: `[{name: u, path: u, http: {url: "http://127.0.0.1:1/x.tgz"}}]`,
		err:    `input artifact "u": load http://127.0.0.1:1/x.tgz: Get "http://127.0.0.1:1/x.tgz": dial tcp 127.0.0.1:1: connect: connection refused (gave up after 5 attempts)`,
		checks: []check{{path: "u", absent: true}},
	}, {
		name: "the working directory itself is not replaced",
		setup: func(t *testing.T, f *fixture) {
			f.put(t, "plain.txt", []byte("p"))
			_ = os.WriteFile(filepath.Join(f.paths.WorkDir, "keep"), nil, 0o644)
		},
		inputs: `[{name: a, path: ., file: {key: plain.txt}}]`,
		err:    "is a directory that is not empty and will not be replaced",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			tp := parseTemplate(t, `{name: t, container: {image: x}, inputs: {artifacts: `+strings.ReplaceAll(tc.inputs, "$URL", f.url)+`}}`)
			d := f.drivers
			if tc.nilDrv {
				d = nil
			}
			err := LoadInputs(context.Background(), tp, tc.plan, d, f.paths)
			want := strings.ReplaceAll(tc.err, "$URL", f.url)
			switch {
			case want == "" && err != nil:
				t.Fatalf("LoadInputs: %v", err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Fatalf("err = %v, want it to contain %q", err, want)
			case tc.is != nil && !errors.Is(err, tc.is):
				t.Errorf("err = %v, want errors.Is %v", err, tc.is)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the URL's query: %v", err)
			}
			for _, c := range tc.checks {
				checkPath(t, f.paths.Resolve(c.path), c.content, c.dir, c.mode, c.absent)
			}
			// No scratch directory is left behind.
			for _, dir := range []string{f.paths.Tmp, f.paths.WorkDir, filepath.Join(f.paths.Tmp, "in"), filepath.Join(f.paths.WorkDir, "in")} {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if strings.Contains(e.Name(), ".load-") || strings.Contains(e.Name(), ".unpack-") {
						t.Errorf("scratch %s left in %s", e.Name(), dir)
					}
				}
			}
		})
	}
}

func checkPath(t *testing.T, p, content string, dir bool, mode os.FileMode, absent bool) {
	t.Helper()
	info, err := os.Lstat(p)
	if absent {
		if err == nil {
			t.Errorf("%s exists", p)
		}
		return
	}
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	if dir != info.IsDir() {
		t.Errorf("%s: directory = %v, want %v", p, info.IsDir(), dir)
	}
	if !dir {
		data, err := os.ReadFile(p)
		if err != nil || string(data) != content {
			t.Errorf("%s = %q (%v), want %q", p, data, err, content)
		}
	}
	if mode != 0 && info.Mode().Perm() != mode {
		t.Errorf("%s: mode %v, want %v", p, info.Mode().Perm(), mode)
	}
}

// A load stops when its context ends.
func TestLoadInputsCancelled(t *testing.T) {
	f := newFixture(t)
	f.put(t, "d.tgz", packed(t, "d", map[string]string{"x": "x"}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tp := parseTemplate(t, `{name: t, inputs: {artifacts: [{name: a, path: /tmp/a, file: {key: d.tgz}}]}}`)
	if err := LoadInputs(ctx, tp, nil, f.drivers, f.paths); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestHasRemoteInputs(t *testing.T) {
	for src, want := range map[string]bool{
		`{name: t}`: false,
		`{name: t, inputs: {artifacts: [{name: r, path: /x, raw: {data: d}}]}}`:                                      false,
		`{name: t, inputs: {artifacts: [{name: o, path: /x, optional: true}]}}`:                                      false,
		`{name: t, inputs: {artifacts: [{name: r, path: /x, raw: {data: d}}, {name: f, path: /y, file: {key: k}}]}}`: true,
		`{name: t, inputs: {artifacts: [{name: s, path: /x, s3: {key: k}}]}}`:                                        true,
	} {
		if got := HasRemoteInputs(parseTemplate(t, src)); got != want {
			t.Errorf("%s: %v, want %v", src, got, want)
		}
	}
}

// dirDriver loads a directory, as the git driver checks out a repository:
// a file, a subdirectory, and a symbolic link that leads out of it.
type dirDriver struct{ artifact.Driver }

func (dirDriver) Load(_ context.Context, _ *v1alpha1.Artifact, path string) error {
	if err := os.MkdirAll(filepath.Join(path, "docs"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(path, "README"), []byte("readme"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(path, "docs", "a.md"), []byte("a"), 0o644); err != nil {
		return err
	}
	return os.Symlink("/etc", filepath.Join(path, "out"))
}

// A directory location (git) is placed as a directory; subPath selects in
// it, and may not follow a link out of it.
func TestLoadInputsDirectory(t *testing.T) {
	f := newFixture(t)
	d := &artifact.Drivers{Git: dirDriver{}}
	tp := parseTemplate(t, `{name: t, inputs: {artifacts: [{name: src, path: /tmp/src, git: {repo: "https://user:pw@example.com/r.git"}},
	  {name: doc, path: doc.md, git: {repo: "https://example.com/r.git"}, subPath: docs/a.md}]}}`)
	if err := LoadInputs(context.Background(), tp, nil, d, f.paths); err != nil {
		t.Fatal(err)
	}
	checkPath(t, f.paths.Resolve("/tmp/src/README"), "readme", false, 0, false)
	checkPath(t, f.paths.Resolve("/tmp/src/docs"), "", true, 0, false)
	checkPath(t, f.paths.Resolve("doc.md"), "a", false, 0, false)
	tp = parseTemplate(t, `{name: t, inputs: {artifacts: [{name: src, path: /tmp/etc, git: {repo: "https://user:pw@example.com/r.git"}, subPath: out/passwd}]}}`)
	err := LoadInputs(context.Background(), tp, nil, d, f.paths)
	want := `input artifact "src" (git https://example.com/r.git): subPath "out/passwd" leaves the artifact through a symbolic link`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	checkPath(t, f.paths.Resolve("/tmp/etc"), "", false, 0, true)
}
