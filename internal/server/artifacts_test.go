package server

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The artifact routes stream a node's artifacts from the repository, a
// file of a directory artifact through /artifact-files, and answer plain
// 404s for what does not exist.
func TestArtifactRoutes(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("wf/pod/out.txt", "hello")
	write("wf/pod/dir/a/b.txt", "inside")
	addr, st := startServerStore(t, Options{Artifacts: &artifact.Drivers{File: file.New(root)}})
	wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: "arts"}}
	wf.Spec.Entrypoint = "main"
	loc := func(k string) v1alpha1.ArtifactLocation {
		return v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: k}}
	}
	wf.Status.Nodes = v1alpha1.Nodes{"arts": {ID: "arts", Name: "arts", Type: v1alpha1.NodeTypePod,
		Outputs: &v1alpha1.Outputs{Artifacts: []v1alpha1.Artifact{
			{Name: "out", ArtifactLocation: loc("wf/pod/out.txt")},
			{Name: "dir", ArtifactLocation: loc("wf/pod/dir")},
			{Name: "gone", ArtifactLocation: loc("wf/pod/nothing")},
		}}}}
	if err := st.Create(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	tests := []struct {
		path   string
		status int
		body   string
	}{
		{"/artifacts/argo/arts/arts/out", 200, "hello"},
		{"/artifact-files/argo/workflows/arts/arts/outputs/out", 200, "hello"},
		{"/artifact-files/argo/workflows/arts/arts/outputs/dir/a/b.txt", 200, "inside"},
		{"/artifact-files/argo/workflows/arts/arts/outputs/out/inside.txt", 404, "artifact \"out\" has no file \"inside.txt\": only a directory saved with archive none can be browsed (download the artifact instead)\n"},
		{"/artifact-files/argo/workflows/arts/arts/outputs/dir/../../out.txt", 404, ""},
		{"/artifacts/argo/arts/arts/gone", 404, "Not Found\n"},
		{"/artifacts/argo/arts/arts/nope", 404, "Not Found\n"},
		{"/artifacts/argo/missing/arts/out", 404, "Not Found\n"},
		{"/artifact-files/argo/elsewhere/arts/arts/outputs/out", 400, "Bad Request\n"},
	}
	for _, tc := range tests {
		res := do(t, "GET", base+tc.path, "")
		if res.status != tc.status || (tc.body != "" && string(res.body) != tc.body) {
			t.Errorf("GET %s: %d %q, want %d %q", tc.path, res.status, res.body, tc.status, tc.body)
		}
	}
	res := do(t, "GET", base+"/artifacts/argo/arts/arts/out", "")
	if got := res.header.Get("Content-Disposition"); got != `filename="out.txt"` {
		t.Errorf("Content-Disposition %q", got)
	}
}

