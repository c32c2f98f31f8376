package local

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/elastic/go-seccomp-bpf/arch"
)

// Containment of a step when braid is root. The thread that builds the
// step's view (sandbox.go) mounts as root in the host's user namespace,
// then starts the step in a user namespace whose ids 0-65535 are an
// unprivileged range of the host's (stepIDRange): the one all steps share,
// through the trampoline of enter.go, or else one of the step's own
// (intoUserns). Root in a step is nobody outside, with no capability in
// the host's namespace. The view's mount namespace and PID namespace stay
// the host's user namespace's, so the step can neither mount nor unmount
// anything in them.
//
// The overlay's lower layer (the host's root, or an image's) is an
// idmapped mount that shifts its owners into that range, where the kernel
// allows it: the step sees the files as an image's, root's, and what it
// changes is copied up into its upper layer, owned by its ids on disk.
// What braid staged in the upper layer and the private /tmp (the working
// directory, input artifacts) is shifted likewise before the fork
// (shiftStaged). Without idmapped mounts the host's files are nobody's in
// the step: it reads them but cannot change them.
//
// /proc and /sys are masked as OCI runtimes mask them (maskUnder), and
// /sys is read-only.

// The ids steps run as when /etc/subuid and /etc/subgid give braid none: a
// high range that no distribution hands out (the last 65536 ids below 2^31
// minus 65536).
const (
	defaultStepIDBase = 2147352576
	stepIDCount       = 65536
	subIDUser         = "braid" // the user whose /etc/subuid and /etc/subgid entries are the steps' ids
)

// idRange is where the ids 0..size-1 of every step's user namespace are on
// the host.
type idRange struct {
	uid, gid, size int
}

// stepIDRange returns braid's entries of /etc/subuid and /etc/subgid (at
// most 65536 ids of each), or the default range.
func stepIDRange() idRange {
	r := idRange{uid: defaultStepIDBase, gid: defaultStepIDBase, size: stepIDCount}
	uid, un, uok := subIDs("/etc/subuid")
	gid, gn, gok := subIDs("/etc/subgid")
	if uok && gok {
		r = idRange{uid: uid, gid: gid, size: min(un, gn, stepIDCount)}
	}
	return r
}

// subIDs returns the first range of braid's in file (user:start:count).
func subIDs(file string) (start, count int, ok bool) {
	f, err := os.Open(file)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(parts) != 3 || parts[0] != subIDUser {
			continue
		}
		s, err1 := strconv.Atoi(parts[1])
		n, err2 := strconv.Atoi(parts[2])
		if err1 == nil && err2 == nil && s > 0 && n > 0 {
			return s, n, true
		}
	}
	return 0, 0, false
}

func (r idRange) uidMap() []syscall.SysProcIDMap {
	return []syscall.SysProcIDMap{{ContainerID: 0, HostID: r.uid, Size: r.size}}
}

func (r idRange) gidMap() []syscall.SysProcIDMap {
	return []syscall.SysProcIDMap{{ContainerID: 0, HostID: r.gid, Size: r.size}}
}

// intoUserns makes attr start the process as root of a new user namespace
// mapped to r, with no supplementary groups (braid's would stay the host's
// root group), chrooted into the forking thread's working directory (the
// view: a path from the host's root would need search permission on the
// data directory, which the step's ids do not have).
func (r idRange) intoUserns(sys *syscall.SysProcAttr) {
	sys.Cloneflags |= syscall.CLONE_NEWUSER
	sys.UidMappings, sys.GidMappings = r.uidMap(), r.gidMap()
	sys.GidMappingsEnableSetgroups = true
	sys.Credential = &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{}}
	sys.Chroot = "."
}

