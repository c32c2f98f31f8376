package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/braidwf/braid/internal/artifact/s3/miniotest"
)

// The corpus's examples that need an artifact repository and nothing else,
// run twice: with the zero-setup file repository, and with the default
// repository on a real MinIO.
func TestConformanceArtifacts(t *testing.T) {
	dir := conformanceDir(t)
	examples, err := examplesNeeding(filepath.Join(dir, "expected.tsv"), "artifacts-s3")
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) == 0 {
		t.Fatal("no example needs artifacts-s3 alone")
	}
	t.Run("file", func(t *testing.T) {
		cfg := writeConfig(t, `
artifactRepositories:
  artifact-repositories:
    my-key: {file: {keyFormat: "my-key/{{workflow.name}}/{{pod.name}}"}}
`)
		reportArtifacts(t, "file", runAll(t, dir, examples, cfg))
	})
	t.Run("s3", func(t *testing.T) {
		srv := startMinIO(t)
		// Argo's quick-start repository is the bucket my-bucket, which
		// data-transformations.yaml lists before anything is saved to it.
		makeBucket(t, srv, "my-bucket")
		s3 := fmt.Sprintf(`{endpoint: %q, bucket: %%s, insecure: true, createBucketIfNotPresent: {},
      accessKeySecret: {name: minio, key: accessKey}, secretKeySecret: {name: minio, key: secretKey}}`, srv.Endpoint)
		cfg := writeConfig(t, fmt.Sprintf(`
artifactRepository:
  s3: %s
artifactRepositories:
  artifact-repositories:
    my-key: {s3: %s}
secrets:
  minio: {accessKey: %q, secretKey: %q}
`, fmt.Sprintf(s3, "my-bucket"), fmt.Sprintf(s3, "my-key-bucket"), srv.AccessKey, srv.SecretKey))
		reportArtifacts(t, "s3", runAll(t, dir, examples, cfg))
	})
}

// knownArtifactFailures are the artifact examples braid cannot pass yet,
// and why. The test fails when one of them passes, so that the list stays
// true.
var knownArtifactFailures = map[string]string{
	"examples/hdfs-artifact.yaml": "needs an HDFS driver, which braid does not have",
}

func reportArtifacts(t *testing.T, repo string, results []outcome) {
	t.Helper()
	passed := 0
	for _, r := range results {
		known, isKnown := knownArtifactFailures[r.path]
		switch {
		case r.reason == "" && isKnown:
			passed++
			t.Errorf("%s now passes: remove it from knownArtifactFailures", r.path)
		case r.reason == "":
			passed++
			t.Logf("pass %-55s %-9s %s", r.path, r.got, r.took.Round(time.Millisecond))
		case isKnown:
			t.Logf("known %-54s %s", r.path, known)
		default:
			t.Errorf("FAIL %-55s want %s, got %s: %s", r.path, r.phase, r.got, r.reason)
		}
	}
	fmt.Printf("conformance (artifacts, %s repository): %d passed, %d failed\n", repo, passed, len(results)-passed)
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startMinIO runs a MinIO server for the test: the one `make minio-up`
// exported, else bin/tools/minio. Without either it skips, unless
// BRAID_REQUIRE_MINIO is set.
func startMinIO(t *testing.T) *miniotest.Server {
	t.Helper()
	if ep := os.Getenv(miniotest.EnvEndpoint); ep != "" {
		return &miniotest.Server{Endpoint: ep, AccessKey: os.Getenv(miniotest.EnvAccessKey), SecretKey: os.Getenv(miniotest.EnvSecretKey)}
	}
	bin, err := miniotest.Binary()
	if err != nil {
		if os.Getenv("BRAID_REQUIRE_MINIO") != "" {
			t.Fatalf("MinIO is required: %v (run hack/minio.sh build)", err)
		}
		t.Skipf("no MinIO: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := miniotest.Start(ctx, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// makeBucket creates a bucket on the test's MinIO.
func makeBucket(t *testing.T, srv *miniotest.Server, bucket string) {
	t.Helper()
	c, err := minio.New(srv.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket %s: %v", bucket, err)
	}
}
