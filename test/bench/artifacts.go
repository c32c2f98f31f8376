package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/braidwf/braid/internal/artifact/s3/miniotest"
)

// bigArtifact is A1: one step writes a file of size bytes from /dev/urandom
// as an output artifact saved to a real MinIO, and the next step loads it
// as an input artifact and checks its size. It runs once with archive none
// and once with the default tar+gzip, and reports braid's wall time and
// peak RSS for each: both directions must stream.
type bigArtifact struct {
	size int64
}

// bigArtifactResult is one archive strategy's measurement.
type bigArtifactResult struct {
	archive string
	took    time.Duration
	peakKiB int64
}

// run starts MinIO under dir and measures each archive strategy runs times
// (median wall time, largest peak RSS).
func (w bigArtifact) run(bin, dir string, runs int) ([]bigArtifactResult, error) {
	minioBin, err := miniotest.Binary()
	if err != nil {
		return nil, fmt.Errorf("%w (run hack/minio.sh build)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	minioDir := filepath.Join(dir, "a1-minio")
	if err := os.MkdirAll(minioDir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(minioDir)
	srv, err := miniotest.Start(ctx, minioBin, minioDir)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	cfg := filepath.Join(dir, "a1-config.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`artifactRepository:
  s3: {endpoint: %q, bucket: braid-bench, insecure: true, createBucketIfNotPresent: {},
    accessKeySecret: {name: minio, key: accessKey}, secretKeySecret: {name: minio, key: secretKey}}
secrets:
  minio: {accessKey: %q, secretKey: %q}
`, srv.Endpoint, srv.AccessKey, srv.SecretKey)), 0o600); err != nil {
		return nil, err
	}
	// The strategies: the name printed, and the output's archive field ("" for the default).
	archives := []struct{ name, field string }{
		{"none", "archive: {none: {}}"},
		{"tar+gzip", ""},
	}
	var out []bigArtifactResult
	for i, a := range archives {
		wf := filepath.Join(dir, fmt.Sprintf("A1-%d.yaml", i))
		if err := os.WriteFile(wf, w.workflow(fmt.Sprintf("bench-a1-%d", i), a.field), 0o644); err != nil {
			return nil, err
		}
		res := bigArtifactResult{archive: a.name}
		var times []time.Duration
		for r := range runs {
			home := filepath.Join(dir, fmt.Sprintf("home-A1-%d-%d", i, r))
			took, rss, err := timed(exec.Command(bin, "run", "--data-dir", home, "--config", cfg, "-o", "json", wf))
			_, local := os.Stat(filepath.Join(home, "artifacts"))
			_ = os.RemoveAll(home)
			if err != nil {
				return nil, fmt.Errorf("archive %s: braid run: %w", a.name, err)
			}
			if local == nil {
				return nil, fmt.Errorf("archive %s: the artifact went to the local file repository, not MinIO", a.name)
			}
			times = append(times, took)
			res.peakKiB = max(res.peakKiB, rss)
		}
		res.took = median(times)
		out = append(out, res)
	}
	return out, nil
}

// workflow is A1's two steps; archive is the output's archive field, or ""
// for the default.
func (w bigArtifact) workflow(name, archive string) []byte {
	output := "{name: big, path: /tmp/big}"
	if archive != "" {
		output = "{name: big, path: /tmp/big, " + archive + "}"
	}
	return []byte(strings.NewReplacer("NAME", name, "SIZE", fmt.Sprint(w.size), "OUTPUT", output).Replace(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: NAME}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: write, template: write}
    - - name: check
        template: check
        arguments: {artifacts: [{name: big, from: "{{steps.write.outputs.artifacts.big}}"}]}
  - name: write
    container: {image: busybox, command: [sh, -c, "head -c SIZE /dev/urandom > /tmp/big"]}
    outputs: {artifacts: [OUTPUT]}
  - name: check
    inputs: {artifacts: [{name: big, path: /tmp/in}]}
    container: {image: busybox, command: [sh, -c, "test $(stat -c %s /tmp/in) -eq SIZE"]}
`))
}

// runA1 measures A1 and prints one line per archive strategy.
func runA1(bin, dir string, runs int, w bigArtifact) error {
	results, err := w.run(bin, dir, runs)
	if err != nil {
		return fmt.Errorf("A1: %w", err)
	}
	for _, r := range results {
		fmt.Printf("A1 (a %.2f GiB artifact written, saved to MinIO and loaded by the next step, archive %s): median %s, braid peak RSS %.1f MiB\n",
			float64(w.size)/(1<<30), r.archive, r.took.Round(time.Millisecond), float64(r.peakKiB)/1024)
	}
	return nil
}
