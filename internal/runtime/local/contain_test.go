package local

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/elastic/go-seccomp-bpf/arch"

	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The containment suite: each case runs a real step, this test binary in
// probe mode (containProbeEnv), which tries what a contained step must not
// manage and reports each attempt on a line of /tmp/report: "NAME ok" or
// "NAME ESCAPED: what it managed". TestUsernsViews runs it again as
// nobody.

// containProbeEnv, in a step's environment, makes this test binary the
// containment probe instead of the tests: "all" tries every escape, "hold"
// reports its identity and waits for /tmp/release.
const containProbeEnv = "BRAID_CONTAIN_PROBE"

func init() {
	if mode := os.Getenv(containProbeEnv); mode != "" {
		os.Exit(containProbe(mode))
	}
}

// containChecks are the lines the probe reports in mode all.
var containChecks = []string{
	"no-new-privs", "seccomp", "handle", "proc-sys", "sys-write", "sys-ro", "mount", "unshare",
	"masked", "denied-syscalls", "data-dir", "other-step", "host-uid",
}

func containProbe(mode string) int {
	var b strings.Builder
	report := func(name string, escaped string) {
		if escaped == "" {
			fmt.Fprintf(&b, "%s ok\n", name)
		} else {
			fmt.Fprintf(&b, "%s ESCAPED: %s\n", name, strings.ReplaceAll(escaped, "\n", " "))
		}
	}
	if mode == "hold" {
		return probeHold()
	}
	status := procStatus("/proc/self/status")
	report("no-new-privs", unless(status["NoNewPrivs"] == "1", "NoNewPrivs is "+status["NoNewPrivs"]))
	report("seccomp", unless(status["Seccomp"] == "2", "Seccomp is "+status["Seccomp"]))
	report("handle", probeHandle())
	// The hostname as it is: an escape must not change the host's.
	name, _ := os.ReadFile("/proc/sys/kernel/hostname")
	report("proc-sys", mustFail(os.WriteFile("/proc/sys/kernel/hostname", name, 0), "wrote /proc/sys/kernel/hostname"))
	report("sys-write", probeSysWrite())
	var fs syscall.Statfs_t
	err := syscall.Statfs("/sys", &fs)
	report("sys-ro", unless(err == nil && fs.Flags&1 != 0, fmt.Sprintf("/sys is not read-only (%v, flags %#x)", err, fs.Flags))) // ST_RDONLY
	_ = os.MkdirAll("/tmp/mnt", 0o755)
	report("mount", mustFail(syscall.Mount("tmpfs", "/tmp/mnt", "tmpfs", 0, ""), "mounted a tmpfs"))
	report("unshare", mustFail(syscall.Unshare(syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS), "unshared a user and mount namespace"))
	report("masked", probeMasked())
	report("denied-syscalls", probeDenied())
	report("data-dir", probeDataDir(os.Getenv("DATA_DIR")))
	report("other-step", probeOther(os.Getenv("OTHER_DIR")))
	uidMap, _ := os.ReadFile("/proc/self/uid_map")
	fields := strings.Fields(string(uidMap))
	report("host-uid", unless(len(fields) == 3 && fields[0] == "0" && fields[1] != "0", "uid_map is "+string(uidMap)))
	if err := os.WriteFile("/tmp/report", []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func unless(ok bool, escaped string) string {
	if ok {
		return ""
	}
	return escaped
}

func mustFail(err error, escaped string) string {
	if err != nil {
		return ""
	}
	return escaped
}

// probeHandle tries the open_by_handle_at escape: a handle of the root
// directory of the file system under its own directory, opened through
// that directory.
func probeHandle() string {
	dir, err := os.Open("/tmp")
	if err != nil {
		return "cannot open /tmp: " + err.Error()
	}
	defer dir.Close()
	// struct file_handle: handle_bytes, handle_type, then an ext4 handle
	// of inode 2 (the root), generation 0.
	var fh [8 + 8]byte
	*(*uint32)(unsafe.Pointer(&fh[0])) = 8
	*(*int32)(unsafe.Pointer(&fh[4])) = 1 // FILEID_INO32_GEN
	*(*uint32)(unsafe.Pointer(&fh[8])) = 2
	fd, _, e := syscall.Syscall(sysnum("open_by_handle_at"), dir.Fd(), uintptr(unsafe.Pointer(&fh[0])), syscall.O_RDONLY)
	if e == 0 {
		syscall.Close(int(fd))
		return "opened the file system's root by handle"
	}
	var name [8 + 128]byte
	*(*uint32)(unsafe.Pointer(&name[0])) = 128
	var mountID int32
	p, _ := syscall.BytePtrFromString("/tmp")
	_, _, e = syscall.Syscall6(sysnum("name_to_handle_at"), uintptr(atFDCWD), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&mountID)), 0, 0)
	if e == 0 {
		return "name_to_handle_at gave a handle of /tmp"
	}
	return ""
}

