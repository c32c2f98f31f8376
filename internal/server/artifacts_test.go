package server

import (
	"context"
	"os"
	"path/filepath"
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
