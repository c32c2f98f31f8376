package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// newViewRuntime returns a Runtime whose steps each get a root view, or
// skips the test where this process cannot mount one.
//
// When this process is not root, the steps' views are built in user
// namespaces (userns.go), by a braid-nsinit next to Config.Braid: a view
// that cannot be built then fails the test, unless the kernel refuses
// unprivileged user namespaces.
func newViewRuntime(t *testing.T, mod ...func(*Config)) *harness {
	t.Helper()
	braid := ""
	if os.Geteuid() != 0 {
		braid = usernsBraid(t)
	}
	if _, err := probeSandbox(t.TempDir(), "", braid); err != nil {
		if braid != "" && kernelAllowsUserns() {
			t.Fatalf("no view in a user namespace: %v", err)
		}
		t.Skipf("%s no root view here: %v", usernsRefused, err)
	}
	pre := func(c *Config) {
		c.Isolation = IsolationRequired
		if braid != "" {
			c.Braid = braid
		}
	}
	return newRuntime(t, append([]func(*Config){pre}, mod...)...)
}

// succeeded runs src to its end and returns its output parameters, failing
// the test unless the step succeeded.
func succeeded(t *testing.T, rt *harness, src string) map[string]string {
	t.Helper()
	run := newRun(tmpl(t, src))
	ev := final(runToEnd(t, rt, run))
	if ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("%s: %s (log %q)", ev.Phase, ev.Message, readLog(t, rt, run.ID))
	}
	return paramMap(ev.Outputs)
}

func paramMap(out *v1alpha1.Outputs) map[string]string {
	m := map[string]string{}
	if out == nil {
		return m
	}
	for _, p := range out.Parameters {
		if p.Value != nil {
			m[p.Name] = string(*p.Value)
		}
	}
	return m
}

// Two steps running side by side write different content to /tmp/out.txt,
// and each reads back its own; the host's /tmp is left alone.
func TestViewParallelTmp(t *testing.T) {
	rt := newViewRuntime(t)
	const path = "/tmp/out.txt"
	_, hostErr := os.Lstat(path)
	var ids []string
	for i := range 2 {
		run := newRun(tmpl(t, fmt.Sprintf(`
name: w
container:
  image: busybox
  command: [sh, -c, "echo step-%d > %s; sleep 0.3; cat %s"]
outputs:
  parameters:
  - {name: out, valueFrom: {path: %s}}
`, i, path, path, path)))
		if err := rt.Start(context.Background(), run); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	for i, id := range ids {
		ev := final(waitFinal(t, rt, id, 30*time.Second))
		if ev.Phase != v1alpha1.NodeSucceeded {
			t.Fatalf("step %d: %s %s", i, ev.Phase, ev.Message)
		}
		if got, want := paramMap(ev.Outputs)["out"], fmt.Sprintf("step-%d", i); got != want {
			t.Errorf("step %d read %q, want %q", i, got, want)
		}
		if log := readLog(t, rt, id); log != fmt.Sprintf("step-%d\n", i) {
			t.Errorf("step %d saw %q in its /tmp", i, log)
		}
	}
	if _, err := os.Lstat(path); errors.Is(hostErr, fs.ErrNotExist) && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the host's %s was written: %v", path, err)
	}
}

// A step that deletes a system directory deletes it in its view only.
func TestViewDeleteSystemDir(t *testing.T) {
	rt := newViewRuntime(t)
	if rt.sandbox.userns != nil {
		t.Skip("in a user namespace the host's root-owned files are nobody's: TestUsernsHostFilesKept covers it")
	}
	keep := anyFileUnder(t, "/usr/share/doc")
	succeeded(t, rt, `
name: rm
container:
  image: busybox
  command: [sh, -c, "rm -rf /usr/share/doc && test ! -e /usr/share/doc"]
`)
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the host lost %s: %v", keep, err)
	}
	// A later step sees the host's directory again.
	got := succeeded(t, rt, fmt.Sprintf(`
name: look
container:
  image: busybox
  command: [sh, -c, "test -e %s && echo yes > /tmp/seen"]
outputs:
  parameters:
  - {name: seen, valueFrom: {path: /tmp/seen}}
`, keep))
	if got["seen"] != "yes" {
		t.Errorf("the next step saw %q", got["seen"])
	}
}

