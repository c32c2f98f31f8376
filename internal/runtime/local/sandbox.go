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
)

// Isolation modes (Config.Isolation).
const (
	// IsolationNone (or "") runs every step on the host's file system; a step that
	// reads an output under /tmp still gets a private /tmp when braid is
	// root.
	IsolationNone = "none"
	// IsolationAuto gives every step a root view of its own when this
	// process can (it is root and may mount an overlay, or it is not and
	// may build one in user namespaces: userns.go), and falls back to
	// IsolationNone with one warning otherwise. braid's default (the
	// embedded mode sets it), not the zero Config's.
	IsolationAuto = "auto"
	// IsolationRequired gives every step a root view of its own; New fails
	// when that is not possible.
	IsolationRequired = "required"
)

// Directories of a step's root view, under the step's directory.
const (
	viewUpper  = "upper" // the overlay's upper layer: what the step wrote
	viewWork   = "work"  // the overlay's work directory
	viewMerged = "root"  // where the view is mounted, in the step's namespace only
	viewTmp    = "tmp"   // the step's /tmp
)

// view is the root file system of one step: an overlay whose lower layer
// is the host's root, mounted in a mount namespace of the step's own.
type view struct {
	dir    string // the step's directory, bound at its own path
	upper  string
	work   string
	merged string
	tmp    string
	// lower is the overlay's lower layer: "" for the host's root, or an
	// image's unpacked root (image.go).
	lower string
}

// sandbox is what every step's view binds from the host, worked out once.
type sandbox struct {
	dataDir string
	shims   string
	// braid is the braid executable when the view would not show it (it
	// lies under /tmp or the data directory); "" otherwise.
	braid string
	// self is the braid executable, which a view of an image's root
	// always binds (image.go).
	self string
	// rw are the host's mount points bound read-write (recursively): /dev,
	// /proc, /sys, and /run when it is a mount point.
	rw []string
	// ro are the host's other top-level mount points, bound read-only
	// (recursively), since the overlay's lower layer holds only the root
	// file system.
	ro []string
	// pidns is true when every step gets a PID namespace of its own, with
	// a /proc that shows only its processes: the kernel can mount a proc
	// for a namespace that has no process yet (the pidns= option, Linux
	// 6.18). Otherwise steps see the host's processes in the host's /proc.
	pidns    bool
	pidnsErr error // why not
	// procOption is true when braid can mount that /proc from outside the
	// namespace (pidns=, Linux 6.18; see stepProc); the trampoline
	// (enter.go), the step's init, mounts it itself on any kernel.
	procOption bool
	// userns is set when braid is not root: each step's view is built by
	// braid-nsinit in user, mount and PID namespaces of the step's own
	// (userns.go).
	userns *userns
	// ids, when braid is root, is the range the steps' user namespace maps
	// to (contain.go); nil when the kernel refuses user namespaces
	// (idsErr says why): steps then run as the host's root.
	ids    *idRange
	idsErr error
	// usernsFile is the steps' user namespace, mapped to ids (held open:
	// the file's finalizer closes it with the sandbox); idmapFD is its
	// descriptor when it shifts the owners of each view's lower layer, -1
	// when the kernel cannot (idmapErr).
	usernsFile *os.File
	idmapFD    int
	idmapErr   error
	// enter starts steps in that user namespace without a fork of braid
	// (enter.go); nil where it cannot (enterErr): each step is forked into
	// a user namespace of its own.
	enter    *stepEnter
	enterErr error
	// filter is every step's seccomp filter (seccomp.go); nil when the
	// kernel has none (filterErr).
	filter    *stepFilter
	filterErr error
}

// missing lists the parts of a step's containment this kernel refuses.
func (sb *sandbox) missing() []string {
	var out []string
	if sb.userns == nil && sb.ids == nil {
		out = append(out, "a user namespace for the steps: "+sb.idsErr.Error())
	}
	if sb.filter == nil {
		out = append(out, "a seccomp filter: "+sb.filterErr.Error())
	}
	if !sb.pidns {
		out = append(out, "a PID namespace and /proc of each step's own (steps see the host's /proc): "+sb.pidnsErr.Error())
	}
	return out
}

