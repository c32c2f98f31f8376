package artifact

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func s3Repo(bucket string) v1alpha1.ArtifactRepository {
	return v1alpha1.ArtifactRepository{S3: &v1alpha1.S3ArtifactRepository{S3Bucket: v1alpha1.S3Bucket{Bucket: bucket}}}
}

func TestResolve(t *testing.T) {
	def := s3Repo("default")
	configured := Repositories{
		Default: &def,
		Named: map[string]map[string]v1alpha1.ArtifactRepository{
			"artifact-repositories": {"one": s3Repo("one"), "two": s3Repo("two")},
			"single":                {"only": s3Repo("only")},
		},
	}
	fileRepo := &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}}
	tests := []struct {
		name    string
		repos   Repositories
		ref     *v1alpha1.ArtifactRepositoryRef
		want    *v1alpha1.ArtifactRepository
		wantErr string
	}{
		{name: "nothing configured is the file repository", want: fileRepo},
		{name: "nothing configured, empty ref", ref: &v1alpha1.ArtifactRepositoryRef{}, want: fileRepo},
		{name: "nil ref is the default", repos: configured, want: &def},
		{name: "default ConfigMap without key is the default", repos: configured,
			ref: &v1alpha1.ArtifactRepositoryRef{ConfigMap: "artifact-repositories"}, want: &def},
		{name: "key in the default ConfigMap", repos: configured,
			ref: &v1alpha1.ArtifactRepositoryRef{Key: "two"}, want: ptr(s3Repo("two"))},
		{name: "named ConfigMap and key", repos: configured,
			ref: &v1alpha1.ArtifactRepositoryRef{ConfigMap: "artifact-repositories", Key: "one"}, want: ptr(s3Repo("one"))},
		{name: "the only key of a ConfigMap", repos: configured,
			ref: &v1alpha1.ArtifactRepositoryRef{ConfigMap: "single"}, want: ptr(s3Repo("only"))},
		{name: "missing ConfigMap", repos: configured, ref: &v1alpha1.ArtifactRepositoryRef{ConfigMap: "nope", Key: "k"},
			wantErr: `artifactRepositoryRef: ConfigMap "nope" is not configured (configured: artifact-repositories, single)`},
		{name: "missing key", repos: configured, ref: &v1alpha1.ArtifactRepositoryRef{ConfigMap: "single", Key: "k"},
			wantErr: `artifactRepositoryRef: ConfigMap "single" has no key "k" (keys: only)`},
		{name: "ambiguous key", repos: Repositories{Named: configured.Named},
			ref:     &v1alpha1.ArtifactRepositoryRef{ConfigMap: "artifact-repositories"},
			wantErr: `ConfigMap "artifact-repositories" has keys one, two; set artifactRepositoryRef.key`},
		{name: "no default but named repositories", repos: Repositories{Named: configured.Named},
			wantErr: `has keys one, two`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.repos.Resolve(tc.ref)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Resolve (-want +got):\n%s", d)
			}
		})
	}
	got, _ := configured.Resolve(nil)
	got.S3.Bucket = "changed"
	if def.S3.Bucket != "default" {
		t.Errorf("Resolve returned the configured repository itself, not a copy")
	}
}

func ptr[T any](v T) *T { return &v }