// anyFileUnder returns a regular file under dir, or skips the test.
func anyFileUnder(t *testing.T, dir string) string {
	t.Helper()
	found := ""
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() && found == "" {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	if found == "" {
		t.Skipf("no file under %s on this host", dir)
	}
	return found
}

// An input artifact at a system path is in the step's view, runs there,
// and never reaches the host.
func TestViewInputArtifactAtSystemPath(t *testing.T) {
	rt := newViewRuntime(t)
	const path = "/usr/local/bin/x"
	if _, err := os.Lstat(path); err == nil {
		t.Skipf("the host has %s already", path)
	}
	got := succeeded(t, rt, `
name: in
inputs:
  artifacts:
  - name: x
    path: /usr/local/bin/x
    mode: 0755
    raw: {data: "#!/bin/sh\necho from-x\n"}
container:
  image: busybox
  command: [sh, -c, "x > /tmp/said; ls -ld /usr/local/bin | cut -c1-10 > /tmp/mode"]
outputs:
  parameters:
  - {name: said, valueFrom: {path: /tmp/said}}
  - {name: mode, valueFrom: {path: /tmp/mode}}
`)
	if got["said"] != "from-x" {
		t.Errorf("the step's x said %q", got["said"])
	}
	if info, err := os.Stat("/usr/local/bin"); err == nil {
		if want := info.Mode().String(); got["mode"] != want {
			t.Errorf("/usr/local/bin in the view is %q, on the host %q", got["mode"], want)
		}
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the host has %s: %v", path, err)
	}
}

// Without a workingDir, a step runs in "/" of its view, as in an image
// whose default working directory is "/": what it writes there is its
// output, at a relative path or at the absolute one, and not the host's.
func TestViewDefaultWorkingDir(t *testing.T) {
	rt := newViewRuntime(t)
	if _, err := os.Lstat("/result.txt"); err == nil {
		t.Skip("the host has /result.txt")
	}
	got := succeeded(t, rt, `
name: cwd
container:
  image: busybox
  command: [sh, -c, "pwd > where; echo done > result.txt; mkdir -p /mnt/out && echo part > /mnt/out/p"]
outputs:
  parameters:
  - {name: abs, valueFrom: {path: /result.txt}}
  - {name: rel, valueFrom: {path: result.txt}}
  - {name: where, valueFrom: {path: /where}}
  - {name: mnt, valueFrom: {path: /mnt/out/p}}
`)
	want := map[string]string{"abs": "done", "rel": "done", "where": "/", "mnt": "part"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, p := range []string{"/result.txt", "/where", "/mnt/out/p"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the host has %s", p)
		}
	}
}

// A workingDir the host lacks is made in the view only; the host's files
// are readable; a step sees its own directory but no other step's.
func TestViewWorkingDirAndDataDir(t *testing.T) {
	rt := newViewRuntime(t)
	succeeded(t, rt, `{name: first, container: {image: busybox, command: [sh, -c, "echo secret > /tmp/s"]}}`)
	got := succeeded(t, rt, fmt.Sprintf(`
name: wd
container:
  image: busybox
  workingDir: /braid-view-test/work
  command: [sh, -c, "pwd > /tmp/pwd; ls %s | wc -l > /tmp/runs; head -c 4 /etc/passwd > /tmp/passwd"]
outputs:
  parameters:
  - {name: pwd, valueFrom: {path: /tmp/pwd}}
  - {name: runs, valueFrom: {path: /tmp/runs}}
  - {name: passwd, valueFrom: {path: /tmp/passwd}}
`, filepath.Join(rt.runsDir, "argo", "wf")))
	if got["pwd"] != "/braid-view-test/work" {
		t.Errorf("pwd = %q", got["pwd"])
	}
	if strings.TrimSpace(got["runs"]) != "1" {
		t.Errorf("the step sees %s step directories, want only its own", got["runs"])
	}
	if got["passwd"] != "root" {
		t.Errorf("/etc/passwd begins %q in the view", got["passwd"])
	}
	if _, err := os.Lstat("/braid-view-test"); err == nil {
		t.Error("the host has the step's working directory")
	}
}

// A deadline kills a step in its view and everything it started.
func TestViewDeadline(t *testing.T) {
	rt := newViewRuntime(t)
	// One child stays in the step's process group, one leaves it (setsid):
	// the deadline ends both.
	run := newRun(tmpl(t, `{name: a, container: {image: busybox, command: [sh, -c, "sleep 60.25 & setsid sleep 60.75 & sleep 60"]}}`))
	run.ActiveDeadline = 300 * time.Millisecond
	start := time.Now()
	ev := final(runToEnd(t, rt, run))
	if ev.Phase != v1alpha1.NodeFailed || ev.Message != MsgActiveDeadline {
		t.Fatalf("final = %s %q", ev.Phase, ev.Message)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	for _, marker := range []string{"sleep\x0060.25", "sleep\x0060.75"} {
		if !rt.sandbox.pidns && strings.HasSuffix(marker, "75") {
			continue // without a PID namespace a process that left the group survives
		}
		testutil.Eventually(t, 5*time.Second, fmt.Sprintf("%q ended after the deadline", marker), func() error {
			if ps := processesWith(t, marker); len(ps) > 0 {
				return fmt.Errorf("still running: %v", ps)
			}
			return nil
		})
	}
}

// processesWith lists the host's processes whose command line holds s.
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range dirs {
		data, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(data), s) {
			out = append(out, filepath.Base(filepath.Dir(f)))
		}
	}
	return out
}