// newSandbox decides whether steps get a root view, following the
// isolation mode; nil means they do not. It fails only in
// IsolationRequired mode, or on an unknown mode.
func (rt *Runtime) newSandbox(mode string) (*sandbox, error) {
	switch mode {
	case "", IsolationNone:
		return nil, nil
	case IsolationAuto, IsolationRequired:
	default:
		return nil, fmt.Errorf("unknown isolation %q: use none, auto or required", mode)
	}
	sb, err := probeSandbox(rt.cfg.DataDir, rt.shimsDir, rt.cfg.Braid)
	if err == nil {
		return sb, rt.reportContainment(sb, mode)
	}
	if mode == IsolationRequired {
		return nil, fmt.Errorf("isolation required: %w", err)
	}
	rt.log.Warn("steps run without isolation: they share the host's file system", "reason", err.Error())
	return nil, nil
}

// reportContainment says once what the kernel refuses of a step's
// containment; with IsolationRequired, that is an error.
func (rt *Runtime) reportContainment(sb *sandbox, mode string) error {
	if sb.userns != nil {
		rt.log.Info("steps run in user namespaces: braid is not root", "helper", sb.userns.helper)
	}
	if sb.ids != nil && sb.enter == nil {
		rt.log.Info("each step is forked into a user namespace of its own, which costs a fork of braid", "reason", sb.enterErr.Error())
	}
	if sb.ids != nil && sb.idmapErr != nil {
		rt.log.Warn("steps see the host's files as nobody's: they can read them but not change them in their views", "reason", sb.idmapErr.Error())
	}
	missing := sb.missing()
	if len(missing) == 0 {
		return nil
	}
	if mode == IsolationRequired {
		return fmt.Errorf("isolation required, but this kernel refuses %s", strings.Join(missing, "; and "))
	}
	rt.log.Warn("steps are not fully contained: the kernel refuses part of it", "missing", strings.Join(missing, "; "))
	return nil
}

// probeSandbox returns the sandbox when this process can mount a root view:
// the paths fit in overlay options, and either it is root and an overlay
// of / mounts in a new mount namespace, or it is not and a view mounts in
// new user namespaces (userns.go).
func probeSandbox(dataDir, shims, braid string) (*sandbox, error) {
	if strings.ContainsAny(dataDir, ",:\\") {
		return nil, fmt.Errorf("the data directory %s holds a character that overlay options cannot carry (, : or \\)", dataDir)
	}
	sb := &sandbox{dataDir: dataDir, shims: shims, self: braid, idmapFD: -1}
	if under(braid, "/tmp") || under(braid, dataDir) {
		sb.braid = braid
	}
	mounts, err := hostMounts()
	if err != nil {
		return nil, err
	}
	sb.rw, sb.ro = splitMounts(mounts, dataDir)
	sb.filter, sb.filterErr = newStepFilter()
	if os.Geteuid() != 0 {
		if err := sb.probeUserns(mounts); err != nil {
			return nil, fmt.Errorf("a root view needs root, or user namespaces: %w", err)
		}
		return sb, nil
	}
	sb.probeIDs()
	probe, err := os.MkdirTemp(dataDir, ".probe-")
	if err != nil {
		return nil, fmt.Errorf("probe the root view: %w", err)
	}
	defer os.RemoveAll(probe)
	v := newViewIn(probe)
	for _, d := range []string{v.upper, v.work, v.merged} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, fmt.Errorf("probe the root view: %w", err)
		}
	}
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := sb.probeOverlay(v); err != nil {
			errc <- err
			return
		}
		sb.pidnsErr = probePIDNamespace(v.merged)
		sb.procOption = sb.pidnsErr == nil
		sb.pidns = sb.procOption
		if sb.enter != nil {
			sb.pidns = sb.enter.pidns
			if !sb.pidns {
				sb.pidnsErr = errors.New("the kernel refuses a new PID namespace")
			}
		}
		if sb.filter != nil {
			if sb.filterErr = sb.filter.install(); sb.filterErr != nil {
				sb.filter = nil
			}
		}
		errc <- nil
	}()
	if err := <-errc; err != nil {
		return nil, fmt.Errorf("probe the root view: %w", err)
	}
	return sb, nil
}

