package s3_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/s3"
	"github.com/braidwf/braid/internal/artifact/s3/miniotest"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestMain(m *testing.M) { os.Exit(miniotest.Main(m)) }

const testNamespace = "argo"

// secrets is an in-memory secret store keyed "namespace/name/key".
type secrets map[string]string

func (s secrets) Secret(_ context.Context, namespace, name, key string) (string, error) {
	v, ok := s[namespace+"/"+name+"/"+key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %q", namespace, name, key)
	}
	return v, nil
}

// env is one test's MinIO: its endpoint and credentials, a fresh bucket, and a driver whose secret store
// holds the credentials as secret "minio".
type env struct {
	endpoint, access, secret, bucket string
	admin                            *minio.Client
	drv                              *s3.Driver
}

func newEnv(t *testing.T) *env {
	t.Helper()
	endpoint, access, secret := miniotest.FromEnv(t)
	admin, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(access, secret, "")})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{endpoint: endpoint, access: access, secret: secret, bucket: "t-" + randomHex(t, 6), admin: admin}
	if err := admin.MakeBucket(context.Background(), e.bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
	e.drv = s3.New(secrets{
		testNamespace + "/minio/accesskey": access,
		testNamespace + "/minio/secretkey": secret,
	}, testNamespace)
	return e
}

// art is an s3 artifact named name at key in the env's bucket, authenticated through secret "minio".
func (e *env) art(name, key string) *v1alpha1.Artifact {
	insecure := true
	return &v1alpha1.Artifact{Name: name, ArtifactLocation: v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{
		Key: key,
		S3Bucket: v1alpha1.S3Bucket{
			Endpoint: e.endpoint, Bucket: e.bucket, Insecure: &insecure,
			AccessKeySecret: selector("minio", "accesskey"),
			SecretKeySecret: selector("minio", "secretkey"),
		},
	}}}
}

func selector(name, key string) *apiv1.SecretKeySelector {
	return &apiv1.SecretKeySelector{LocalObjectReference: apiv1.LocalObjectReference{Name: name}, Key: key}
}

func (e *env) keys(t *testing.T) []string {
	t.Helper()
	var keys []string
	for obj := range e.admin.ListObjects(context.Background(), e.bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	sort.Strings(keys)
	return keys
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFileRoundTrip(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "in.txt")
	writeFile(t, src, "hello artifact\n")
	art := e.art("greeting", "wf-1/greeting.txt")

	if err := e.drv.Save(ctx, src, art); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if got, want := e.keys(t), []string{"wf-1/greeting.txt"}; !equal(got, want) {
		t.Fatalf("objects = %v, want %v", got, want)
	}
	dst := filepath.Join(dir, "sub", "out.txt")
	if err := e.drv.Load(ctx, art, dst); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := readFile(t, dst); got != "hello artifact\n" {
		t.Fatalf("loaded %q", got)
	}
	rc, err := e.drv.OpenStream(ctx, art)
	if err != nil {
		t.Fatalf("OpenStream: %v", err)
	}
	b, err := io.ReadAll(rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	if err != nil || string(b) != "hello artifact\n" {
		t.Fatalf("OpenStream read %q, %v", b, err)
	}
	if err := e.drv.Delete(ctx, art); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if got := e.keys(t); len(got) != 0 {
		t.Fatalf("after Delete objects = %v", got)
	}
	if err := e.drv.Load(ctx, art, dst+"2"); !errors.Is(err, artifact.ErrNotFound) {
		t.Fatalf("Load after Delete = %v, want ErrNotFound", err)
	}
}

func TestDirectoryRoundTrip(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "out")
	files := map[string]string{"a.txt": "A", "sub/b.txt": "B", "sub/deeper/c.bin": "C\x00C", "empty": ""}
	for name, content := range files {
		writeFile(t, filepath.Join(src, name), content)
	}
	if err := os.MkdirAll(filepath.Join(src, "nothing-inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	art := e.art("tree", "wf-2/tree")
	if err := e.drv.Save(ctx, src, art); err != nil {
		t.Fatalf("Save: %v", err)
	}
	want := []string{"wf-2/tree/a.txt", "wf-2/tree/empty", "wf-2/tree/sub/b.txt", "wf-2/tree/sub/deeper/c.bin"}
	if got := e.keys(t); !equal(got, want) {
		t.Fatalf("objects = %v, want %v", got, want)
	}
	for _, key := range []string{"wf-2/tree", "wf-2/tree/"} {
		dst := filepath.Join(t.TempDir(), "in")
		a := e.art("tree", key)
		if err := e.drv.Load(ctx, a, dst); err != nil {
			t.Fatalf("Load %s: %v", key, err)
		}
		for name, content := range files {
			if got := readFile(t, filepath.Join(dst, name)); got != content {
				t.Errorf("Load %s: %s = %q, want %q", key, name, got, content)
			}
		}
	}
	if err := e.drv.Delete(ctx, art); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if got := e.keys(t); len(got) != 0 {
		t.Fatalf("after Delete objects = %v", got)
	}
}

// A directory output never carries a file from elsewhere on the host: a
// link that leaves the directory is left out; one inside is saved with its
// file's content.
func TestSaveSymlinksInDirectory(t *testing.T) {
	e := newEnv(t)
	src := filepath.Join(t.TempDir(), "out")
	writeFile(t, filepath.Join(src, "a.txt"), "A")
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "outside")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(src, "inside")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := e.drv.Save(ctx, src, e.art("tree", "k")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "back")
	if err := e.drv.Load(ctx, e.art("tree", "k"), dst); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dst, "outside")); !os.IsNotExist(err) {
		t.Errorf("the link out of the directory was saved: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "inside")); err != nil || string(b) != "A" {
		t.Errorf("the link inside: %q, %v", b, err)
	}
}

func TestMissingKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	art := e.art("missing", "no/such/key.tgz")
	err := e.drv.Load(ctx, art, filepath.Join(t.TempDir(), "x"))
	if !errors.Is(err, artifact.ErrNotFound) {
		t.Fatalf("Load = %v, want ErrNotFound", err)
	}
	for _, want := range []string{`"missing"`, e.bucket, "no/such/key.tgz", e.endpoint} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Load error %q does not name %q", err, want)
		}
	}
	if _, err := e.drv.OpenStream(ctx, art); !errors.Is(err, artifact.ErrNotFound) {
		t.Fatalf("OpenStream = %v, want ErrNotFound", err)
	}
	if err := e.drv.Delete(ctx, art); err != nil {
		t.Fatalf("Delete of a missing key = %v, want nil", err)
	}
	other := e.art("missing", "k")
	other.S3.Bucket = "no-such-bucket-" + randomHex(t, 4)
	if err := e.drv.Delete(ctx, other); err != nil {
		t.Fatalf("Delete in a missing bucket = %v, want nil", err)
	}
	err = e.drv.Load(ctx, other, filepath.Join(t.TempDir(), "x"))
	if err == nil || errors.Is(err, artifact.ErrNotFound) || !strings.Contains(err.Error(), "bucket does not exist") {
		t.Fatalf("Load from a missing bucket = %v, want a bucket error", err)
	}
}

