package s3_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/braidwf/braid/internal/artifact"
)

func (e *env) put(t *testing.T, keys ...string) {
	t.Helper()
	for _, key := range keys {
		_, err := e.admin.PutObject(context.Background(), e.bucket, key, strings.NewReader("x"), 1, minio.PutObjectOptions{})
		if err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
}

func TestList(t *testing.T) {
	e := newEnv(t)
	e.put(t, "wf-1/pod-a/main.log", "wf-1/pod-a/out.tgz", "wf-1/pod-b/deep/er/x.txt", "wf-1/pod-b/main.log",
		"wf-1x/main.log", "wf-1.txt", "top.txt", "wf-2/marker/")
	all := []string{"top.txt", "wf-1.txt", "wf-1/pod-a/main.log", "wf-1/pod-a/out.tgz", "wf-1/pod-b/deep/er/x.txt",
		"wf-1/pod-b/main.log", "wf-1x/main.log"}
	tests := []struct {
		name, key string
		want      []string
	}{
		{"the whole bucket, without directory markers", "", all},
		{"a prefix is a directory, not a string prefix", "wf-1", all[2:6]},
		{"a trailing slash", "wf-1/", all[2:6]},
		{"an unclean key", "wf-1//pod-b/./", []string{"wf-1/pod-b/deep/er/x.txt", "wf-1/pod-b/main.log"}},
		{"a missing prefix", "no/such", []string{}},
		{"only a directory marker", "wf-2", []string{}},
		{"an object is not a directory", "top.txt", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.drv.List(context.Background(), e.art("src", tt.key))
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !equal(got, tt.want) {
				t.Errorf("List(%q) = %#v, want %#v", tt.key, got, tt.want)
			}
		})
	}
}

func TestListThroughLister(t *testing.T) {
	e := newEnv(t)
	e.put(t, "a/b.log")
	got, err := artifact.List(context.Background(), e.drv, e.art("src", "a"))
	if err != nil || !equal(got, []string{"a/b.log"}) {
		t.Fatalf("artifact.List = %v, %v", got, err)
	}
}

func TestListMissingBucket(t *testing.T) {
	e := newEnv(t)
	art := e.art("src", "")
	art.S3.Bucket = "no-such-bucket-" + randomHex(t, 4)
	_, err := e.drv.List(context.Background(), art)
	if err == nil || errors.Is(err, artifact.ErrNotFound) {
		t.Fatalf("List of a missing bucket = %v, want a bucket error", err)
	}
	for _, want := range []string{"bucket does not exist", art.S3.Bucket, e.endpoint, `"src"`, "the whole bucket"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), e.secret) {
		t.Errorf("error %q leaks a credential", err)
	}
}

func TestListWrongCredentials(t *testing.T) {
	e := newEnv(t)
	drv, art := offline(e.endpoint)
	art.S3.Bucket = e.bucket
	_, err := drv.List(context.Background(), art)
	if err == nil || !strings.Contains(err.Error(), "access denied") || strings.Contains(err.Error(), "example-secret-key") {
		t.Fatalf("List with wrong credentials = %v, want a clear access error without the secret", err)
	}
}