// probeIDs sets up the steps' user namespaces (braid is root): their
// range, and one mapped to it for idmapped mounts.
func (sb *sandbox) probeIDs() {
	exe := sb.self
	if exe == "" {
		if exe, sb.idsErr = os.Executable(); sb.idsErr != nil {
			return
		}
	}
	r := stepIDRange()
	fd, err := newIDMapUserns(exe, r)
	if err != nil {
		sb.idsErr = fmt.Errorf("a user namespace mapped to %d-%d: %w", r.uid, r.uid+r.size-1, err)
		return
	}
	sb.ids, sb.idmapFD = &r, fd
	sb.usernsFile = os.NewFile(uintptr(fd), "steps-userns")
	sb.enter, sb.enterErr = newStepEnter(sb.usernsFile, sb.filter, sb.dataDir)
}

// probeOverlay mounts the probe's overlay, with an idmapped lower layer
// when the kernel allows it (else it records why, and steps get none).
func (sb *sandbox) probeOverlay(v view) error {
	if sb.idmapFD < 0 {
		sb.idmapErr = sb.idsErr
		return mountOverlay(v, -1)
	}
	sb.idmapErr = mountOverlay(v, sb.idmapFD)
	if sb.idmapErr == nil {
		return nil
	}
	sb.idmapFD = -1 // the namespace stays, for the steps (enter.go)
	// The failed try left the thread in a mount namespace of its own.
	return mountOverlay(v, -1)
}

// A step's PID namespace: the thread that forks the step unshares
// CLONE_NEWPID first, so the step's process is the init (PID 1) of a
// namespace of its own; it cannot see or signal the host's processes, and
// when it ends the kernel kills whatever it left behind. Its /proc must show
// that namespace. The trampoline (enter.go), its init, mounts it. Without
// one, proc can be mounted for it from outside only once it has a process
// (the pidns= option, Linux 6.18): the step is forked traced, so that it
// stops at its exec, before its first instruction; braid mounts its /proc
// and lets it go.

// newPIDNamespace makes the calling locked thread's next child the init of
// a new PID namespace.
func newPIDNamespace() error {
	if err := syscall.Unshare(syscall.CLONE_NEWPID); err != nil {
		return fmt.Errorf("new PID namespace: %w", err)
	}
	return nil
}

// stepProc mounts /proc for the step's process pid, forked traced by the
// calling thread and now stopped at its exec, in the view at root, and
// lets pid go on. The mounts are made by another thread that joins the
// step's mount namespace (the calling thread is under the step's seccomp
// filter, which refuses them); the calling thread, pid's tracer, detaches
// it, one of the two ptrace requests the filter allows.
func stepProc(pid int, root string) error {
	if err := waitExecStop(pid); err != nil {
		return err
	}
	if err := inMountNS(pid, func() error { return mountProc(pid, root) }); err != nil {
		return err
	}
	if err := syscall.PtraceDetach(pid); err != nil {
		return fmt.Errorf("start the step's process: %w", err)
	}
	return nil
}

// mountProc mounts at root/proc a proc that shows pid's PID namespace,
// masked as OCI runtimes mask it.
func mountProc(pid int, root string) error {
	const flags = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC
	if err := syscall.Mount("proc", filepath.Join(root, "proc"), "proc", flags, "pidns=/proc/"+strconv.Itoa(pid)+"/ns/pid"); err != nil {
		return fmt.Errorf("mount the step's own /proc: %w", err)
	}
	return maskUnder(root, "/proc")
}

