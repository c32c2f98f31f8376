package local

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/braidwf/braid/internal/runtime"
)

// usernsEnv, in the environment of a test process that is not root, names
// the braid executable (a copy of the test binary) with braid-nsinit next
// to it: TestUsernsViews set it up.
const usernsEnv = "BRAID_TEST_USERNS_BRAID"

// usernsRefused marks a view test skipped because the kernel refuses user
// namespaces to this user.
const usernsRefused = "USERNS-REFUSED:"

// nobody is the user the view tests run as when the tests run as root.
const nobody = 65534

// The view tests that run again as a user that is not root, each step in a
// user namespace: every one must pass there.
var usernsTests = []string{
	"TestViewParallelTmp", "TestViewInputArtifactAtSystemPath", "TestViewOwnPIDNamespace",
	"TestViewDefaultWorkingDir", "TestViewWorkingDirAndDataDir", "TestViewDeadline",
	"TestViewDataDirUnderTmp", "TestUsernsHostFilesKept", "TestUsernsInit", "TestUsernsMissingCommand",
	"TestUsernsLimitsIgnored", "TestImageRoot", "TestImageOutputFromLowerLayer", "TestImageBroken",
	"TestViewStepEnvNotInherited", "TestContainEscapes", "TestContainIdentity",
}

// TestUsernsViews runs the view tests as nobody (uid and gid 65534), so that
// braid is not root and each step's view is built in a user namespace: it
// builds braid-nsinit, copies this test binary next to it, and runs the
// copy as nobody on a data directory nobody owns. Skipped only when the
// kernel refuses unprivileged user namespaces.
func TestUsernsViews(t *testing.T) {
	if os.Getenv(usernsEnv) != "" {
		t.Skip("the run as nobody itself")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: the view tests ran as this user already")
	}
	base, err := os.MkdirTemp("/var/tmp", "braid-userns-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	braid := filepath.Join(base, "braid")
	buildNSInit(t, base)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := copyExecutable(self, braid); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{base, tmp} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(braid, "-test.run", "^("+strings.Join(usernsTests, "|")+")$", "-test.v", "-test.count=1")
	cmd.Dir = base
	cmd.Env = append(withoutEnv(os.Environ(), "TMPDIR", "HOME"), "TMPDIR="+tmp, "HOME="+base, usernsEnv+"="+braid)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if i := strings.Index(string(out), usernsRefused); i >= 0 {
		t.Skipf("the kernel refuses user namespaces to nobody: %s", firstLine(string(out[i:])))
	}
	if err != nil {
		t.Fatalf("the view tests as nobody: %v\n%s", err, out)
	}
	for _, name := range usernsTests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as nobody", name)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("output:\n%s", out)
	}
}

// buildNSInit builds braid-nsinit into dir.
func buildNSInit(t *testing.T, dir string) {
	t.Helper()
	goBin := filepath.Join(goruntime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command to build %s: %v", nsinitName, err)
		}
	}
	cmd := exec.Command(goBin, "build", "-o", filepath.Join(dir, nsinitName), "github.com/braidwf/braid/internal/runtime/local/nsinit")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", nsinitName, err, out)
	}
}

var usernsBraidOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "braid-nsinit-") // under the TMPDIR that runTests removes
	if err != nil {
		return "", err
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	braid := filepath.Join(dir, "braid")
	return braid, os.Symlink(self, braid)
})

// usernsBraid returns the braid executable to configure when this process
// is not root: the one TestUsernsViews prepared, or a link to this test
// binary in a directory where braid-nsinit is built.
func usernsBraid(t *testing.T) string {
	t.Helper()
	if b := os.Getenv(usernsEnv); b != "" {
		return b
	}
	braid, err := usernsBraidOnce()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(braid), nsinitName)); err != nil {
		buildNSInit(t, filepath.Dir(braid))
	}
	return braid
}

// kernelAllowsUserns reports whether this process may start a process in a
// user namespace of its own.
func kernelAllowsUserns() bool {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	return cmd.Run() == nil
}

// A step in a user namespace cannot change the host's files: neither the
// root-owned ones (nobody's in the view) nor braid's user's own (root's in
// the view), which a step without isolation deletes.
func TestUsernsHostFilesKept(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root: TestViewDeleteSystemDir covers the root view")
	}
	rt := newViewRuntime(t)
	keep := anyFileUnder(t, "/usr/share/doc")
	mine := filepath.Join(t.TempDir(), "mine")
	if err := os.MkdirAll(filepath.Join(mine, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "a", "f"), []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := newRun(tmpl(t, fmt.Sprintf(`
name: rm
container:
  image: busybox
  command: [sh, -c, "echo changed > %s/a/f; rm -rf /usr/share/doc %s; id -u > /tmp/uid"]
outputs:
  parameters:
  - {name: uid, valueFrom: {path: /tmp/uid}}
`, mine, mine)))
	ev := final(runToEnd(t, rt, run))
	if got := paramMap(ev.Outputs)["uid"]; got != "0" {
		t.Errorf("the step ran as uid %q, want 0 (%s: %s)", got, ev.Phase, ev.Message)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the host lost %s: %v", keep, err)
	}
	if data, err := os.ReadFile(filepath.Join(mine, "a", "f")); err != nil || string(data) != "host" {
		t.Errorf("the host's %s/a/f is %q (%v), want it unchanged", mine, data, err)
	}
}

