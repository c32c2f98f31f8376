package artifact_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/s3"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// recordingSecrets answers nothing and records where it was asked.
type recordingSecrets struct {
	mu  sync.Mutex
	nss []string
}

func (r *recordingSecrets) Secret(_ context.Context, namespace, name, key string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nss = append(r.nss, namespace)
	return "", errors.New("no such secret")
}

// A driver shared by every workflow (built without a namespace) resolves a
// secret in the namespace of the workflow whose artifact it collects; one
// built for a namespace keeps it.
func TestSecretNamespace(t *testing.T) {
	if got := artifact.SecretNamespace(context.Background(), ""); got != "" {
		t.Errorf("no namespace anywhere: %q", got)
	}
	ctx := artifact.WithNamespace(context.Background(), "team-a")
	if got := artifact.SecretNamespace(ctx, ""); got != "team-a" {
		t.Errorf("from the context: %q, want team-a", got)
	}
	if got := artifact.SecretNamespace(ctx, "own"); got != "own" {
		t.Errorf("the driver's own: %q, want own", got)
	}

	sec := &recordingSecrets{}
	d := &artifact.Drivers{S3: s3.New(sec, "")}
	wf := &v1alpha1.Workflow{}
	wf.Namespace = "team-a"
	wf.Spec.ArtifactGC = &v1alpha1.WorkflowLevelArtifactGC{ArtifactGC: v1alpha1.ArtifactGC{Strategy: v1alpha1.ArtifactGCOnWorkflowCompletion}}
	ref := &apiv1.SecretKeySelector{LocalObjectReference: apiv1.LocalObjectReference{Name: "creds"}, Key: "accessKey"}
	loc := v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{Key: "k",
		S3Bucket: v1alpha1.S3Bucket{Endpoint: "127.0.0.1:1", Bucket: "b", AccessKeySecret: ref, SecretKeySecret: ref}}}
	wf.Status.Nodes = v1alpha1.Nodes{"n": {ID: "n", Name: "n", Outputs: &v1alpha1.Outputs{Artifacts: []v1alpha1.Artifact{
		{Name: "a", ArtifactLocation: loc}}}}}
	if _, err := artifact.Collect(context.Background(), wf, d, v1alpha1.ArtifactGCOnWorkflowCompletion); err == nil {
		t.Fatal("Collect without the secret: no error")
	}
	if len(sec.nss) == 0 || sec.nss[0] != "team-a" {
		t.Fatalf("secret looked up in %q, want team-a", sec.nss)
	}
}