// settlePidfdCheck makes the os package run, now, the check it does once
// per process before its first fork: it forks a trivial child that exits at
// once. Run on a thread that has unshared CLONE_NEWPID, that child would be
// the new namespace's init, and its exit would leave the namespace unable
// to take the step's process (ENOMEM). os.FindProcess runs the check.
func settlePidfdCheck() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
}

// probePIDNamespace tries the whole PID namespace sequence on a process
// that never runs (this executable, stopped at its exec, then killed), in
// the view at root.
func probePIDNamespace(root string) error {
	settlePidfdCheck()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := newPIDNamespace(); err != nil {
		return err
	}
	proc, err := os.StartProcess(exe, []string{exe}, &os.ProcAttr{
		Sys: &syscall.SysProcAttr{Ptrace: true, Pdeathsig: syscall.SIGKILL}})
	if err != nil {
		return err
	}
	err = stepProc(proc.Pid, root)
	_ = proc.Kill()
	_, _ = proc.Wait()
	return err
}

func newViewIn(dir string) view {
	return view{
		dir:    dir,
		upper:  filepath.Join(dir, viewUpper),
		work:   filepath.Join(dir, viewWork),
		merged: filepath.Join(dir, viewMerged),
		tmp:    filepath.Join(dir, viewTmp),
	}
}

// makeView creates the directories of a step's view.
func makeView(dir string) (view, error) {
	v := newViewIn(dir)
	for _, d := range []string{v.upper, v.work, v.merged} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return view{}, fmt.Errorf("the step's root view: %w", err)
		}
	}
	if err := os.Mkdir(v.tmp, 0o1777); err != nil {
		return view{}, fmt.Errorf("the step's root view: %w", err)
	}
	if err := os.Chmod(v.tmp, 0o1777); err != nil { // past the umask
		return view{}, fmt.Errorf("the step's root view: %w", err)
	}
	return v, nil
}

