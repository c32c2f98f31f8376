package kube_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EnvS3EndpointPod names the MinIO that pods reach (host:port on the node's
// bridge), as `hack/minio.sh up --host 10.245.0.1` prints it; the access and
// secret keys are BRAID_TEST_S3_ACCESS_KEY and BRAID_TEST_S3_SECRET_KEY.
const EnvS3EndpointPod = "BRAID_TEST_S3_ENDPOINT_POD"

// The Secret the test's artifact repositories name, in the test's namespace
// (pods read it through secretKeyRef, the controller through the API).
const minioSecret = "my-minio-cred"

// otherStore matches an artifact location of a kind other than s3.
var otherStore = regexp.MustCompile(`(?m)^\s*(?:-\s+)?(hdfs|gcs|azure|oss|artifactory|plugin):`)

// knownKubeArtifactFailures are the runnable artifact examples that the
// Kubernetes backend cannot pass yet, and why. The test fails when one of
// them passes, so that the list stays true.
var knownKubeArtifactFailures = map[string]string{
	// Debian's busybox-static nc has no -k, and its sh runs its own applets
	// before PATH, so no shim can stand in.
	"examples/variables-showcase.yaml": "its daemon runs nc -lk, which the busybox-based alpine image lacks",
}

// artifactSkip says why an example that needs an artifact repository
// cannot run on the node against its MinIO, or "".
func artifactSkip(row corpusRow, data []byte) string {
	if row.phase == "n/a" {
		return "no Workflow in the file (" + row.action + ")"
	}
	if row.action != "none" {
		return "action " + row.action + " is not done by this test"
	}
	for _, need := range strings.Split(row.needs, ",") {
		switch need {
		case "git":
			return "needs a git server"
		case "http-network":
			return "needs the internet"
		case "plugin":
			return "needs an artifact plugin"
		case "volumes/PVC":
			return "needs a PersistentVolume provisioner (the node runs no kube-controller-manager)"
		}
	}
	if m := otherStore.FindSubmatch(data); m != nil {
		return "needs " + string(m[1]) + " storage"
	}
	if strings.Contains(string(data), "endpoint:") {
		return "names its own S3 endpoint and credentials, not the default repository"
	}
	if img := missingImage(row.images); img != "" {
		return "image " + img + " is not on the node"
	}
	return ""
}

// TestKubeArtifacts runs the corpus's examples that need an artifact
// repository on the node, through braid server --backend kube, with the
// default repository (and the artifactRepositoryRef my-key) on a MinIO
// that pods reach. Examples that need another store, the internet, a PV
// provisioner or an image the node lacks are skipped with the reason.
func TestKubeArtifacts(t *testing.T) {
	endpoint := os.Getenv(EnvS3EndpointPod)
	access, secret := os.Getenv("BRAID_TEST_S3_ACCESS_KEY"), os.Getenv("BRAID_TEST_S3_SECRET_KEY")
	if endpoint == "" || access == "" || secret == "" {
		if os.Getenv("BRAID_REQUIRE_MINIO") != "" {
			t.Fatalf("%s and the MinIO keys are required: eval \"$(hack/minio.sh up --host 10.245.0.1)\"", EnvS3EndpointPod)
		}
		t.Skipf("no MinIO reachable from pods: eval \"$(hack/minio.sh up --host 10.245.0.1)\" sets %s", EnvS3EndpointPod)
	}
	dir, corpus := conformanceCorpus(t)
	only, err := regexp.Compile(os.Getenv("BRAID_KUBE_EXAMPLES")) // while debugging: a subset
	if err != nil {
		t.Fatalf("BRAID_KUBE_EXAMPLES: %v", err)
	}
	var rows []corpusRow
	skipped := 0
	for _, path := range sortedPaths(corpus) {
		row := corpus[path]
		if !strings.Contains(row.needs, "artifacts-s3") || !only.MatchString(path) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil {
			t.Fatal(err)
		}
		if why := artifactSkip(row, data); why != "" {
			skipped++
			t.Logf("skip %-55s %s", path, why)
			continue
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatal("no artifact example is runnable on the node")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// my-bucket is Argo's quick-start bucket, which data-transformations.yaml
	// lists before anything is saved to it.
	makeBuckets(t, ctx, endpoint, access, secret, "my-bucket", "my-key-bucket")
	b := newBackendConfig(t, ctx, artifactConfig(endpoint))
	if err := b.c.create(ctx, "/api/v1/namespaces/"+b.ns+"/secrets", &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: minioSecret},
		StringData: map[string]string{"accessKey": access, "secretKey": secret},
	}); err != nil {
		t.Fatalf("create secret %s: %v", minioSecret, err)
	}
	results := b.runExamples(ctx, dir, rows, 6)
	passed := 0
	for _, r := range results {
		known, isKnown := knownKubeArtifactFailures[r.row.path]
		switch {
		case r.passed() && isKnown:
			passed++
			t.Errorf("%s now passes: remove it from knownKubeArtifactFailures", r.row.path)
		case r.passed():
			passed++
			t.Logf("pass %-55s %-9s %s", r.row.path, r.got, r.took.Round(time.Millisecond))
		case isKnown:
			t.Logf("known %-54s %s (got %s: %s)", r.row.path, known, r.got, r.msg)
		default:
			t.Errorf("FAIL %-55s got %s (%s), want %s; %v", r.row.path, r.got, r.msg, r.row.phase, r.err)
		}
	}
	t.Logf("artifact examples on Kubernetes (MinIO at %s): %d passed, %d failed, %d skipped",
		endpoint, passed, len(results)-passed, skipped)
	fmt.Printf("kube-artifacts: %d passed, %d failed, %d skipped\n", passed, len(results)-passed, skipped)
}

// artifactConfig is braid's config with the default repository in the
// bucket my-bucket and the named repository artifact-repositories/my-key
// in my-key-bucket, both on the MinIO at endpoint.
func artifactConfig(endpoint string) string {
	s3 := func(bucket string) string {
		return fmt.Sprintf(`{endpoint: %q, bucket: %s, insecure: true, createBucketIfNotPresent: {},
      accessKeySecret: {name: %s, key: accessKey}, secretKeySecret: {name: %s, key: secretKey}}`,
			endpoint, bucket, minioSecret, minioSecret)
	}
	return fmt.Sprintf(`artifactRepository:
  s3: %s
artifactRepositories:
  artifact-repositories:
    my-key: {s3: %s}
`, s3("my-bucket"), s3("my-key-bucket"))
}

// makeBuckets creates the buckets on the MinIO (one that exists is kept).
func makeBuckets(t *testing.T, ctx context.Context, endpoint, access, secret string, buckets ...string) {
	t.Helper()
	c, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(access, secret, "")})
	if err != nil {
		t.Fatal(err)
	}
	for _, bucket := range buckets {
		err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{})
		if err == nil {
			continue
		}
		if exists, eerr := c.BucketExists(ctx, bucket); eerr != nil || !exists {
			t.Fatalf("make bucket %s on %s: %v", bucket, endpoint, err)
		}
	}
}

func sortedPaths(rows map[string]corpusRow) []string {
	paths := make([]string, 0, len(rows))
	for p := range rows {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}