func TestKeyFor(t *testing.T) {
	vars := map[string]string{
		"workflow.name": "wf", "workflow.namespace": "ns", "workflow.uid": "u-1", "pod.name": "wf-123",
		"node.id": "wf-123", "workflow.creationTimestamp": "2026-03-04T05:06:07Z",
	}
	tests := []struct {
		name    string
		repo    *v1alpha1.ArtifactRepository
		want    string
		wantErr string
	}{
		{name: "default format", repo: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}}, want: "wf/wf-123"},
		{name: "s3 keyFormat", repo: &v1alpha1.ArtifactRepository{S3: &v1alpha1.S3ArtifactRepository{
			KeyFormat: "{{workflow.namespace}}/{{ workflow.uid }}/{{node.id}}"}}, want: "ns/u-1/wf-123"},
		{name: "s3 legacy keyPrefix", repo: &v1alpha1.ArtifactRepository{S3: &v1alpha1.S3ArtifactRepository{
			KeyPrefix: "prefix/"}}, want: "prefix/wf/wf-123"},
		{name: "keyFormat wins over keyPrefix", repo: &v1alpha1.ArtifactRepository{S3: &v1alpha1.S3ArtifactRepository{
			KeyPrefix: "p", KeyFormat: "k/{{pod.name}}"}}, want: "k/wf-123"},
		{name: "creation timestamp", repo: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{
			KeyFormat: "{{workflow.creationTimestamp.Y}}/{{workflow.creationTimestamp.m}}/{{workflow.creationTimestamp.d}}/" +
				"{{workflow.creationTimestamp.H}}{{workflow.creationTimestamp.M}}{{workflow.creationTimestamp.S}}/" +
				"{{workflow.creationTimestamp.RFC3339}}/{{workflow.creationTimestamp.s}}"}},
			want: "2026/03/04/050607/2026-03-04T05:06:07Z/1772600767"},
		{name: "gcs", repo: &v1alpha1.ArtifactRepository{GCS: &v1alpha1.GCSArtifactRepository{KeyFormat: "g/{{workflow.name}}"}}, want: "g/wf"},
		{name: "hdfs pathFormat", repo: &v1alpha1.ArtifactRepository{HDFS: &v1alpha1.HDFSArtifactRepository{PathFormat: "/tmp/{{workflow.name}}"}}, want: "tmp/wf"},
		{name: "azure blobNameFormat", repo: &v1alpha1.ArtifactRepository{Azure: &v1alpha1.AzureArtifactRepository{BlobNameFormat: "b/{{pod.name}}"}}, want: "b/wf-123"},
		{name: "a value cannot climb out", repo: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{KeyFormat: "../../{{workflow.name}}"}}, want: "wf"},
		{name: "unknown variable", repo: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{KeyFormat: "{{workflow.nope}}"}},
			wantErr: `artifact repository key format "{{workflow.nope}}": unknown variable {{workflow.nope}}`},
		{name: "unknown time format", repo: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{KeyFormat: "{{workflow.creationTimestamp.Q}}"}},
			wantErr: `unknown time format "Q"`},
		{name: "unclosed", repo: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{KeyFormat: "a/{{pod.name"}},
			wantErr: `unclosed {{`},
		{name: "no location", repo: &v1alpha1.ArtifactRepository{}, wantErr: "sets no location"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KeyFor(tc.repo, vars)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("KeyFor error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("KeyFor = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOutputLocation(t *testing.T) {
	secret := &apiv1.SecretKeySelector{LocalObjectReference: apiv1.LocalObjectReference{Name: "s"}, Key: "k"}
	bucket := v1alpha1.S3Bucket{Bucket: "b", Endpoint: "127.0.0.1:9000", AccessKeySecret: secret}
	tests := []struct {
		name     string
		repo     *v1alpha1.ArtifactRepository
		archived bool
		want     v1alpha1.ArtifactLocation
	}{
		{"s3 archived", &v1alpha1.ArtifactRepository{S3: &v1alpha1.S3ArtifactRepository{S3Bucket: bucket, KeyFormat: "x"}}, true,
			v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{S3Bucket: bucket, Key: "wf/pod/out.tgz"}}},
		{"file not archived", &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}}, false,
			v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: "wf/pod/out"}}},
		{"gcs", &v1alpha1.ArtifactRepository{GCS: &v1alpha1.GCSArtifactRepository{GCSBucket: v1alpha1.GCSBucket{Bucket: "g"}}}, true,
			v1alpha1.ArtifactLocation{GCS: &v1alpha1.GCSArtifact{GCSBucket: v1alpha1.GCSBucket{Bucket: "g"}, Key: "wf/pod/out.tgz"}}},
		{"oss", &v1alpha1.ArtifactRepository{OSS: &v1alpha1.OSSArtifactRepository{OSSBucket: v1alpha1.OSSBucket{Bucket: "o"}}}, false,
			v1alpha1.ArtifactLocation{OSS: &v1alpha1.OSSArtifact{OSSBucket: v1alpha1.OSSBucket{Bucket: "o"}, Key: "wf/pod/out"}}},
		{"artifactory", &v1alpha1.ArtifactRepository{Artifactory: &v1alpha1.ArtifactoryArtifactRepository{RepoURL: "http://127.0.0.1/repo/"}}, true,
			v1alpha1.ArtifactLocation{Artifactory: &v1alpha1.ArtifactoryArtifact{URL: "http://127.0.0.1/repo/wf/pod/out.tgz"}}},
		{"hdfs", &v1alpha1.ArtifactRepository{HDFS: &v1alpha1.HDFSArtifactRepository{Force: true}}, true,
			v1alpha1.ArtifactLocation{HDFS: &v1alpha1.HDFSArtifact{Path: "/wf/pod/out.tgz", Force: true}}},
		{"azure", &v1alpha1.ArtifactRepository{Azure: &v1alpha1.AzureArtifactRepository{AzureBlobContainer: v1alpha1.AzureBlobContainer{Container: "c"}}}, true,
			v1alpha1.ArtifactLocation{Azure: &v1alpha1.AzureArtifact{AzureBlobContainer: v1alpha1.AzureBlobContainer{Container: "c"}, Blob: "wf/pod/out.tgz"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := OutputLocation(tc.repo, "wf/pod", "out", tc.archived)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("OutputLocation (-want +got):\n%s", d)
			}
		})
	}
	repo := &v1alpha1.ArtifactRepository{S3: &v1alpha1.S3ArtifactRepository{S3Bucket: bucket}}
	loc := OutputLocation(repo, "k", "a", true)
	loc.S3.AccessKeySecret.Name = "changed"
	if secret.Name != "s" {
		t.Errorf("OutputLocation shares the repository's secret selector; want a copy")
	}
}

func TestDriversFor(t *testing.T) {
	var fileDrv Driver = struct{ Driver }{}
	d := &Drivers{File: fileDrv}
	if got, err := d.For(&v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: "k"}}); err != nil || got != fileDrv {
		t.Errorf("For(file) = %v, %v; want the file driver", got, err)
	}
	_, err := d.For(&v1alpha1.ArtifactLocation{GCS: &v1alpha1.GCSArtifact{}})
	if err == nil || err.Error() != `artifact location kind "gcs" is not supported` {
		t.Errorf("For(gcs) error = %v", err)
	}
	if _, err := d.For(&v1alpha1.ArtifactLocation{}); err == nil || !strings.Contains(err.Error(), "has no location") {
		t.Errorf("For(empty) error = %v", err)
	}
	if _, err := (*Drivers)(nil).For(&v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{}}); err == nil {
		t.Errorf("nil Drivers: want an error")
	}
}