// A directory saved without an archive is served as a tar stream of
// <name>/..., leaving out symbolic links (above all those that leave the
// artifact); an empty one is an empty tar; a location that cannot be
// listed is a 400 that says why; a name with %2F is one segment.
func TestArtifactDirectoryAsTar(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for rel, data := range map[string]string{"wf/pod/tree/a.txt": "A", "wf/pod/tree/sub/b.txt": "BB"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"wf/pod/tree/secret":     filepath.Join(outside, "secret"),
		"wf/pod/tree/outdir":     outside,
		"wf/pod/tree/sub/inside": "../a.txt",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "wf/pod/empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	addr, st := startServerStore(t, Options{Artifacts: &artifact.Drivers{File: file.New(root)}})
	wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: "dirs"}}
	wf.Spec.Entrypoint = "main"
	none := &v1alpha1.ArchiveStrategy{None: &v1alpha1.NoneStrategy{}}
	wf.Status.Nodes = v1alpha1.Nodes{"dirs": {ID: "dirs", Name: "dirs", Type: v1alpha1.NodeTypePod,
		Outputs: &v1alpha1.Outputs{Artifacts: []v1alpha1.Artifact{
			{Name: "tree", Archive: none, ArtifactLocation: v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: "wf/pod/tree"}}},
			{Name: "empty", Archive: none, ArtifactLocation: v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: "wf/pod/empty"}}},
			{Name: "repo", ArtifactLocation: v1alpha1.ArtifactLocation{Git: &v1alpha1.GitArtifact{Repo: "https://example.invalid/r.git"}}},
		}}}}
	if err := st.Create(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	res := do(t, "GET", base+"/artifacts/argo/dirs/dirs/tree", "")
	if res.status != 200 {
		t.Fatalf("GET the directory: %d %s", res.status, res.body)
	}
	if ct, cd := res.header.Get("Content-Type"), res.header.Get("Content-Disposition"); ct != "application/x-tar" || cd != `filename="tree.tar"` {
		t.Errorf("Content-Type %q, Content-Disposition %q", ct, cd)
	}
	if got, want := tarFiles(t, res.body), "tree/a.txt=A tree/sub/b.txt=BB"; got != want {
		t.Errorf("tar files: %s, want %s", got, want)
	}
	// A directory inside the artifact, through /artifact-files.
	res = do(t, "GET", base+"/artifact-files/argo/workflows/dirs/dirs/outputs/tree/sub", "")
	if got := tarFiles(t, res.body); res.status != 200 || got != "tree/b.txt=BB" {
		t.Errorf("GET a sub-directory: %d, tar files %s", res.status, got)
	}
	res = do(t, "GET", base+"/artifacts/argo/dirs/dirs/empty", "")
	if got := tarFiles(t, res.body); res.status != 200 || got != "" {
		t.Errorf("GET an empty directory: %d, tar files %q", res.status, got)
	}
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/artifacts/argo/dirs/dirs/repo", 400, "cannot be downloaded"},
		{"/artifact-files/argo/workflows/dirs/dirs/outputs/tree/secret", 400, "symbolic link"},
		{"/artifact-files/argo/workflows/dirs/dirs/outputs/tree/outdir/secret", 400, "symbolic link"},
		{"/artifact-files/argo/workflows/dirs/dirs/outputs/tree/%2E%2E/%2E%2E/x", 404, ""},
		{"/artifacts/argo/dirs/dirs/tree%2Fa.txt", 404, "Not Found"},
		{"/artifacts/argo/dirs%2Fx/dirs/tree", 404, "Not Found"},
		{"/artifacts/argo/dirs/dirs/a%00b", 404, "Not Found"},
		{"/input-artifacts/argo/dirs/dirs/tree%2F..", 404, "Not Found"},
		{"/artifact-files/argo/workflows/dirs/dirs/outputs%2Ftree/a.txt", 400, "Bad Request"},
		{"/artifact-files/argo/workflows/dirs/dirs/outputs/tree/sub/inside", 400, "symbolic link"},
	} {
		res := do(t, "GET", base+tc.path, "")
		if res.status != tc.status || !strings.Contains(string(res.body), tc.body) {
			t.Errorf("GET %s: %d %q, want %d with %q", tc.path, res.status, res.body, tc.status, tc.body)
		}
	}
}

// tarFiles lists a tar's regular files as name=content, in order.
func tarFiles(t *testing.T, b []byte) string {
	t.Helper()
	var out []string
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return strings.Join(out, " ")
		}
		if err != nil {
			t.Fatalf("not a whole tar: %v", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h.Name+"="+string(data))
	}
}

// A 512 MiB artifact is streamed: the server allocates a small fraction
// of it to serve it.
func TestArtifactDownloadStreams(t *testing.T) {
	root := t.TempDir()
	const size = 512 << 20
	p := filepath.Join(root, "wf/pod/big.bin")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil { // sparse: zeros that take no disk
		t.Fatal(err)
	}
	f.Close()
	addr, st := startServerStore(t, Options{Artifacts: &artifact.Drivers{File: file.New(root)}})
	wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Namespace: "argo", Name: "big"}}
	wf.Spec.Entrypoint = "main"
	wf.Status.Nodes = v1alpha1.Nodes{"big": {ID: "big", Name: "big", Type: v1alpha1.NodeTypePod,
		Outputs: &v1alpha1.Outputs{Artifacts: []v1alpha1.Artifact{
			{Name: "big", ArtifactLocation: v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: "wf/pod/big.bin"}}},
		}}}}
	if err := st.Create(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := http.Get("http://" + addr + "/artifacts/argo/big/big/big")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.CopyBuffer(io.Discard, res.Body, make([]byte, 64<<10))
	res.Body.Close()
	runtime.ReadMemStats(&after)
	if err != nil || n != size {
		t.Fatalf("read %d bytes (%v), want %d", n, err, size)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("served %d MiB, allocating %.1f MiB (client and server)", size>>20, float64(alloc)/(1<<20))
	if alloc > 32<<20 {
		t.Errorf("allocated %d MiB to serve %d MiB: the artifact is buffered", alloc>>20, size>>20)
	}
}