// With a PID namespace the step is PID 1 and its /proc shows only its own
// processes.
func TestViewOwnPIDNamespace(t *testing.T) {
	rt := newViewRuntime(t)
	if !rt.sandbox.pidns {
		t.Skip("this kernel cannot mount a proc for a new PID namespace")
	}
	out := succeeded(t, rt, `
name: a
container:
  image: busybox
  command: [sh, -c, "echo $$$$ > /tmp/pid; ls /proc | grep -c '^[0-9][0-9]*$$' > /tmp/n"]
outputs:
  parameters:
  - {name: pid, valueFrom: {path: /tmp/pid}}
  - {name: count, valueFrom: {path: /tmp/n}}
`)
	if out["pid"] != "1" {
		t.Errorf("the step's shell has PID %q in its namespace, want 1", out["pid"])
	}
	if n, err := strconv.Atoi(out["count"]); err != nil || n > 3 {
		t.Errorf("the step's /proc lists %q processes, want its own few", out["count"])
	}
}

// The isolation modes: an unknown one is refused; none gives no view.
func TestIsolationModes(t *testing.T) {
	if _, err := New(Config{DataDir: t.TempDir(), Isolation: "sometimes"}); err == nil || !strings.Contains(err.Error(), "unknown isolation") {
		t.Errorf("unknown mode: %v", err)
	}
	rt, err := New(Config{DataDir: t.TempDir(), Isolation: IsolationNone})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.sandbox != nil {
		t.Error("isolation none gave steps a view")
	}
	_, perr := probeSandbox(t.TempDir(), "", "")
	if zero, err := New(Config{DataDir: t.TempDir()}); err != nil || zero.sandbox != nil {
		t.Errorf("the zero Config gave steps a view (%v)", err)
	} else {
		zero.Close()
	}
	auto, err := New(Config{DataDir: t.TempDir(), Isolation: IsolationAuto})
	if err != nil {
		t.Fatalf("auto must not fail: %v", err)
	}
	defer auto.Close()
	if (auto.sandbox != nil) != (perr == nil) {
		t.Errorf("auto: view %v, probe %v", auto.sandbox != nil, perr)
	}
	req, err := New(Config{DataDir: t.TempDir(), Isolation: IsolationRequired})
	if (err == nil) != (perr == nil) {
		t.Errorf("required: %v, probe %v", err, perr)
	}
	if req != nil {
		req.Close()
	}
}

// With the data directory under /tmp and braid itself there (this test
// binary), a script and an image's command that calls braid (argosay) run
// in the view.
func TestViewDataDirUnderTmp(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "braid-datadir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rt := newViewRuntime(t, func(c *Config) { c.DataDir = dir })
	got := succeeded(t, rt, `
name: s
script:
  image: busybox
  command: [sh]
  source: "pwd > /tmp/where; echo hi > rel.txt"
outputs:
  parameters:
  - {name: where, valueFrom: {path: /tmp/where}}
  - {name: rel, valueFrom: {path: rel.txt}}
`)
	if got["where"] != "/" || got["rel"] != "hi" {
		t.Errorf("outputs %v", got)
	}
	got = succeeded(t, rt, `
name: say
container:
  image: argoproj/argosay:v2
  args: [echo, from-argosay, /tmp/said]
outputs:
  parameters:
  - {name: said, valueFrom: {path: /tmp/said}}
`)
	if got["said"] != "from-argosay" {
		t.Errorf("argosay wrote %q", got["said"])
	}
}

func TestSplitMounts(t *testing.T) {
	rw, ro := splitMounts([]string{"/", "/proc", "/sys", "/sys/fs/cgroup", "/dev", "/dev/shm", "/run", "/run/user/0",
		"/home", "/home/a/b", "/tmp/x", "/data", "/data/runs", `/mnt/with\040space`}, "/data")
	if got := strings.Join(rw, ","); got != "/dev,/proc,/sys,/run" {
		t.Errorf("rw = %s", got)
	}
	ro = append([]string(nil), ro...)
	got := map[string]bool{}
	for _, m := range ro {
		got[m] = true
	}
	if len(ro) != 2 || !got["/home"] || !got[`/mnt/with\040space`] {
		t.Errorf("ro = %v", ro)
	}
	if s := unescapeMount(`/mnt/with\040space`); s != "/mnt/with space" {
		t.Errorf("unescape = %q", s)
	}
}

// A host mount that goes away after braid listed the host's mounts (a
// container's root, a network namespace file) does not stop later steps.
func TestViewHostMountGone(t *testing.T) {
	dir, err := os.MkdirTemp("/mnt", "braid-gone-")
	if err != nil {
		t.Skipf("cannot make a mount point under /mnt: %v", err)
	}
	defer os.Remove(dir)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	rt := newViewRuntime(t)
	if !slices.Contains(rt.sandbox.ro, dir) {
		_ = syscall.Unmount(dir, 0)
		t.Fatalf("the sandbox did not list %s among %v", dir, rt.sandbox.ro)
	}
	if err := syscall.Unmount(dir, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	succeeded(t, rt, `{name: a, container: {image: busybox, command: [true]}}`)
}