// shiftStaged gives the step's ids what braid staged in its upper layer and
// private /tmp: each file owned by host id n < r.size becomes r's n.
func shiftStaged(v view, r idRange) error {
	for _, dir := range []string{v.upper, v.tmp} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if !ok || (int(st.Uid) >= r.size && int(st.Gid) >= r.size) {
				return nil
			}
			uid, gid := int(st.Uid), int(st.Gid)
			if uid < r.size {
				uid += r.uid
			}
			if gid < r.size {
				gid += r.gid
			}
			return os.Lchown(p, uid, gid)
		})
		if err != nil {
			return fmt.Errorf("give the step its staged files: %w", err)
		}
	}
	return nil
}

// sysnum is a system call's number on this architecture, from the seccomp
// library's tables (the syscall package lacks the newer ones); 0 when
// there is none.
func sysnum(name string) uintptr {
	info, err := arch.GetInfo("")
	if err != nil {
		return 0
	}
	return uintptr(info.SyscallNames[name])
}

var (
	sysOpenTree     = sysnum("open_tree")
	sysMoveMount    = sysnum("move_mount")
	sysMountSetattr = sysnum("mount_setattr")
	sysSetns        = sysnum("setns")
)

// atFDCWD is AT_FDCWD, a variable so that it converts to a uintptr.
var atFDCWD = -100

const (
	atEmptyPath         = 0x1000
	atRecursive         = 0x8000
	openTreeClone       = 1
	moveMountFEmptyPath = 0x4
	mountAttrRdonly     = 0x1
	mountAttrIdmap      = 0x00100000
)

// mountAttr is struct mount_attr of mount_setattr(2).
type mountAttr struct {
	set, clr, propagation, usernsFD uint64
}

func mountSetattr(dfd int, path string, flags uintptr, a *mountAttr) error {
	if sysMountSetattr == 0 {
		return syscall.ENOSYS
	}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall6(sysMountSetattr, uintptr(dfd), uintptr(unsafe.Pointer(p)), flags, uintptr(unsafe.Pointer(a)), unsafe.Sizeof(*a), 0)
	if e != 0 {
		return e
	}
	return nil
}

// idmapAt mounts at dst a copy of the mount at src (not its submounts)
// whose owners are shifted by the user namespace usernsFD.
func idmapAt(src, dst string, usernsFD int) error {
	if sysOpenTree == 0 || sysMoveMount == 0 {
		return syscall.ENOSYS
	}
	sp, err := syscall.BytePtrFromString(src)
	if err != nil {
		return err
	}
	dp, err := syscall.BytePtrFromString(dst)
	if err != nil {
		return err
	}
	fd, _, e := syscall.Syscall(sysOpenTree, uintptr(atFDCWD), uintptr(unsafe.Pointer(sp)), openTreeClone|syscall.O_CLOEXEC)
	if e != 0 {
		return fmt.Errorf("open_tree %s: %w", src, e)
	}
	defer syscall.Close(int(fd))
	if err := mountSetattr(int(fd), "", atEmptyPath, &mountAttr{set: mountAttrIdmap, usernsFD: uint64(usernsFD)}); err != nil {
		return fmt.Errorf("idmap %s: %w", src, err)
	}
	empty := []byte{0}
	_, _, e = syscall.Syscall6(sysMoveMount, fd, uintptr(unsafe.Pointer(&empty[0])), uintptr(atFDCWD), uintptr(unsafe.Pointer(dp)), moveMountFEmptyPath, 0)
	if e != 0 {
		return fmt.Errorf("move_mount %s: %w", dst, e)
	}
	return nil
}