func TestWrongCredentials(t *testing.T) {
	e := newEnv(t)
	src := filepath.Join(t.TempDir(), "f")
	writeFile(t, src, "x")
	cases := map[string]secrets{
		"wrong secret key":   {testNamespace + "/minio/accesskey": e.access, testNamespace + "/minio/secretkey": "not-the-secret-123"},
		"unknown access key": {testNamespace + "/minio/accesskey": "nobody-here-456", testNamespace + "/minio/secretkey": e.secret},
	}
	for name, sec := range cases {
		t.Run(name, func(t *testing.T) {
			drv := s3.New(sec, testNamespace)
			art := e.art("creds", "k")
			start := time.Now()
			errs := []error{drv.Save(context.Background(), src, art), drv.Load(context.Background(), art, src+".out")}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("two failing calls took %v: an access error must not be retried", took)
			}
			for _, err := range errs {
				if err == nil {
					t.Fatal("want an error")
				}
				t.Log(err)
				msg := err.Error()
				for _, want := range []string{"access denied", e.bucket, e.endpoint, `"creds"`} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not say %q", msg, want)
					}
				}
				for _, secret := range []string{"not-the-secret-123", "nobody-here-456", e.secret} {
					if strings.Contains(msg, secret) {
						t.Errorf("error %q leaks a credential", msg)
					}
				}
				if errors.Is(err, artifact.ErrNotFound) {
					t.Errorf("error %q must not be ErrNotFound", msg)
				}
			}
		})
	}
}

// offline is an artifact at endpoint with static credentials, for tests that need no MinIO.
func offline(endpoint string) (*s3.Driver, *v1alpha1.Artifact) {
	e := &env{endpoint: endpoint, bucket: "artifacts"}
	return s3.New(secrets{
		testNamespace + "/minio/accesskey": "AKIAEXAMPLE",
		testNamespace + "/minio/secretkey": "example-secret-key",
	}, testNamespace), e.art("far", "k")
}

func TestUnreachableEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	drv, art := offline(closed)
	start := time.Now()
	err = drv.Load(context.Background(), art, filepath.Join(t.TempDir(), "x"))
	took := time.Since(start)
	t.Logf("unreachable endpoint failed after %v: %v", took, err)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the endpoint") || !strings.Contains(err.Error(), closed) {
		t.Fatalf("Load = %v, want a clear unreachable error naming %s", err, closed)
	}
	if took > 15*time.Second {
		t.Fatalf("took %v: want a bounded retry (under 15 s)", took)
	}
	if strings.Contains(err.Error(), "example-secret-key") || strings.Contains(err.Error(), "AKIAEXAMPLE") {
		t.Fatalf("error %q leaks a credential", err)
	}
}

// TestFlakyEndpointRetriesBounded: an endpoint that accepts and drops every connection is retried, but
// only a bounded number of times.
func TestFlakyEndpointRetriesBounded(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 1000)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	drv, art := offline(l.Addr().String())
	start := time.Now()
	err = drv.Save(context.Background(), writeTemp(t, "x"), art)
	took := time.Since(start)
	n := len(accepted)
	t.Logf("flaky endpoint: %d connections in %v: %v", n, took, err)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the endpoint") {
		t.Fatalf("Save = %v, want an unreachable error", err)
	}
	if n < 2 || n > 20 {
		t.Fatalf("%d connections: want a retry (more than 1) that is bounded (at most 20)", n)
	}
	if took > 15*time.Second {
		t.Fatalf("took %v, want under 15 s", took)
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, content)
	return p
}

func TestCreateBucketIfNotPresent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "f")
	writeFile(t, src, "x")
	art := e.art("new", "k")
	art.S3.Bucket = "new-" + randomHex(t, 6)
	if err := e.drv.Save(ctx, src, art); err == nil || !strings.Contains(err.Error(), "bucket does not exist") {
		t.Fatalf("Save to a missing bucket = %v, want a bucket error", err)
	}
	art.S3.CreateBucketIfNotPresent = &v1alpha1.CreateS3BucketOptions{}
	for range 2 { // the second save finds the bucket
		if err := e.drv.Save(ctx, src, art); err != nil {
			t.Fatalf("Save with createBucketIfNotPresent: %v", err)
		}
	}
	if err := e.drv.Load(ctx, art, src+".out"); err != nil || readFile(t, src+".out") != "x" {
		t.Fatalf("Load: %v", err)
	}
}

func TestLocationErrors(t *testing.T) {
	drv := s3.New(secrets{}, testNamespace)
	yes := true
	base := func() *v1alpha1.Artifact {
		return &v1alpha1.Artifact{Name: "a", ArtifactLocation: v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{
			Key: "k", S3Bucket: v1alpha1.S3Bucket{Endpoint: "127.0.0.1:1", Bucket: "b", Insecure: &yes},
		}}}
	}
	cases := []struct {
		name        string
		edit        func(a *v1alpha1.Artifact)
		want        string
		unsupported bool
	}{
		{"no s3 location", func(a *v1alpha1.Artifact) { a.S3 = nil }, "has no s3 location", false},
		{"no bucket", func(a *v1alpha1.Artifact) { a.S3.Bucket = "" }, "no bucket is set", false},
		{"no key", func(a *v1alpha1.Artifact) { a.S3.Key = "" }, "no key is set", false},
		{"bad endpoint", func(a *v1alpha1.Artifact) { a.S3.Endpoint = "http://host/path" }, "is not a host[:port]", false},
		{"half the keys", func(a *v1alpha1.Artifact) { a.S3.AccessKeySecret = selector("s", "a") }, "must be set, or neither", false},
		{"missing secret", func(a *v1alpha1.Artifact) {
			a.S3.AccessKeySecret, a.S3.SecretKeySecret = selector("s", "a"), selector("s", "b")
		}, `resolve accessKeySecret (secret "s", key "a")`, false},
		{"role", func(a *v1alpha1.Artifact) { a.S3.RoleARN = "arn:aws:iam::1:role/x" }, "roleARN is not supported", true},
		{"encryption", func(a *v1alpha1.Artifact) {
			a.S3.EncryptionOptions = &v1alpha1.S3EncryptionOptions{EnableEncryption: true}
		}, "encryptionOptions are not supported", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := base()
			tc.edit(a)
			err := drv.Load(context.Background(), a, filepath.Join(t.TempDir(), "x"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v, want %q", err, tc.want)
			}
			if errors.Is(err, artifact.ErrUnsupported) != tc.unsupported {
				t.Fatalf("errors.Is(%v, ErrUnsupported) = %v", err, !tc.unsupported)
			}
		})
	}
}

func equal(a, b []string) bool {
	return bytes.Equal([]byte(strings.Join(a, "\n")), []byte(strings.Join(b, "\n")))
}
