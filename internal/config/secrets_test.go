package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretsAndRepositories(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte(`
artifactRepository:
  s3: {endpoint: 127.0.0.1:9000, bucket: b, insecure: true, keyFormat: "x/{{workflow.name}}",
       accessKeySecret: {name: creds, key: accessKey}, secretKeySecret: {name: creds, key: secretKey}}
artifactRepositories:
  my-artifact-repository:
    my-key: {s3: {endpoint: e, bucket: other}}
secrets:
  creds: {accessKey: AK}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BRAID_SECRET_CREDS_SECRETKEY": "SK"}
	cfg, err := Load(Sources{DataDirFlag: dir, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ArtifactRepository.S3.Bucket != "b" || cfg.ArtifactRepositories["my-artifact-repository"]["my-key"].S3.Bucket != "other" {
		t.Fatalf("repositories %+v %+v", cfg.ArtifactRepository, cfg.ArtifactRepositories)
	}
	ctx := context.Background()
	for key, want := range map[string]string{"accessKey": "AK", "secretKey": "SK"} {
		got, err := cfg.Secret(ctx, "default", "creds", key)
		if err != nil || got != want {
			t.Errorf("secret creds/%s = %q, %v; want %q", key, got, err, want)
		}
	}
	_, err = cfg.Secret(ctx, "default", "my-s3-credentials", "accessKey")
	if err == nil || !strings.Contains(err.Error(), "BRAID_SECRET_MY_S3_CREDENTIALS_ACCESSKEY") {
		t.Fatalf("a missing secret: %v", err)
	}
}