// newIDMapUserns returns a descriptor of a user namespace mapped to r, for
// idmapped mounts: that of exe started into one and stopped at its exec,
// before its first instruction, then killed.
func newIDMapUserns(exe string, r idRange) (int, error) {
	type result struct {
		fd  int
		err error
	}
	done := make(chan result, 1)
	go func() {
		goruntime.LockOSThread() // the tracer is this thread
		defer goruntime.UnlockOSThread()
		sys := &syscall.SysProcAttr{Ptrace: true, Pdeathsig: syscall.SIGKILL, Cloneflags: syscall.CLONE_NEWUSER,
			UidMappings: r.uidMap(), GidMappings: r.gidMap(), GidMappingsEnableSetgroups: true}
		proc, err := os.StartProcess(exe, []string{exe}, &os.ProcAttr{Sys: sys})
		if err != nil {
			done <- result{-1, err}
			return
		}
		defer func() { _ = proc.Kill(); _, _ = proc.Wait() }()
		if err := waitExecStop(proc.Pid); err != nil {
			done <- result{-1, err}
			return
		}
		fd, err := syscall.Open("/proc/"+strconv.Itoa(proc.Pid)+"/ns/user", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		done <- result{fd, err}
	}()
	r2 := <-done
	return r2.fd, r2.err
}

// Paths OCI runtimes hide from a container: files are covered by
// /dev/null, directories by an empty read-only tmpfs; and paths they make
// read-only. Each is under /proc or /sys; one the kernel lacks is skipped.
var (
	maskedFiles = []string{"/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
		"/proc/timer_stats", "/proc/sched_debug"}
	maskedDirs    = []string{"/proc/acpi", "/proc/asound", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap"}
	readOnlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// maskUnder masks the paths under top ("/proc" or "/sys") in the view at
// root.
func maskUnder(root, top string) error {
	skip := func(err error) bool { return errors.Is(err, fs.ErrNotExist) }
	for _, p := range maskedFiles {
		if under(p, top) {
			if err := syscall.Mount("/dev/null", filepath.Join(root, p), "", syscall.MS_BIND, ""); err != nil && !skip(err) {
				return fmt.Errorf("mask %s: %w", p, err)
			}
		}
	}
	const ro = syscall.MS_RDONLY | syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC
	for _, p := range maskedDirs {
		if under(p, top) {
			if err := syscall.Mount("tmpfs", filepath.Join(root, p), "tmpfs", ro, "mode=555,size=4k"); err != nil && !skip(err) {
				return fmt.Errorf("mask %s: %w", p, err)
			}
		}
	}
	for _, p := range readOnlyPaths {
		if under(p, top) {
			at := filepath.Join(root, p)
			if err := bind(at, at, true, true); err != nil && !skip(err) {
				return fmt.Errorf("make %s read-only: %w", p, err)
			}
		}
	}
	return nil
}

// makeReadOnly makes the mount at dst read-only, and with recursive its
// submounts too (mount_setattr; a remount of the top one only where the
// kernel lacks it).
func makeReadOnly(dst string, recursive bool) error {
	if recursive {
		err := mountSetattr(atFDCWD, dst, atRecursive, &mountAttr{set: mountAttrRdonly})
		if !errors.Is(err, syscall.ENOSYS) {
			return err
		}
	}
	return syscall.Mount("", dst, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, "")
}

// waitExecStop waits for pid, forked traced by the calling thread, to stop
// at its exec.
func waitExecStop(pid int) error {
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil {
		return fmt.Errorf("wait for the step's process to start: %w", err)
	}
	if !ws.Stopped() {
		return fmt.Errorf("the step's process ended as it started (%v)", ws)
	}
	return nil
}

// inMountNS runs fn on a new thread that has joined pid's mount namespace:
// the thread that forked pid is under the step's seccomp filter, which
// refuses mounts. The thread ends with fn.
func inMountNS(pid int, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread leaves the host's mount namespace
		if err := syscall.Unshare(syscall.CLONE_FS); err != nil {
			errc <- fmt.Errorf("join the step's mount namespace: %w", err)
			return
		}
		fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/ns/mnt", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("join the step's mount namespace: %w", err)
			return
		}
		_, _, e := syscall.Syscall(sysSetns, uintptr(fd), syscall.CLONE_NEWNS, 0)
		syscall.Close(fd)
		if e != 0 {
			errc <- fmt.Errorf("join the step's mount namespace: %w", e)
			return
		}
		errc <- fn()
	}()
	return <-errc
}