// probeSysWrite tries to write a file under /sys.
func probeSysWrite() string {
	for _, f := range []string{"/sys/kernel/uevent_helper", "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/fs/cgroup/cgroup.procs"} {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		if err := appendTo(f, ""); err == nil {
			return "opened " + f + " for writing"
		}
	}
	if err := os.WriteFile("/sys/braid-escaped", nil, 0o644); err == nil {
		return "created /sys/braid-escaped"
	}
	return ""
}

func appendTo(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(s)
	return errors.Join(werr, f.Close())
}

// probeMasked checks that /proc/kcore reads as empty and /sys/firmware is
// an empty directory.
func probeMasked() string {
	var st syscall.Stat_t
	if syscall.Stat("/proc/kcore", &st) == nil && st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		return "/proc/kcore is not covered"
	}
	if data, err := os.ReadFile("/proc/kcore"); err == nil && len(data) > 0 {
		return "read /proc/kcore"
	}
	if ents, err := os.ReadDir("/sys/firmware"); err == nil && len(ents) > 0 {
		return fmt.Sprintf("/sys/firmware shows %d entries", len(ents))
	}
	if ents, err := os.ReadDir("/proc/acpi"); err == nil && len(ents) > 0 {
		return fmt.Sprintf("/proc/acpi shows %d entries", len(ents))
	}
	return ""
}

// probeDenied calls system calls the filter refuses, with arguments the
// kernel would reject otherwise (EINVAL or EFAULT): each must fail EPERM.
func probeDenied() string {
	var bad []string
	for _, name := range []string{"bpf", "keyctl", "add_key", "perf_event_open", "userfaultfd", "kexec_load",
		"init_module", "fsopen", "open_tree", "setns", "quotactl", "clock_settime"} {
		nr := sysnum(name)
		if nr == 0 {
			continue
		}
		max := ^uintptr(0)
		_, _, e := syscall.Syscall6(nr, max, max, max, max, 0, 0)
		if e != syscall.EPERM {
			bad = append(bad, fmt.Sprintf("%s: %v", name, e))
		}
	}
	if len(bad) > 0 {
		return "not refused with EPERM: " + strings.Join(bad, ", ")
	}
	return ""
}

// probeDataDir tries to read the data directory's files.
func probeDataDir(dir string) string {
	if dir == "" {
		return "no DATA_DIR"
	}
	for _, f := range []string{"braid.db", "config.yaml"} {
		if _, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			return "read " + f
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "" // not even listed
	}
	for _, e := range ents {
		if e.Name() != "runs" && e.Name() != "shims" {
			return "the data directory shows " + e.Name()
		}
	}
	return ""
}

// probeOther tries to see another running step's directory and files.
func probeOther(dir string) string {
	if dir == "" {
		return ""
	}
	for _, p := range []string{dir, filepath.Join(dir, "tmp", "secret"), filepath.Join(dir, "upper", "secret"), "/tmp/secret", "/secret"} {
		if _, err := os.Stat(p); err == nil {
			return "sees " + p
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != 1 && pid != os.Getpid() {
			if cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(cmd), "secret") {
				return "sees the other step's process " + e.Name()
			}
		}
	}
	return ""
}

