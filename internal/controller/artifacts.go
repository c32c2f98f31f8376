package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// artifactPlan resolves where a launch saves its output artifacts: the
// workflow's artifactRepositoryRef (else the default repository), with the
// repository's key format applied for this pod. Without outputs it has no
// key: key-only inputs still take their bucket from the repository.
func (d *driver) artifactPlan(l engine.Launch) (*step.ArtifactPlan, error) {
	repo, err := d.c.repos.Resolve(d.wf.ExecSpec().ArtifactRepositoryRef)
	if err != nil {
		return nil, fmt.Errorf("artifact repository: %w", err)
	}
	if r := archiveLocationRepo(l.Template.ArchiveLocation); r != nil {
		repo = r
	}
	archiveLogs := wantArchiveLogs(d.wf, l.Template, repo)
	// Every pod gets a key, outputs or not: the executor ships its main log
	// there, so that the log outlives the pod.
	key, err := podKey(repo, d.wf, l.PodName, l.NodeID)
	if err != nil {
		return nil, err
	}
	return &step.ArtifactPlan{Repository: repo, Key: key, ArchiveLogs: archiveLogs}, nil
}

// podKey is the key prefix of a pod's outputs: the repository's key format
// applied for this pod.
func podKey(repo *v1alpha1.ArtifactRepository, wf *v1alpha1.Workflow, podName, nodeID string) (string, error) {
	key, err := artifact.KeyFor(repo, map[string]string{
		"workflow.name":              wf.Name,
		"workflow.namespace":         wf.Namespace,
		"workflow.uid":               string(wf.UID),
		"workflow.creationTimestamp": wf.CreationTimestamp.UTC().Format(time.RFC3339),
		"pod.name":                   podName,
		"node.id":                    nodeID,
	})
	if err != nil {
		return "", fmt.Errorf("artifact repository key: %w", err)
	}
	return key, nil
}

// ShippedLog says where the executor shipped the main log of a pod node:
// its "main-logs" output when logs are archived, else <key>/main.log in
// the workflow's repository. It returns nil when there is none to read
// (no repository; a template's own archiveLocation without archived logs
// is not followed).
func ShippedLog(repos artifact.Repositories, wf *v1alpha1.Workflow, n *v1alpha1.NodeStatus, podName string) (*v1alpha1.ArtifactLocation, error) {
	if n.Outputs != nil {
		for i := range n.Outputs.Artifacts {
			if a := &n.Outputs.Artifacts[i]; a.Name == step.LogArtifact {
				loc := a.ArtifactLocation
				return &loc, nil
			}
		}
	}
	repo, err := repos.Resolve(wf.ExecSpec().ArtifactRepositoryRef)
	if err != nil || repo == nil {
		return nil, err
	}
	key, err := podKey(repo, wf, podName, n.ID)
	if err != nil {
		return nil, err
	}
	loc := artifact.OutputLocation(repo, key, "main.log", false)
	if artifact.Kind(&loc) == "" {
		return nil, nil
	}
	return &loc, nil
}

// wantArchiveLogs applies Argo's order: the template's archiveLocation,
// then the workflow's spec.archiveLogs, then the repository's archiveLogs.
func wantArchiveLogs(wf *v1alpha1.Workflow, t *v1alpha1.Template, repo *v1alpha1.ArtifactRepository) bool {
	if t.ArchiveLocation != nil && t.ArchiveLocation.ArchiveLogs != nil {
		return *t.ArchiveLocation.ArchiveLogs
	}
	if s := wf.ExecSpec(); s.ArchiveLogs != nil {
		return *s.ArchiveLogs
	}
	return repo != nil && repo.ArchiveLogs != nil && *repo.ArchiveLogs
}

// archiveLocationRepo turns a template's archiveLocation, when it names a
// bucket or the file repository, into the repository its outputs go to; its
// key, when set, is the key format.
func archiveLocationRepo(loc *v1alpha1.ArtifactLocation) *v1alpha1.ArtifactRepository {
	switch {
	case loc == nil:
		return nil
	case loc.S3 != nil && loc.S3.Bucket != "":
		return &v1alpha1.ArtifactRepository{ArchiveLogs: loc.ArchiveLogs,
			S3: &v1alpha1.S3ArtifactRepository{S3Bucket: loc.S3.S3Bucket, KeyFormat: loc.S3.Key}}
	case loc.File != nil:
		return &v1alpha1.ArtifactRepository{ArchiveLogs: loc.ArchiveLogs,
			File: &v1alpha1.FileArtifactRepository{KeyFormat: loc.File.Key}}
	}
	return nil
}

// collectArtifacts deletes the outputs whose artifact GC strategy is
// OnWorkflowCompletion, once the workflow has completed, and writes the
// artifacts it marked deleted. Failures are logged: the workflow's phase
// does not change.
func (d *driver) collectArtifacts(ctx context.Context) {
	if d.c.artifacts == nil || !d.wf.Status.Phase.Completed() {
		return
	}
	got, err := artifact.Collect(ctx, d.wf, d.c.artifacts, v1alpha1.ArtifactGCOnWorkflowCompletion)
	if err != nil {
		d.log.Warn("artifact garbage collection", "err", err)
	}
	if len(got.Nodes) == 0 && got.Processed == "" {
		return
	}
	st := d.wf.Status
	got.MarkProcessed(&st)
	if err := d.commit(ctx, update{status: &st, nodes: got.Nodes}); err != nil {
		d.log.Warn("write artifact garbage collection", "err", err)
	}
}
