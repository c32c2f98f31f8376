package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/artifact/raw"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Collect deletes what the strategy says, per artifact or per workflow,
// marks it deleted, and leaves the rest.
func TestCollect(t *testing.T) {
	root := t.TempDir()
	for _, k := range []string{"wf/a.tgz", "wf/b.tgz", "wf/c.tgz"} {
		if err := os.MkdirAll(filepath.Join(root, "wf"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, k), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := &artifact.Drivers{File: file.New(root), Raw: raw.New()}
	loc := func(k string) v1alpha1.ArtifactLocation {
		return v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: k}}
	}
	wf := &v1alpha1.Workflow{}
	wf.Spec.ArtifactGC = &v1alpha1.WorkflowLevelArtifactGC{ArtifactGC: v1alpha1.ArtifactGC{Strategy: v1alpha1.ArtifactGCOnWorkflowCompletion}}
	wf.Status.Nodes = v1alpha1.Nodes{"n": {ID: "n", Name: "n", Outputs: &v1alpha1.Outputs{Artifacts: []v1alpha1.Artifact{
		{Name: "a", ArtifactLocation: loc("wf/a.tgz")},
		{Name: "b", ArtifactLocation: loc("wf/b.tgz"), ArtifactGC: &v1alpha1.ArtifactGC{Strategy: v1alpha1.ArtifactGCNever}},
		{Name: "c", ArtifactLocation: loc("wf/c.tgz"), ArtifactGC: &v1alpha1.ArtifactGC{Strategy: v1alpha1.ArtifactGCOnWorkflowDeletion}},
		{Name: "r", ArtifactLocation: v1alpha1.ArtifactLocation{Raw: &v1alpha1.RawArtifact{Data: "x"}}},
	}}}}
	before := wf.DeepCopy()
	got, err := artifact.Collect(context.Background(), wf, d, v1alpha1.ArtifactGCOnWorkflowCompletion)
	if err != nil || len(got.Nodes) != 1 {
		t.Fatalf("changed %v, err %v", got.Nodes, err)
	}
	if !equality.Semantic.DeepEqual(before, wf) {
		t.Fatal("Collect changed the workflow it was given: it returns values")
	}
	got.Apply(&wf.Status)
	arts := wf.Status.Nodes["n"].Outputs.Artifacts
	want := map[string]bool{"a": true, "b": false, "c": false, "r": false}
	for _, a := range arts {
		if a.Deleted != want[a.Name] {
			t.Errorf("%s deleted=%v", a.Name, a.Deleted)
		}
		if a.File != nil {
			_, err := os.Stat(filepath.Join(root, a.File.Key))
			if exists := err == nil; exists == want[a.Name] {
				t.Errorf("%s: file exists=%v", a.Name, exists)
			}
		}
	}
	if !wf.Status.ArtifactGCStatus.StrategiesProcessed[v1alpha1.ArtifactGCOnWorkflowCompletion] {
		t.Error("strategy not recorded")
	}
	got, err = artifact.Collect(context.Background(), wf, d, v1alpha1.ArtifactGCOnWorkflowDeletion)
	if err != nil {
		t.Fatal(err)
	}
	got.Apply(&wf.Status)
	if !wf.Status.Nodes["n"].Outputs.Artifacts[2].Deleted {
		t.Error("c not deleted on deletion")
	}
}
