package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestShippedLog(t *testing.T) {
	s3repo := &v1alpha1.ArtifactRepository{S3: &v1alpha1.S3ArtifactRepository{
		S3Bucket: v1alpha1.S3Bucket{Bucket: "logs"}, KeyFormat: "{{workflow.name}}/{{pod.name}}"}}
	archived := v1alpha1.Artifact{Name: "main-logs", ArtifactLocation: v1alpha1.ArtifactLocation{
		S3: &v1alpha1.S3Artifact{S3Bucket: v1alpha1.S3Bucket{Bucket: "other"}, Key: "x/main.log"}}}
	tests := []struct {
		name    string
		repos   artifact.Repositories
		outputs *v1alpha1.Outputs
		want    string // bucket/key, "" for none
		wantErr bool
	}{
		{name: "key format of the default repository", repos: artifact.Repositories{Default: s3repo},
			want: "logs/wf/wf-main-123/main.log"},
		{name: "archived logs win", repos: artifact.Repositories{Default: s3repo},
			outputs: &v1alpha1.Outputs{Artifacts: []v1alpha1.Artifact{archived}}, want: "other/x/main.log"},
		{name: "a bad key format", repos: artifact.Repositories{Default: &v1alpha1.ArtifactRepository{
			S3: &v1alpha1.S3ArtifactRepository{S3Bucket: v1alpha1.S3Bucket{Bucket: "b"}, KeyFormat: "{{nope"}}},
			wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns", UID: "u"}}
			n := &v1alpha1.NodeStatus{ID: "wf-123", Name: "wf.main", Type: v1alpha1.NodeTypePod, Outputs: tc.outputs}
			loc, err := ShippedLog(tc.repos, wf, n, "wf-main-123")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			got := ""
			if loc != nil && loc.S3 != nil {
				got = loc.S3.Bucket + "/" + loc.S3.Key
			}
			if got != tc.want {
				t.Errorf("location %q, want %q", got, tc.want)
			}
		})
	}
}