// mountOverlay gives the calling thread a mount namespace of its own (and
// its own root and working directory, which the namespace needs), in which
// nothing propagates back to the host, and mounts the overlay of the
// host's root (or the image's) at v.merged. With idmapFD (not -1), the
// lower layer is an idmapped copy of it, mounted at v.merged first and
// covered by the overlay. The caller must have locked the thread, and must
// let it end rather than unlock it.
func mountOverlay(v view, idmapFD int) error {
	if err := syscall.Unshare(syscall.CLONE_FS | syscall.CLONE_NEWNS); err != nil {
		return fmt.Errorf("new mount namespace: %w", err)
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	lower := "/"
	if v.lower != "" {
		lower = v.lower
	}
	if idmapFD >= 0 {
		if err := idmapAt(lower, v.merged, idmapFD); err != nil {
			return fmt.Errorf("the step's lower layer: %w", err)
		}
		lower = v.merged
	}
	opts := "lowerdir=" + lower + ",upperdir=" + v.upper + ",workdir=" + v.work
	if err := syscall.Mount("overlay", v.merged, "overlay", 0, opts); err != nil {
		return fmt.Errorf("mount the overlay: %w", err)
	}
	return nil
}

// mount builds the step's view in the calling thread's new mount
// namespace: the overlay; the host's /dev, /proc (masked), /sys (masked,
// read-only), /run and other file systems (read-only); the private /tmp;
// an empty data directory holding only the step's own directory
// (read-write: its log, script and result files are the host's) and the
// image shims (read-only).
func (sb *sandbox) mount(v view) error {
	if err := mountOverlay(v, sb.idmapFD); err != nil {
		if sb.idmapFD < 0 {
			return err
		}
		// An image's root on a file system that cannot be idmapped: its
		// files are nobody's in the step.
		if err := mountOverlay(v, -1); err != nil {
			return err
		}
	}
	if err := sb.mountHost(v); err != nil {
		return err
	}
	at := func(p string) string { return filepath.Join(v.merged, p) }
	if v.lower != "" {
		if err := makeDirIn(v, "/tmp"); err != nil {
			return err
		}
	}
	if err := bind(v.tmp, at("/tmp"), true, false); err != nil {
		return err
	}
	data := at(sb.dataDir)
	if err := makeDirIn(v, sb.dataDir); err != nil {
		return fmt.Errorf("the step's view of the data directory: %w", err)
	}
	if err := syscall.Mount("tmpfs", data, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=755,size=64k"); err != nil {
		return fmt.Errorf("hide the data directory: %w", err)
	}
	if err := bindDir(v.dir, at(v.dir), false); err != nil {
		return err
	}
	if _, err := os.Stat(sb.shims); err == nil {
		if err := bindDir(sb.shims, at(sb.shims), true); err != nil {
			return err
		}
	}
	if sb.braid != "" {
		if err := bindFile(sb.braid, at(sb.braid)); err != nil {
			return err
		}
	}
	if v.lower != "" {
		return sb.bindImageExtras(v)
	}
	return nil
}

// mountHost binds the host's file systems into the view: /dev and /run
// read-write, /sys read-only and /proc (unless the step gets its own),
// both masked, and the others read-only.
func (sb *sandbox) mountHost(v view) error {
	at := func(p string) string { return filepath.Join(v.merged, p) }
	for _, m := range sb.rw {
		if v.lower != "" && m == "/run" {
			continue // an image's root has its own
		}
		if v.lower != "" {
			if err := mkdirIn(v.merged, m); err != nil {
				return err
			}
		}
		if m == "/proc" && sb.pidns {
			if err := newPIDNamespace(); err != nil {
				return err
			}
			continue // mounted once the step's process exists (see stepProc)
		}
		if err := bind(m, at(m), true, m == "/sys"); err != nil {
			return err
		}
		if m == "/proc" || m == "/sys" {
			if err := maskUnder(v.merged, m); err != nil {
				return err
			}
		}
	}
	for _, m := range sb.ro {
		if v.lower != "" {
			break // an image's root shows none of the host's file systems
		}
		if err := bind(m, at(m), true, true); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // unmounted and removed since braid listed the host's mounts
			}
			return err
		}
	}
	return nil
}

// bindDir binds the directory src at dst, creating dst first.
func bindDir(src, dst string, readOnly bool) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	return bind(src, dst, false, readOnly)
}

// bindFile binds the file src at dst, creating an empty dst first.
func bindFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	if f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755); err == nil {
		f.Close()
	}
	return bind(src, dst, false, true)
}