// probeHold reports that it runs, then waits for /tmp/release.
func probeHold() int {
	if err := os.WriteFile("/tmp/ready", nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for range 600 {
		if _, err := os.Stat("/tmp/release"); err == nil {
			return 0
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 2
}

// procStatus parses a /proc/PID/status file.
func procStatus(path string) map[string]string {
	out := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// probeStep returns a template that runs the probe in mode with env.
func probeStep(rt *harness, mode string, env map[string]string, outputs string) string {
	var e strings.Builder
	fmt.Fprintf(&e, "  - {name: %s, value: %q}\n", containProbeEnv, mode)
	for k, v := range env {
		fmt.Fprintf(&e, "  - {name: %s, value: %q}\n", k, v)
	}
	return fmt.Sprintf("name: probe\ncontainer:\n  image: busybox\n  command: [%q]\n  env:\n%s%s", rt.cfg.Braid, e.String(), outputs)
}

// runningStep returns the pid and host directory of run id once it runs.
func runningStep(t *testing.T, rt *harness, id string) (int, string) {
	t.Helper()
	var pid int
	var dir string
	testutil.Until(t, 20*time.Second, "the step runs", func() bool {
		rt.Runtime.mu.Lock()
		s := rt.runs[id]
		rt.Runtime.mu.Unlock()
		if s == nil {
			return false
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		pid, dir = s.pid, s.dir
		return pid != 0
	})
	return pid, dir
}

// A contained step fails at every escape the probe tries: reading the
// data directory's files, another running step's files, the host's root
// by handle, /proc/sys and /sys, mounting, and the refused system calls.
func TestContainEscapes(t *testing.T) {
	rt := newViewRuntime(t)
	if os.Geteuid() == 0 && len(enterCode) > 0 && rt.sandbox.enter == nil {
		t.Errorf("steps are forked: the trampoline is missing: %v", rt.sandbox.enterErr)
	}
	checkEscapes(t, rt)
}

// The same when braid is root and each step is forked into a user
// namespace of its own (where the trampoline of enter.go is missing).
func TestContainEscapesForked(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: steps start as braid-nsinit")
	}
	rt := newViewRuntime(t)
	rt.sandbox.enter = nil
	rt.sandbox.pidns = rt.sandbox.procOption // braid mounts the step's /proc itself, where the kernel lets it
	checkEscapes(t, rt)
}

func checkEscapes(t *testing.T, rt *harness) {
	t.Helper()
	for _, f := range []string{"braid.db", "config.yaml"} {
		if err := os.WriteFile(filepath.Join(rt.cfg.DataDir, f), []byte("secret"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	other := newRun(tmpl(t, `
name: other
container:
  image: busybox
  command: [sh, -c, "echo secret > /tmp/secret; echo secret > /secret; while [ ! -e /tmp/release ]; do sleep 0.05; done", secret]
`))
	if err := rt.Start(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	_, otherDir := runningStep(t, rt, other.ID)
	defer func() {
		_ = os.WriteFile(filepath.Join(otherDir, "tmp", "release"), nil, 0o644)
		waitFinal(t, rt, other.ID, 30*time.Second)
	}()
	testutil.Until(t, 20*time.Second, "the other step wrote its files", func() bool {
		_, err := os.Stat(filepath.Join(otherDir, "tmp", "secret"))
		return err == nil
	})
	got := succeeded(t, rt, probeStep(rt, "all", map[string]string{"DATA_DIR": rt.cfg.DataDir, "OTHER_DIR": otherDir},
		"outputs:\n  parameters:\n  - {name: report, valueFrom: {path: /tmp/report}}\n"))
	lines := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(got["report"]), "\n") {
		name, rest, _ := strings.Cut(line, " ")
		lines[name] = rest
	}
	for _, c := range containChecks {
		if !rt.sandbox.pidns && c == "other-step" {
			continue // without a PID namespace the step sees the host's processes
		}
		switch res, ok := lines[c]; {
		case !ok:
			t.Errorf("%s: not reported (report %q)", c, got["report"])
		case res != "ok":
			t.Errorf("%s: %s", c, res)
		}
	}
}

// From the host's side, a running step's process is not root: its uids
// are not 0 and it is in a user namespace other than the host's, so it has
// no capability in the host's.
func TestContainIdentity(t *testing.T) {
	rt := newViewRuntime(t)
	run := newRun(tmpl(t, probeStep(rt, "hold", nil, "")))
	if err := rt.Start(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	pid, dir := runningStep(t, rt, run.ID)
	testutil.Until(t, 20*time.Second, "the step is ready", func() bool {
		_, err := os.Stat(filepath.Join(dir, "tmp", "ready"))
		return err == nil
	})
	status := procStatus(fmt.Sprintf("/proc/%d/status", pid))
	for _, k := range []string{"Uid", "Gid"} {
		for _, id := range strings.Fields(status[k]) {
			if id == "0" {
				t.Errorf("the step's %s outside is %q, want no 0", k, status[k])
			}
		}
	}
	if status["NoNewPrivs"] != "1" || status["Seccomp"] != "2" {
		t.Errorf("the step's NoNewPrivs %q, Seccomp %q; want 1 and 2", status["NoNewPrivs"], status["Seccomp"])
	}
	host, err1 := os.Readlink("/proc/self/ns/user")
	step, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/user", pid))
	if err1 != nil || err2 != nil || host == step {
		t.Errorf("the step's user namespace is %q (%v), the host's %q (%v): want another", step, err2, host, err1)
	}
	if err := os.WriteFile(filepath.Join(dir, "tmp", "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if ev := final(waitFinal(t, rt, run.ID, 30*time.Second)); ev.Phase != v1alpha1.NodeSucceeded {
		t.Errorf("%s: %s", ev.Phase, ev.Message)
	}
}

// A step as the mapped root still changes what it likes in its own view:
// the host's directories (an idmapped lower layer), its working directory
// and its input artifacts; braid reads what it wrote.
func TestContainWriteAnywhere(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: the host's directories are read-only in a user namespace's view")
	}
	rt := newViewRuntime(t)
	if rt.sandbox.idmapFD < 0 {
		t.Skipf("no idmapped mounts here: %v", rt.sandbox.idmapErr)
	}
	got := succeeded(t, rt, `
name: anywhere
inputs:
  artifacts:
  - {name: in, path: /work/in.txt, raw: {data: "input"}}
container:
  image: busybox
  workingDir: /work/sub
  command: [sh, -c, "mkdir -p /mnt/out && echo hi > /mnt/out/x && echo more >> /work/in.txt && echo rel > here && echo x > /etc/braid-contain && id -u > /tmp/uid"]
outputs:
  parameters:
  - {name: x, valueFrom: {path: /mnt/out/x}}
  - {name: in, valueFrom: {path: /work/in.txt}}
  - {name: rel, valueFrom: {path: /work/sub/here}}
  - {name: uid, valueFrom: {path: /tmp/uid}}
`)
	want := map[string]string{"x": "hi", "in": "inputmore", "rel": "rel", "uid": "0"}
	for k, v := range want {
		if strings.TrimSpace(got[k]) != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, err := os.Stat("/etc/braid-contain"); err == nil {
		os.Remove("/etc/braid-contain")
		t.Error("the step wrote the host's /etc")
	}
}

// The filter refuses every system call of the brief's list that this
// architecture has.
func TestStepFilterCovers(t *testing.T) {
	f, err := newStepFilter()
	if err != nil {
		t.Skip(err)
	}
	if len(f.prog) < 10 || len(f.hex) != 16*len(f.prog) {
		t.Fatalf("a program of %d instructions, %d hex digits", len(f.prog), len(f.hex))
	}
	info, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	must := []string{"open_by_handle_at", "name_to_handle_at", "kexec_load", "kexec_file_load", "bpf", "keyctl",
		"add_key", "request_key", "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsmount",
		"fsconfig", "fspick", "mount_setattr", "init_module", "finit_module", "delete_module", "reboot", "swapon",
		"swapoff", "acct", "settimeofday", "clock_settime", "perf_event_open", "userfaultfd", "lookup_dcookie", "quotactl"}
	listed := map[string]bool{}
	for _, n := range deniedSyscalls {
		listed[n] = true
	}
	for _, n := range must {
		if _, ok := info.SyscallNames[n]; !ok {
			t.Errorf("%s is not in the seccomp library's table for %s", n, info.Name)
		}
		if !listed[n] {
			t.Errorf("%s is not denied", n)
		}
	}
}

// What the kernel refuses is named once: a warning in auto mode, an error
// naming each part in required mode.
func TestReportContainment(t *testing.T) {
	sb := &sandbox{idmapFD: -1, idsErr: errors.New("no userns here"),
		filterErr: errors.New("no seccomp here"), pidnsErr: errors.New("no pidns here")}
	var logs strings.Builder
	rt := &Runtime{log: slog.New(slog.NewTextHandler(&logs, nil))}
	err := rt.reportContainment(sb, IsolationRequired)
	if err == nil {
		t.Fatal("required mode ran with nothing of the containment")
	}
	for _, want := range []string{"no userns here", "no seccomp here", "no pidns here"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if err := rt.reportContainment(sb, IsolationAuto); err != nil {
		t.Errorf("auto mode: %v", err)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "no seccomp here") {
		t.Errorf("want one warning naming what is missing, got %q", logs.String())
	}
	full := &sandbox{idmapFD: -1, ids: &idRange{}, enter: &stepEnter{}, filter: &stepFilter{}, pidns: true}
	if err := rt.reportContainment(full, IsolationRequired); err != nil {
		t.Errorf("nothing missing, yet %v", err)
	}
}

// The trampoline's machine code is its source, assembled (where the GNU
// assembler is installed).
func TestEnterCodeIsSource(t *testing.T) {
	if goruntime.GOARCH != "amd64" {
		t.Skip("the trampoline is x86-64 code")
	}
	as, err1 := exec.LookPath("as")
	objcopy, err2 := exec.LookPath("objcopy")
	if err1 != nil || err2 != nil {
		t.Skip("no GNU as and objcopy here")
	}
	dir := t.TempDir()
	obj, bin := filepath.Join(dir, "enter.o"), filepath.Join(dir, "enter.bin")
	for _, cmd := range [][]string{{as, "-o", obj, "enter_amd64.asm"}, {objcopy, "-O", "binary", "-j", ".text", obj, bin}} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, out)
		}
	}
	got, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, enterCode) {
		t.Errorf("enter_amd64.bin (%d bytes) is not enter_amd64.asm assembled (%d bytes): reassemble it", len(enterCode), len(got))
	}
}
