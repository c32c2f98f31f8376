package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Bad input artifacts: each run must end in a clean final phase with a
// message naming the artifact, its location and what is wrong; braid exits 1
// without crashing or hanging, leaves nothing behind beside the input's path,
// and its data dir lists the workflow as completed.

// badInputWorkflow has one step that takes the input artifact "bad-input"
// at dst/in under the working directory wd, with the location given as a
// YAML flow mapping (e.g. `file: {key: x}`), optional or not.
func badInputWorkflow(wd, location string, optional bool) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: badinput-}
spec:
  entrypoint: main
  templates:
  - name: main
    inputs:
      artifacts:
      - {name: bad-input, path: dst/in, optional: %t, %s}
    container:
      image: busybox
      workingDir: %q
      command: [sh, -c, "test ! -e dst/in && echo no input"]
`, optional, location, wd)
}

// badResult is what one `braid run` left: its final workflow, exit code,
// stderr and wall time.
type badResult struct {
	final  finalWorkflow
	code   int
	stderr string
	took   time.Duration
}

// runBadInput runs the workflow with the data dir home and the config file
// (none when ""), failing the test if braid runs longer than limit.
func runBadInput(t *testing.T, home, config, workflow string, limit time.Duration) badResult {
	t.Helper()
	file := filepath.Join(t.TempDir(), "wf.yaml")
	writeFile(t, file, workflow)
	args := []string{"run", "-o", "json", "--data-dir", home, file}
	if config != "" {
		args = append(args, "--config", config)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, braidBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := badResult{code: 0, stderr: stderr.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("braid run did not end within %s (hung?)\nstderr:\n%s", limit, tail(res.stderr))
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("braid run: %v", err)
	}
	if strings.Contains(res.stderr, "panic:") || strings.Contains(res.stderr, "goroutine ") {
		t.Fatalf("braid crashed:\n%s", tail(res.stderr))
	}
	res.final = parseFinal(t, stdout.String())
	return res
}

// podNode returns the workflow's one step node.
func podNode(t *testing.T, wf finalWorkflow) (phase, message string) {
	t.Helper()
	for _, n := range wf.Status.Nodes {
		if n.Type == "Pod" {
			return n.Phase, n.Message
		}
	}
	t.Fatalf("no step node in %+v", wf.Status.Nodes)
	return "", ""
}

// checkListed asserts that `braid list` on the data dir shows the workflow
// among the completed ones, in the phase it ended in.
func checkListed(t *testing.T, home string, wf finalWorkflow) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, braidBin, "list", "--data-dir", home, "--completed", "--no-headers").CombinedOutput()
	if err != nil {
		t.Fatalf("braid list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == wf.Metadata.Name {
			if f[1] != wf.Status.Phase {
				t.Fatalf("braid list shows %s as %s, the run ended %s:\n%s", f[0], f[1], wf.Status.Phase, out)
			}
			return
		}
	}
	t.Fatalf("braid list --completed does not show %s:\n%s", wf.Metadata.Name, out)
}

// checkNothingLeft asserts that the input's parent directory (wd/dst) holds
// nothing, so a refused or failed load left no scratch or stray file, and
// that each directory in empty holds nothing.
func checkNothingLeft(t *testing.T, wd string, empty ...string) {
	t.Helper()
	for _, dir := range append([]string{filepath.Join(wd, "dst")}, empty...) {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("stray %s left in %s", e.Name(), dir)
		}
	}
	entries, err := os.ReadDir(wd)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "dst" {
			t.Errorf("stray %s left in the working directory %s", e.Name(), wd)
		}
	}
}

// tarEntry is one entry of a test tarball.
type tarEntry struct {
	name, link, data string
}

func tarGz(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: tar.TypeReg}
		if e.link != "" {
			hdr = &tar.Header{Name: e.name, Mode: 0o777, Linkname: e.link, Typeflag: tar.TypeSymlink}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// goodTarGz is a valid tarball of one 256 KiB file.
func goodTarGz(t *testing.T) []byte {
	return tarGz(t, tarEntry{name: "data.txt", data: strings.Repeat("braid bad input test line\n", 10<<10)})
}

// corruptTarGz keeps the gzip header and damages the compressed stream.
func corruptTarGz(t *testing.T) []byte {
	b := goodTarGz(t)
	for i := 20; i < len(b)-20; i += 7 {
		b[i] ^= 0x5a
	}
	return b
}

// truncatedTarGz is a valid tarball cut in half.
func truncatedTarGz(t *testing.T) []byte {
	b := goodTarGz(t)
	return b[:len(b)/2]
}

// badTarball is a tarball a step must refuse or fail on, stored at key.
type badTarball struct {
	name, key string
	data      []byte
	want      string // what the message must say is wrong
}

// badTarballs are the bad tarballs; the symbolic link cases point at
// outside, a directory beside the run's.
func badTarballs(t *testing.T, outside string) []badTarball {
	return []badTarball{
		{"corrupt", "bad/corrupt.tgz", corruptTarGz(t), "not a valid tar.gz"},
		{"truncated", "bad/truncated.tgz", truncatedTarGz(t), "not a valid tar.gz"},
		{"dotdot entry", "bad/dotdot.tgz", tarGz(t,
			tarEntry{name: "ok.txt", data: "fine"},
			tarEntry{name: "../../escaped-dotdot", data: "escaped"}), "escapes"},
		{"symlink then file through it", "bad/symlink-through.tgz", tarGz(t,
			tarEntry{name: "ok.txt", data: "fine"},
			tarEntry{name: "link", link: outside},
			tarEntry{name: "link/pwned", data: "escaped"}), "symbolic link"},
		{"symlink out alone", "bad/symlink-alone.tgz", tarGz(t,
			tarEntry{name: "link", link: "../../../.."}), "link"},
	}
}

func TestBadInputFileRepository(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Run("missing key", func(t *testing.T) {
		home, wd := filepath.Join(t.TempDir(), "home"), filepath.Join(t.TempDir(), "wd")
		res := runBadInput(t, home, "", badInputWorkflow(wd, "file: {key: no/such/key.tgz}", false), 2*time.Minute)
		expectFailure(t, home, res, "Error", `"bad-input"`, "no/such/key.tgz", "not found")
		checkNothingLeft(t, wd)
	})
	for _, tb := range badTarballs(t, outside) {
		t.Run(tb.name, func(t *testing.T) {
			home, wd := filepath.Join(t.TempDir(), "home"), filepath.Join(t.TempDir(), "wd")
			repo := filepath.Join(home, "artifacts", filepath.FromSlash(tb.key))
			if err := os.MkdirAll(filepath.Dir(repo), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(repo, tb.data, 0o644); err != nil {
				t.Fatal(err)
			}
			res := runBadInput(t, home, "", badInputWorkflow(wd, fmt.Sprintf("file: {key: %s}", tb.key), false), 2*time.Minute)
			expectFailure(t, home, res, "Error", `"bad-input"`, tb.key, tb.want)
			checkNothingLeft(t, wd, outside)
			checkNoFileNamed(t, base, "escaped-dotdot", "pwned")
		})
	}
	t.Run("optional missing is skipped", func(t *testing.T) {
		home, wd := filepath.Join(t.TempDir(), "home"), filepath.Join(t.TempDir(), "wd")
		res := runBadInput(t, home, "", badInputWorkflow(wd, "file: {key: no/such/key.tgz}", true), 2*time.Minute)
		expectSuccess(t, home, res)
	})
}

func TestBadInputS3(t *testing.T) {
	srv := startMinIO(t)
	const bucket = "badinput"
	client := minioClient(t, srv.Endpoint, srv.AccessKey, srv.SecretKey)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	tarballs := badTarballs(t, outside)
	for _, tb := range tarballs {
		if _, err := client.PutObject(ctx, bucket, tb.key, bytes.NewReader(tb.data), int64(len(tb.data)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	good := s3Config(t, srv.Endpoint, bucket, srv.AccessKey, srv.SecretKey)
	unreachable := closedAddr(t)

	type s3Case struct {
		name   string
		config string
		key    string
		phase  string
		want   []string // besides the artifact's name and key
		limit  time.Duration
	}
	tests := []s3Case{
		{"missing key", good, "no/such/key.tgz", "Error", []string{bucket, "not found"}, 2 * time.Minute},
		{"wrong secret key", s3Config(t, srv.Endpoint, bucket, srv.AccessKey, "not-"+srv.SecretKey), tarballs[0].key, "Error",
			[]string{bucket, srv.Endpoint, "access denied"}, 2 * time.Minute},
		{"unreachable endpoint", s3Config(t, unreachable, bucket, srv.AccessKey, srv.SecretKey), tarballs[0].key, "Error",
			[]string{bucket, unreachable}, 30 * time.Second},
	}
	for _, tb := range tarballs {
		tests = append(tests, s3Case{tb.name, good, tb.key, "Error", []string{bucket, tb.want}, 2 * time.Minute})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, wd := filepath.Join(t.TempDir(), "home"), filepath.Join(t.TempDir(), "wd")
			res := runBadInput(t, home, tt.config, badInputWorkflow(wd, fmt.Sprintf("s3: {key: %s}", tt.key), false), tt.limit)
			expectFailure(t, home, res, tt.phase, append([]string{`"bad-input"`, tt.key}, tt.want...)...)
			if strings.Contains(res.final.Status.Message+res.stderr, srv.SecretKey) {
				t.Error("the secret key appears in braid's output")
			}
			checkNothingLeft(t, wd, outside)
			checkNoFileNamed(t, base, "escaped-dotdot", "pwned")
		})
	}
	t.Run("optional missing is skipped", func(t *testing.T) {
		home, wd := filepath.Join(t.TempDir(), "home"), filepath.Join(t.TempDir(), "wd")
		res := runBadInput(t, home, good, badInputWorkflow(wd, "s3: {key: no/such/key.tgz}", true), 2*time.Minute)
		expectSuccess(t, home, res)
	})
}

// expectFailure asserts a clean failure: exit 1, the workflow and its step
// in phase, the step's message holding each of want, and the workflow
// listed as completed.
func expectFailure(t *testing.T, home string, res badResult, phase string, want ...string) {
	t.Helper()
	t.Logf("%s in %s: %s", res.final.Status.Phase, res.took.Round(time.Millisecond), res.final.Status.Message)
	if res.code != 1 {
		t.Errorf("exit code %d, want 1\nstderr:\n%s", res.code, tail(res.stderr))
	}
	if res.final.Status.Phase != phase {
		t.Errorf("workflow phase %s, want %s: %s", res.final.Status.Phase, phase, res.final.Status.Message)
	}
	nodePhase, msg := podNode(t, res.final)
	if nodePhase != phase {
		t.Errorf("step phase %s, want %s: %s", nodePhase, phase, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("the step's message does not say %q: %s", w, msg)
		}
	}
	checkListed(t, home, res.final)
}

func expectSuccess(t *testing.T, home string, res badResult) {
	t.Helper()
	if res.code != 0 || res.final.Status.Phase != "Succeeded" {
		t.Fatalf("exit %d, phase %s: %s\nstderr:\n%s", res.code, res.final.Status.Phase, res.final.Status.Message, tail(res.stderr))
	}
	checkListed(t, home, res.final)
}

// checkNoFileNamed asserts that no file under root has one of names.
func checkNoFileNamed(t *testing.T, root string, names ...string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, n := range names {
			if d.Name() == n {
				t.Errorf("a tar entry escaped: %s exists", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func s3Config(t *testing.T, endpoint, bucket, accessKey, secretKey string) string {
	t.Helper()
	return writeConfig(t, fmt.Sprintf(`
artifactRepository:
  s3: {endpoint: %q, bucket: %q, insecure: true,
    accessKeySecret: {name: minio, key: accessKey}, secretKeySecret: {name: minio, key: secretKey}}
secrets:
  minio: {accessKey: %q, secretKey: %q}
`, endpoint, bucket, accessKey, secretKey))
}

func minioClient(t *testing.T, endpoint, accessKey, secretKey string) *minio.Client {
	t.Helper()
	c, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// closedAddr returns 127.0.0.1:port where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}