func bind(src, dst string, recursive, readOnly bool) error {
	flags := uintptr(syscall.MS_BIND)
	if recursive {
		flags |= syscall.MS_REC
	}
	if err := syscall.Mount(src, dst, "", flags, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	if !readOnly {
		return nil
	}
	if err := makeReadOnly(dst, recursive); err != nil {
		return fmt.Errorf("bind %s read-only: %w", src, err)
	}
	return nil
}

// startInView starts the step's process inside its root view. A goroutine
// locked to a thread of its own builds the view in the thread's new mount
// namespace, sets no_new_privs and the step's seccomp filter on itself,
// forks the process from that thread (so the process starts in that
// namespace, chrooted into the view, in a user namespace of its own:
// contain.go), and keeps the thread until the process exits, since the
// process's Pdeathsig follows the thread (the thread joins the step's
// cgroup, if any, for the fork only); exited is closed then, with the
// process left to reap. The thread ends with the goroutine, taking the
// namespace with it once the step's processes are gone.
func (rt *Runtime) startInView(v view, cg *stepCgroup, argv []string, attr *os.ProcAttr) (*os.Process, <-chan struct{}, error) {
	sb := rt.sandbox
	if sb.userns != nil { // no cgroups without root: cg is nil
		proc, err := sb.startInUserns(v, argv, attr)
		if err != nil {
			return nil, nil, fmt.Errorf("the step's root view: %w", err)
		}
		return proc, nil, nil
	}
	if sb.ids != nil {
		if err := shiftStaged(v, *sb.ids); err != nil {
			return nil, nil, err
		}
		if sb.enter != nil {
			return rt.startEntering(v, cg, argv, attr)
		}
		sb.ids.intoUserns(attr.Sys)
	}
	var forked func(pid int) error
	if sb.pidns {
		attr.Sys.Ptrace = true
		forked = func(pid int) error { return stepProc(pid, v.merged) }
	}
	return rt.startOnThread(func() error { return sb.enterView(v) }, forked, cg, argv, attr)
}

// enterView builds the view on the calling thread, makes it the thread's
// working directory (the step's chroot, when it runs in a user namespace),
// and, where there is no trampoline to load it (enter.go), puts the thread
// under the step's seccomp filter.
func (sb *sandbox) enterView(v view) error {
	if err := sb.mount(v); err != nil {
		return fmt.Errorf("the step's root view: %w", err)
	}
	if sb.ids != nil {
		if err := syscall.Chdir(v.merged); err != nil {
			return fmt.Errorf("the step's root view: %w", err)
		}
	}
	if sb.filter != nil && sb.enter == nil { // the trampoline loads it otherwise
		return sb.filter.install()
	}
	return nil
}

// hostMounts lists the mount points of this process's mount namespace.
func hostMounts() ([]string, error) {
	// The calling thread's, not the process's: /proc/self follows the main
	// thread, which may have been left in a step's namespace (a locked
	// goroutine that ends on the main thread wedges it instead of ending
	// it). A goroutine that is not locked runs in the host's namespace.
	f, err := os.Open("/proc/thread-self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("list the host's mounts: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		out = append(out, unescapeMount(fields[4]))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("list the host's mounts: %w", err)
	}
	return out, nil
}

// splitMounts sorts the host's mount points into those bound read-write
// into every view and the top-level others bound read-only. Mounts under
// /tmp and the data directory are left out: the view has its own.
func splitMounts(mounts []string, dataDir string) (rw, ro []string) {
	rw = []string{"/dev", "/proc", "/sys"}
	seen := map[string]bool{}
	for _, m := range mounts {
		seen[filepath.Clean(m)] = true
	}
	if seen["/run"] {
		rw = append(rw, "/run")
	}
	for m := range seen {
		if m == "/" || under(m, "/tmp") || under(m, dataDir) || coveredBy(m, rw) {
			continue
		}
		top := true
		for p := filepath.Dir(m); p != "/"; p = filepath.Dir(p) {
			if seen[p] {
				top = false
				break
			}
		}
		if top {
			ro = append(ro, m)
		}
	}
	return rw, ro
}

func coveredBy(path string, dirs []string) bool {
	for _, d := range dirs {
		if under(path, d) {
			return true
		}
	}
	return false
}

// under reports whether path is dir or lies under it.
func under(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// unescapeMount decodes the octal escapes (\040 for a space) of a mount
// point in /proc/self/mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// withView gives the step its root view: the directories of the overlay,
// the private /tmp, and the working directory inside the view ("/" when the
// container sets none, as an image's default), made when missing.
func (rt *Runtime) withView(s *step, p *prepared) error {
	v, err := makeView(s.dir)
	if err != nil {
		return err
	}
	p.view, p.tmp = &v, v.tmp
	p.workDir = filepath.Join("/", p.workDir)
	if p.image != nil {
		p.view.lower = p.image.Root
		return imageWorkDir(v, p.image, p.workDir)
	}
	if p.workDir == "/" {
		return nil
	}
	if err := p.paths().MakeDir(p.workDir); err != nil {
		return fmt.Errorf("workingDir: %w", err)
	}
	return nil
}
