package local

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	arthttp "github.com/braidwf/braid/internal/artifact/http"
	"github.com/braidwf/braid/internal/runtime"
	stepdata "github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// artHarness is a Runtime with a file repository and an http driver.
type artHarness struct {
	*harness
	repo string // the file repository's root
	tmp  string // "/tmp" when steps get a private /tmp; else a test directory standing in for it
}

func newArtRuntime(t *testing.T) *artHarness {
	t.Helper()
	repo := t.TempDir()
	d := &artifact.Drivers{File: file.New(repo), HTTP: arthttp.New(nil, "argo")}
	h := &artHarness{harness: newRuntime(t, func(c *Config) { c.Artifacts = d }), repo: repo, tmp: "/tmp"}
	if !canPrivateTmp() {
		h.tmp = t.TempDir()
	}
	return h
}

// run returns a run of the template (with $TMP standing for the step's
// /tmp) whose outputs go to the file repository under wf/<pod>.
func (h *artHarness) run(t *testing.T, src string, archiveLogs bool) runtime.Run {
	t.Helper()
	r := newRun(tmpl(t, strings.ReplaceAll(src, "$TMP", h.tmp)))
	r.Artifacts = &stepdata.ArtifactPlan{Repository: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}},
		Key: "wf/" + r.PodName, ArchiveLogs: archiveLogs}
	return r
}

func (h *artHarness) put(t *testing.T, key string, data []byte) {
	t.Helper()
	p := filepath.Join(h.repo, key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A step's outputs (a file in its private /tmp, a directory, one unarchived)
// are saved to the repository and reported; the next step loads them as
// inputs (tarballs unpacked) and reads them.
func TestArtifactsPassed(t *testing.T) {
	h := newArtRuntime(t)
	prod := h.run(t, `
name: produce
script:
  image: busybox
  command: [sh]
  source: |
    echo hello > $TMP/out.txt
    mkdir -p $TMP/dir/sub && echo a > $TMP/dir/a.txt && echo b > $TMP/dir/sub/b.txt
outputs:
  artifacts:
  - {name: out, path: $TMP/out.txt, globalName: g}
  - {name: dir, path: $TMP/dir}
  - {name: raw, path: $TMP/out.txt, archive: {none: {}}}
`, false)
	ev := final(runToEnd(t, h.harness, prod))
	if ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("produce: %s %s", ev.Phase, ev.Message)
	}
	key := "wf/" + prod.PodName
	want := map[string]string{"out": key + "/out.tgz", "dir": key + "/dir.tgz", "raw": key + "/raw"}
	got := map[string]string{}
	for _, a := range ev.Outputs.Artifacts {
		if a.File == nil {
			t.Fatalf("artifact %s has no file location: %+v", a.Name, a)
		}
		got[a.Name] = a.File.Key
		if _, err := os.Stat(filepath.Join(h.repo, a.File.Key)); err != nil {
			t.Errorf("artifact %s not in the repository: %v", a.Name, err)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("artifacts %v, want %v", got, want)
	}
	if ev.Outputs.Artifacts[0].GlobalName != "g" || ev.Outputs.ExitCode == nil || *ev.Outputs.ExitCode != "0" {
		t.Errorf("outputs lost a field: %+v", ev.Outputs)
	}
	if h.tmp == "/tmp" {
		if _, err := os.Stat("/tmp/out.txt"); err == nil {
			t.Log("note: the host has a /tmp/out.txt; checking it is not this step's")
			if data, _ := os.ReadFile("/tmp/out.txt"); string(data) == "hello\n" {
				t.Error("the step wrote the host's /tmp/out.txt")
			}
		}
	}

	// The next step, as the engine would start it: inputs at the locations
	// reported.
	arts := ev.Outputs.Artifacts
	cons := h.run(t, fmt.Sprintf(`
name: consume
container:
  image: busybox
  command: [sh, -c, "cat $TMP/in/out.txt $TMP/in/dir/a.txt $TMP/in/dir/sub/b.txt in/raw.txt; test ! -e $TMP/in/opt && echo no-opt"]
inputs:
  artifacts:
  - {name: out, path: $TMP/in/out.txt, file: {key: %s}}
  - {name: dir, path: $TMP/in/dir, file: {key: %s}}
  - {name: raw, path: in/raw.txt, file: {key: %s}}
  - {name: opt, path: $TMP/in/opt, optional: true, file: {key: nope.tgz}}
`, arts[0].File.Key, arts[1].File.Key, arts[2].File.Key), false)
	cons.IncludeResult = true
	evs := runToEnd(t, h.harness, cons)
	ev = final(evs)
	if ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("consume: %s %s; log %q", ev.Phase, ev.Message, readLog(t, h.harness, cons.ID))
	}
	if got := *ev.Outputs.Result; got != "hello\na\nb\nhello\nno-opt" {
		t.Errorf("consume read %q", got)
	}
	if len(evs) != 2 || evs[0].Phase != v1alpha1.NodeRunning {
		t.Errorf("events %+v, want Running then the final one", evs)
	}
}

// evilTarGz is a tar.gz whose only entry climbs out of the destination.
func evilTarGz(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "../../escaped", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1}); err != nil {
		t.Fatal(err)
	}
	_, _ = tw.Write([]byte("x"))
	_ = tw.Close()
	_ = gz.Close()
	return buf.Bytes()
}