// A step is the init of its PID namespace: its /proc/1 is its own process,
// not the host's init, and it runs as root there.
func TestUsernsInit(t *testing.T) {
	rt := newViewRuntime(t)
	if !rt.sandbox.pidns {
		t.Skip("this kernel cannot mount a proc for a new PID namespace")
	}
	host, err := os.ReadFile("/proc/1/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	got := succeeded(t, rt, `
name: init
container:
  image: busybox
  command: [sh, -c, "tr '\\0' ' ' < /proc/1/cmdline > /tmp/init; echo $$$$ > /tmp/pid; id -u > /tmp/uid", braid-init-marker]
outputs:
  parameters:
  - {name: init, valueFrom: {path: /tmp/init}}
  - {name: pid, valueFrom: {path: /tmp/pid}}
  - {name: uid, valueFrom: {path: /tmp/uid}}
`)
	if !strings.Contains(got["init"], "braid-init-marker") {
		t.Errorf("/proc/1/cmdline in the step is %q, want the step's own", got["init"])
	}
	if strings.TrimSpace(got["init"]) == strings.TrimSpace(strings.ReplaceAll(string(host), "\x00", " ")) {
		t.Errorf("the step sees the host's init %q", got["init"])
	}
	if got["pid"] != "1" || got["uid"] != "0" {
		t.Errorf("the step is PID %q, uid %q; want 1 and 0", got["pid"], got["uid"])
	}
}

// The layout of the host's root: a directory holding a mount point is a
// skeleton down to it; the others are overlays; links are copied.
func TestHostLayout(t *testing.T) {
	mounts, err := hostMounts()
	if err != nil {
		t.Fatal(err)
	}
	layout := hostLayout(mounts)
	kinds := map[string]entryKind{}
	for _, e := range layout {
		kinds[e.path] = e.kind
	}
	if k, ok := kinds["/proc"]; !ok || k != entryStopDir {
		t.Errorf("/proc is %v (%v), want a mount point", k, ok)
	}
	if k := kinds["/tmp"]; k != entryStopDir {
		t.Errorf("/tmp is %v, want covered", k)
	}
	isMount := map[string]bool{}
	for _, m := range mounts {
		isMount[filepath.Clean(m)] = true
	}
	for _, m := range mounts {
		for p := filepath.Dir(m); p != "/"; p = filepath.Dir(p) {
			if k, ok := kinds[p]; ok && k != entrySkeleton && !isMount[p] && !under(p, "/tmp") {
				t.Errorf("%s holds the mount point %s: %v, want a skeleton", p, m, k)
			}
		}
	}
	t.Logf("%d entries", len(layout))
	if k, ok := kinds["/usr"]; ok && k != entryDir && !isMount["/usr"] {
		t.Errorf("/usr is %v, want a directory of its own", k)
	}
	if info, err := os.Lstat("/bin"); err == nil && info.Mode()&fs.ModeSymlink != 0 && kinds["/bin"] != entryLink {
		t.Errorf("/bin is a link on the host, %v in the layout", kinds["/bin"])
	}
}

// A step whose command is missing ends Error, as without a user namespace.
func TestUsernsMissingCommand(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root: the root view starts steps itself")
	}
	rt := newViewRuntime(t)
	ev := final(runToEnd(t, rt, newRun(tmpl(t, `{name: a, container: {image: busybox, command: [/no/such/cmd]}}`))))
	if ev.Phase != "Error" || !strings.Contains(ev.Message, "no such file") {
		t.Errorf("final = %s %q", ev.Phase, ev.Message)
	}
}

// Without root there are no cgroups: a step with limits runs without them.
func TestUsernsLimitsIgnored(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root: cgroup_test.go covers the limits")
	}
	rt := newViewRuntime(t)
	if rt.cgroups != nil {
		t.Skip("cgroups are delegated to this user")
	}
	succeeded(t, rt, `
name: limited
container:
  image: busybox
  command: [true]
  resources:
    limits: {memory: 64Mi, cpu: 100m}
`)
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && name != n
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

var _ runtime.Runtime = (*Runtime)(nil)
