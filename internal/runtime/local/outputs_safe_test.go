package local

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	stepdata "github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const braidSecret = "braid-secret-5f0c1e"

// A step that links its outputs to braid's own files gets nothing of them:
// an output parameter linked to the data directory's config.yaml, an
// archive-none artifact linked to braid.db, and a main.log replaced by a
// link to config.yaml (with archiveLogs) are each refused with a message
// naming the output and the path; an artifact linked to a parent of the
// data directory packs only what the step sees there (the way to its own
// pod directory), not braid's files nor the tarball being written; links
// inside a directory output are stored as links. The secret never shows in
// the final event nor in the repository. In a root view, and without one.
func TestOutputsSafeFromLinks(t *testing.T) {
	t.Run("view", func(t *testing.T) {
		repo, d := safeRepo(t)
		rt := newViewRuntime(t, func(c *Config) { c.Artifacts = d })
		attackOutputs(t, rt, repo)
	})
	t.Run("none", func(t *testing.T) {
		repo, d := safeRepo(t)
		rt := newRuntime(t, func(c *Config) { c.Artifacts = d })
		if !rt.privateTmp {
			t.Skip("steps cannot get a private /tmp here")
		}
		attackOutputs(t, rt, repo)
	})
}

// safeRepo is a file repository outside the test's directory, so that a
// parent of the data directory does not hold it.
func safeRepo(t *testing.T) (string, *artifact.Drivers) {
	t.Helper()
	repo, err := os.MkdirTemp("", "braid-safe-repo-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(repo) })
	return repo, &artifact.Drivers{File: file.New(repo)}
}

func attackOutputs(t *testing.T, rt *harness, repo string) {
	data := rt.cfg.DataDir
	for _, f := range []string{"config.yaml", "braid.db"} {
		if err := os.WriteFile(filepath.Join(data, f), []byte("token: "+braidSecret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	parent := filepath.Dir(data)
	run := newRun(nil)
	pod := rt.stepDir(run)
	run.Template = tmpl(t, strings.NewReplacer("$DATA", data, "$PARENT", parent, "$POD", pod).Replace(`
name: attack
script:
  image: busybox
  command: [sh]
  source: |
    ln -s $DATA/config.yaml /tmp/p
    ln -s $DATA/braid.db /tmp/db
    ln -s $PARENT /tmp/up
    mkdir /tmp/d && echo fine > /tmp/d/f && ln -s $PARENT /tmp/d/top && ln -s / /tmp/d/root
    # The step's directory may be read-only in its view.
    (rm -f $POD/main.log && ln -s $DATA/config.yaml $POD/main.log) 2>/dev/null || true
outputs:
  parameters:
  - {name: p, valueFrom: {path: /tmp/p}}
  artifacts:
  - {name: db, path: /tmp/db, archive: {none: {}}}
  - {name: up, path: /tmp/up}
  - {name: d, path: /tmp/d}
`))
	run.Artifacts = &stepdata.ArtifactPlan{Repository: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}},
		Key: "wf/" + run.PodName, ArchiveLogs: true}
	ev := final(runToEnd(t, rt, run))
	js, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(js, []byte(braidSecret)) {
		t.Fatalf("the secret is in the final event: %s", js)
	}
	if ev.Phase != v1alpha1.NodeError {
		t.Fatalf("phase %s (%s), want Error", ev.Phase, ev.Message)
	}
	wants := []string{
		`output parameter "p": path /tmp/p leads to ` + filepath.Join(data, "config.yaml") + ", in braid's data directory",
		`output artifact "db": path /tmp/db leads to ` + filepath.Join(data, "braid.db") + ", in braid's data directory",
	}
	if info, err := os.Lstat(filepath.Join(pod, "main.log")); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		wants = append(wants, "archive logs: open "+filepath.Join(pod, "main.log")+": is a symbolic link")
	} else {
		t.Log("the step could not replace its main.log")
	}
	for _, want := range wants {
		if !strings.Contains(ev.Message, want) {
			t.Errorf("message %q\nlacks %q", ev.Message, want)
		}
	}
	key := filepath.Join(repo, "wf", run.PodName)
	if _, err := os.Lstat(filepath.Join(key, "db")); err == nil {
		t.Error("the refused artifact db was stored")
	}
	up := storedTar(t, filepath.Join(key, "up.tgz"))
	rel, _ := filepath.Rel(parent, pod)
	if !up["up/"+rel+"/"] {
		t.Errorf("up.tgz lacks the step's own directory %s: %v", rel, up)
	}
	for name := range up {
		if strings.Contains(name, "config.yaml") && !strings.Contains(name, " -> ") {
			t.Errorf("up.tgz holds %s", name)
		}
	}
	d := storedTar(t, filepath.Join(key, "d.tgz"))
	for _, want := range []string{"d/top -> " + parent, "d/root -> /", "d/f"} {
		if !d[want] {
			t.Errorf("d.tgz lacks %q: %v", want, d)
		}
	}
	checkRepoClean(t, repo)
}

// storedTar lists a stored tarball's entries ("name", or "name -> target"
// for a link), failing when it is big (something was followed) or holds
// the secret.
func storedTar(t *testing.T, path string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 1<<20 {
		t.Fatalf("%s has %d bytes: a link was followed", path, len(raw))
	}
	gz, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if bytes.Contains(body, []byte(braidSecret)) {
			t.Fatalf("%s holds the secret in %s", path, hdr.Name)
		}
		name := hdr.Name
		if hdr.Typeflag == tar.TypeSymlink {
			name += " -> " + hdr.Linkname
		}
		out[name] = true
	}
}

// checkRepoClean fails when any stored file holds the secret.
func checkRepoClean(t *testing.T, repo string) {
	t.Helper()
	err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte(braidSecret)) {
			t.Errorf("%s holds the secret", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