// Bad inputs and outputs end the step with a clear message.
func TestArtifactFailures(t *testing.T) {
	h := newArtRuntime(t)
	var good bytes.Buffer
	src := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(src, bytes.Repeat([]byte("0123456789abcdef"), 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := artifact.Pack(src, nil, &good); err != nil {
		t.Fatal(err)
	}
	h.put(t, "bad/truncated.tgz", good.Bytes()[:good.Len()/2])
	h.put(t, "bad/evil.tgz", evilTarGz(t))

	cases := []struct {
		name    string
		tmpl    string
		phase   v1alpha1.NodePhase
		message string // "~" prefix: contains
		started bool   // the process ran
		saved   []string
	}{{
		name: "a missing required input",
		tmpl: `{name: a, container: {image: busybox, command: ["true"]},
		  inputs: {artifacts: [{name: x, path: $TMP/x, file: {key: nope/x.tgz}}]}}`,
		phase: v1alpha1.NodeError, message: `input artifact "x" (file nope/x.tgz): not found`,
	}, {
		name: "a truncated tarball",
		tmpl: `{name: a, container: {image: busybox, command: ["true"]},
		  inputs: {artifacts: [{name: t, path: $TMP/t, file: {key: bad/truncated.tgz}}]}}`,
		phase: v1alpha1.NodeError, message: `input artifact "t" (file bad/truncated.tgz): the artifact is not a valid tar.gz: unexpected EOF`,
	}, {
		name: "a tar entry escaping with ..",
		tmpl: `{name: a, container: {image: busybox, command: ["true"]},
		  inputs: {artifacts: [{name: e, path: $TMP/e/f, file: {key: bad/evil.tgz}}]}}`,
		phase: v1alpha1.NodeError, message: `input artifact "e" (file bad/evil.tgz): tar entry "../../escaped" escapes the destination`,
	}, {
		name: "a missing required output",
		tmpl: `{name: a, container: {image: busybox, command: ["true"]},
		  outputs: {artifacts: [{name: o, path: $TMP/nope}, {name: opt, path: $TMP/nope2, optional: true}]}}`,
		phase: v1alpha1.NodeError, message: `output artifact "o": stat $TMP/nope: no such file or directory`, started: true,
	}, {
		name: "a failed step keeps its failure, adds the save error, and saves what it can",
		tmpl: `{name: a, container: {image: busybox, command: [sh, -c, "echo partial > $TMP/p.txt; exit 3"]},
		  outputs: {artifacts: [{name: p, path: $TMP/p.txt}, {name: o, path: $TMP/nope}]}}`,
		phase: v1alpha1.NodeFailed, message: `main: Error (exit code 3); output artifact "o": stat $TMP/nope: no such file or directory`,
		started: true, saved: []string{"p.tgz"},
	}, {
		name: "an s3 location without an endpoint is a bucket folder of the file repository",
		tmpl: `{name: a, container: {image: busybox, command: [sh, -c, "echo x > $TMP/o"]},
		  outputs: {artifacts: [{name: o, path: $TMP/o, s3: {bucket: b, key: k}}]}}`,
		phase: v1alpha1.NodeSucceeded, started: true, saved: []string{"k"},
	}, {
		name: "an output location the repository cannot take",
		tmpl: `{name: a, container: {image: busybox, command: [sh, -c, "echo x > $TMP/o"]},
		  outputs: {artifacts: [{name: o, path: $TMP/o, gcs: {bucket: b, key: k}}]}}`,
		phase: v1alpha1.NodeError, message: `output artifact "o" (gcs b/k): artifact location kind "gcs" is not supported`, started: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := h.run(t, tc.tmpl, false)
			evs := runToEnd(t, h.harness, run)
			ev := final(evs)
			if ev.Phase != tc.phase {
				t.Fatalf("phase %s, want %s (%s)", ev.Phase, tc.phase, ev.Message)
			}
			checkText(t, "message", ev.Message, strings.ReplaceAll(tc.message, "$TMP", h.tmp))
			if started := evs[0].Phase == v1alpha1.NodeRunning; started != tc.started {
				t.Errorf("process started = %v, want %v (%+v)", started, tc.started, evs)
			}
			var saved []string
			if ev.Outputs != nil {
				for _, a := range ev.Outputs.Artifacts {
					saved = append(saved, filepath.Base(a.File.Key))
				}
			}
			if fmt.Sprint(saved) != fmt.Sprint(tc.saved) {
				t.Errorf("saved %v, want %v", saved, tc.saved)
			}
		})
	}
	// Nothing escaped the destination.
	for _, p := range []string{filepath.Join(h.tmp, "escaped"), filepath.Join(h.tmp, "e", "escaped")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

// The main log is saved as "main-logs" with archiveLogs.
func TestArchiveLogs(t *testing.T) {
	h := newArtRuntime(t)
	run := h.run(t, `{name: a, container: {image: busybox, command: [sh, -c, "echo hello log; echo err >&2"]}}`, true)
	ev := final(runToEnd(t, h.harness, run))
	if ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("%s %s", ev.Phase, ev.Message)
	}
	if len(ev.Outputs.Artifacts) != 1 || ev.Outputs.Artifacts[0].Name != "main-logs" ||
		ev.Outputs.Artifacts[0].File.Key != "wf/"+run.PodName+"/main.log" {
		t.Fatalf("artifacts %+v", ev.Outputs.Artifacts)
	}
	data, err := os.ReadFile(filepath.Join(h.repo, "wf", run.PodName, "main.log"))
	if err != nil || string(data) != "hello log\nerr\n" {
		t.Errorf("saved log %q %v", data, err)
	}
}

// hangingServer answers nothing until the request is cancelled; it counts
// the requests it gets.
func hangingServer(t *testing.T) (*httptest.Server, chan struct{}) {
	t.Helper()
	got := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// Loading inputs does not block Start nor other steps; Kill during the load
// stops it and the step never starts; the step's deadline covers the load.
func TestInputLoadingInBackground(t *testing.T) {
	h := newArtRuntime(t)
	srv, got := hangingServer(t)
	src := fmt.Sprintf(`{name: a, container: {image: busybox, command: ["true"]},
	  inputs: {artifacts: [{name: slow, path: $TMP/slow, http: {url: "%s/slow.tgz"}}]}}`, srv.URL)

	slow := h.run(t, src, false)
	begin := time.Now()
	if err := h.Start(context.Background(), slow); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 500*time.Millisecond {
		t.Errorf("Start took %v while loading", d)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the input was never requested")
	}
	if st, _, _ := h.Status(context.Background(), slow.ID); st.Phase != v1alpha1.NodePending {
		t.Errorf("status while loading = %s, want Pending", st.Phase)
	}
	// Another step runs meanwhile.
	quick := final(runToEnd(t, h.harness, h.run(t, `{name: q, container: {image: busybox, command: ["true"]}}`, false)))
	if quick.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("quick step: %s %s", quick.Phase, quick.Message)
	}
	if err := h.Kill(context.Background(), slow.ID); err != nil {
		t.Fatal(err)
	}
	evs := waitFinal(t, h.harness, slow.ID, 5*time.Second)
	if ev := final(evs); len(evs) != 1 || ev.Phase != v1alpha1.NodeFailed || ev.Message != MsgKilled {
		t.Fatalf("killed while loading: %+v", evs)
	}

	dl := h.run(t, src, false)
	dl.ActiveDeadline = 300 * time.Millisecond
	begin = time.Now()
	evs = runToEnd(t, h.harness, dl)
	if ev := final(evs); len(evs) != 1 || ev.Phase != v1alpha1.NodeFailed || ev.Message != MsgActiveDeadline {
		t.Fatalf("deadline while loading: %+v", evs)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("the deadline ended the load after %v", d)
	}
}

// Close stops steps that are loading their inputs.
func TestCloseWhileLoading(t *testing.T) {
	repo := t.TempDir()
	srv, got := hangingServer(t)
	rt, err := New(Config{DataDir: t.TempDir(), KillGrace: 300 * time.Millisecond, Isolation: IsolationNone,
		Artifacts: &artifact.Drivers{File: file.New(repo), HTTP: arthttp.New(nil, "argo")}})
	if err != nil {
		t.Fatal(err)
	}
	run := newRun(tmpl(t, fmt.Sprintf(`{name: a, container: {image: busybox, command: ["true"]},
	  inputs: {artifacts: [{name: slow, path: /var/tmp/never, http: {url: "%s/x"}}]}}`, srv.URL)))
	if err := rt.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	<-got
	done := make(chan struct{})
	go func() { _ = rt.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for the load")
	}
	ev, ok, err := rt.Status(context.Background(), run.ID)
	if err != nil || !ok || ev.Phase != v1alpha1.NodeFailed || ev.Message != MsgClosed {
		t.Fatalf("status after Close: %+v %v %v", ev, ok, err)
	}
}

// bigSize is the output TestArtifactMemory moves: 256 MiB.
const bigSize = 256 << 20

// TestArtifactMemory saves a 256 MiB output through the file repository and
// loads it as the next step's input, in a process of its own, and checks
// that the process's peak RSS grows by less than 50 MB.
func TestArtifactMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 256 MiB")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, "artifact-rss-probe", t.TempDir()).CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	var before, after int64
	var saveTime, loadTime time.Duration
	if _, err := fmt.Sscanf(string(out), "%d %d %d %d", &before, &after, &saveTime, &loadTime); err != nil {
		t.Fatalf("probe output %q: %v", out, err)
	}
	t.Logf("VmHWM before %d MiB, after %d MiB (growth %d MiB); produce+save %v, load+consume %v",
		before>>20, after>>20, (after-before)>>20, saveTime, loadTime)
	if !raceEnabled && after-before > 50<<20 {
		t.Errorf("peak RSS grew from %d to %d bytes", before, after)
	}
}

// artifactRSSProbe is TestArtifactMemory's subprocess: args[0] is a
// directory for the data and the repository. It prints VmHWM before and
// after, and the two steps' durations in nanoseconds.
func artifactRSSProbe(args []string) int {
	fail := func(v ...any) int { fmt.Println(v...); return 1 }
	rt, err := New(Config{DataDir: filepath.Join(args[0], "data"), Isolation: IsolationNone,
		Artifacts: &artifact.Drivers{File: file.New(filepath.Join(args[0], "repo"))}})
	if err != nil {
		return fail(err)
	}
	defer rt.Close()
	before, err := vmHWM()
	if err != nil {
		return fail(err)
	}
	plan := &stepdata.ArtifactPlan{Repository: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}}, Key: "wf/big"}
	step := func(tp *v1alpha1.Template) (runtime.StepEvent, time.Duration) {
		run := newRun(tp)
		run.Artifacts, run.IncludeResult = plan, true
		begin := time.Now()
		if err := rt.Start(context.Background(), run); err != nil {
			return runtime.StepEvent{Result: stepdata.Result{Message: err.Error()}}, 0
		}
		for ev := range rt.Events() {
			if ev.RunID == run.ID && ev.Phase != v1alpha1.NodeRunning {
				return ev, time.Since(begin)
			}
		}
		return runtime.StepEvent{Result: stepdata.Result{Message: "closed"}}, 0
	}
	level := int32(1)
	prod := &v1alpha1.Template{Name: "produce",
		Container: &apiv1.Container{Image: "busybox", Command: []string{"sh", "-c", fmt.Sprintf("head -c %d /dev/urandom > /var/tmp/big-$$ && mv /var/tmp/big-$$ %s/big", bigSize, args[0])}},
		Outputs: v1alpha1.Outputs{Artifacts: []v1alpha1.Artifact{{Name: "big", Path: filepath.Join(args[0], "big"),
			Archive: &v1alpha1.ArchiveStrategy{Tar: &v1alpha1.TarStrategy{CompressionLevel: &level}}}}}}
	ev, saveTime := step(prod)
	if ev.Phase != v1alpha1.NodeSucceeded || len(ev.Outputs.Artifacts) != 1 {
		return fail("produce:", ev.Phase, ev.Message)
	}
	in := ev.Outputs.Artifacts[0]
	in.Path = filepath.Join(args[0], "in", "big")
	cons := &v1alpha1.Template{Name: "consume",
		Container: &apiv1.Container{Image: "busybox", Command: []string{"sh", "-c", "wc -c < " + in.Path + " && cmp " + in.Path + " " + filepath.Join(args[0], "big") + " && echo same"}},
		Inputs:    v1alpha1.Inputs{Artifacts: []v1alpha1.Artifact{in}}}
	ev, loadTime := step(cons)
	if ev.Phase != v1alpha1.NodeSucceeded {
		return fail("consume:", ev.Phase, ev.Message)
	}
	if got := strings.Fields(*ev.Outputs.Result); len(got) != 2 || got[0] != fmt.Sprint(bigSize) || got[1] != "same" {
		return fail("consume read", got)
	}
	after, err := vmHWM()
	if err != nil {
		return fail(err)
	}
	fmt.Println(before, after, int64(saveTime), int64(loadTime))
	return 0
}
