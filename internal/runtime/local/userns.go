package local

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// A root view when braid is not root. A thread of a multi-threaded process
// cannot enter a new user namespace, and a process cannot mount before it
// has one, so the step starts as braid-nsinit (package nsinit, installed
// next to the braid executable by `make build`), cloned into new user,
// mount and PID namespaces with braid's uid and gid mapped to 0 (steps
// expect to be root; files braid's user owns are root's in the view, and
// everything else, such as the host's root-owned files, is nobody's). As
// PID 1 of its namespace it mounts the view it is given (operations in its
// argv), chroots into it, and execs the step, which stays PID 1; its start
// costs about a millisecond. File descriptor 3 carries its error, if any:
// a step whose view cannot be built, or whose command cannot run, ends
// Error as when it cannot start.
//
// The kernel refuses an overlay whose lower layer holds mounts inherited
// from a more privileged namespace (they are locked), so the host's root
// is not one overlay. The view's root is an overlay whose lower layer is a
// skeleton on a tmpfs of the step's namespace (the host's top-level
// directories, links and mount points, and the directories on the way to
// deeper mount points) and whose upper layer is the step's upper
// directory, as in the root view: what the step writes at its top level or
// under a directory that is empty on the host lands there. Each host
// directory that is not empty is bound read-only on top, or, when braid
// put something of the step's under it (an input artifact, the working
// directory), is an overlay of its own whose upper layer is that
// directory's place in the step's upper directory. Building the skeleton
// costs no disk writes, and a step costs as many directories on disk as in
// the root view.
//
// What a step cannot do here: write into a host directory that is not
// empty unless an input artifact or its working directory lies under it
// (it is read-only), nor change what root owns on the host even then (an
// overlay of a user namespace cannot copy up a directory whose owner it
// does not map: nobody's in the view). Nothing reaches the host. cgroups
// are root's: a step's limits are ignored (one warning).

// nsinitName is the helper's file name, next to the braid executable.
const nsinitName = "braid-nsinit"

// userns is how steps get a view without root, worked out once.
type userns struct {
	helper   string // braid-nsinit
	uid, gid int    // braid's, mapped to 0 in each step's namespace
	layout   []rootEntry
}

// rootEntry is one entry of the host's root, as a step's view shows it.
type rootEntry struct {
	path   string
	kind   entryKind
	target string // entryLink: the link's target
}

type entryKind int

const (
	entryDir      entryKind = iota // a directory that is not empty: bound read-only, or an overlay once the step has files under it
	entryEmpty                     // an empty directory: the skeleton's, under the view's root overlay
	entrySkeleton                  // a directory with a mount point under it: the skeleton's; its entries follow
	entryStopDir                   // a mount point (or /tmp): the skeleton's, covered by a bind
	entryStopFile                  // a file mount point: covered by a bind
	entryLink                      // a symbolic link, copied into the skeleton
	entryFile                      // a regular file of the root or a skeleton directory: bound read-only
)

// probeUserns sets sb up for steps in user namespaces, and tries the whole
// sequence once.
func (sb *sandbox) probeUserns(mounts []string) error {
	data, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err != nil {
		return fmt.Errorf("user namespaces: %w", err)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(string(data))); n <= 0 {
		return errors.New("user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0)")
	}
	helper, err := findNSInit(sb.self)
	if err != nil {
		return err
	}
	sb.userns = &userns{helper: helper, uid: os.Getuid(), gid: os.Getgid(), layout: hostLayout(mounts)}
	sb.pidns = true
	first := sb.tryUserns()
	if first == nil {
		return nil
	}
	sb.pidns = false // perhaps only the proc mount is refused: try with the host's
	if err := sb.tryUserns(); err != nil {
		return fmt.Errorf("a view in a user namespace: %w%s", first, kernelHint())
	}
	sb.pidnsErr = first
	return nil
}

// tryUserns builds a view of the host's root in new namespaces, as for a
// step, and exits.
func (sb *sandbox) tryUserns() error {
	probe, err := os.MkdirTemp(sb.dataDir, ".probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(probe)
	v, err := makeView(probe)
	if err != nil {
		return err
	}
	ops, err := sb.usernsOps(v, "/")
	if err != nil {
		return err
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devNull.Close()
	attr := &os.ProcAttr{Files: []*os.File{devNull, devNull, devNull}, Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	ops = append(ops, sb.filterOps()...)
	proc, err := sb.startNSInit(append(ops, "x"), attr)
	if err != nil {
		return err
	}
	state, err := proc.Wait()
	if err != nil {
		return err
	}
	if !state.Success() {
		return fmt.Errorf("%s: %v", nsinitName, state)
	}
	return nil
}

// kernelHint names the kernel when it is older than the first that lets a
// user namespace mount an overlay (5.11).
func kernelHint() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return ""
	}
	var b strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	rel := b.String()
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return ""
	}
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	if major > 5 || major == 5 && minor >= 11 {
		return ""
	}
	return fmt.Sprintf(" (an overlay in a user namespace needs Linux 5.11 or later; this is %s)", rel)
}

// findNSInit finds braid-nsinit next to the braid executable, or next to
// the file it links to.
func findNSInit(braid string) (string, error) {
	dirs := []string{filepath.Dir(braid)}
	if real, err := filepath.EvalSymlinks(braid); err == nil {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		p := filepath.Join(d, nsinitName)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not next to %s (make build puts it there)", nsinitName, braid)
}

// hostLayout lists how a view shows the host's root: the top-level
// entries, and the skeleton down to each mount point.
func hostLayout(mounts []string) []rootEntry {
	stops := map[string]bool{"/tmp": true}
	for _, m := range mounts {
		if m = filepath.Clean(m); m != "/" {
			stops[m] = true
		}
	}
	var out []rootEntry
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return // unreadable: an empty directory
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			info, err := os.Lstat(p)
			if err != nil {
				continue
			}
			switch {
			case stops[p] && info.IsDir():
				out = append(out, rootEntry{path: p, kind: entryStopDir})
			case stops[p]:
				out = append(out, rootEntry{path: p, kind: entryStopFile})
			case info.Mode()&fs.ModeSymlink != 0:
				if target, err := os.Readlink(p); err == nil {
					out = append(out, rootEntry{path: p, kind: entryLink, target: target})
				}
			case info.IsDir() && hasStopUnder(p, stops):
				out = append(out, rootEntry{path: p, kind: entrySkeleton})
				walk(p)
			case info.IsDir() && isEmptyDir(p):
				out = append(out, rootEntry{path: p, kind: entryEmpty})
			case info.IsDir():
				out = append(out, rootEntry{path: p, kind: entryDir})
			case info.Mode().IsRegular():
				out = append(out, rootEntry{path: p, kind: entryFile})
			}
		}
	}
	walk("/")
	return out
}

func isEmptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

func hasStopUnder(dir string, stops map[string]bool) bool {
	for s := range stops {
		if s != dir && under(s, dir) {
			return true
		}
	}
	return false
}

// usernsOps returns braid-nsinit's operations that mount the step's view
// and enter it at workDir, making on disk the work directories of the
// overlays it needs.
func (sb *sandbox) usernsOps(v view, workDir string) ([]string, error) {
	if v.lower != "" {
		return sb.usernsImageOps(v, workDir)
	}
	root := v.merged
	at := func(p string) string { return filepath.Join(root, p) }
	ops := []string{"T", root}
	for _, e := range sb.userns.layout {
		switch e.kind {
		case entryDir, entryEmpty, entrySkeleton, entryStopDir:
			ops = append(ops, "d", at(e.path))
		case entryLink:
			ops = append(ops, "l", e.target, at(e.path))
		}
	}
	ops = append(ops, "o", root, v.upper, v.work, root)
	for i, e := range sb.userns.layout {
		switch e.kind {
		case entryDir:
			op, err := dirOp(e.path, v, at(e.path), i)
			if err != nil {
				return nil, fmt.Errorf("the step's root view: %w", err)
			}
			ops = append(ops, op...)
		case entryFile:
			ops = append(ops, "b", "o?", e.path, at(e.path))
		}
	}
	for _, m := range sb.rw {
		ops = append(ops, sb.rwOp(m, at(m))...)
	}
	ops = append(ops, maskOps(root)...)
	for _, m := range sb.ro {
		ops = append(ops, "b", "ro?", m, at(m))
	}
	ops = append(ops, "b", "r", v.tmp, at("/tmp"), "t", at(sb.dataDir), "b", "-", v.dir, at(v.dir))
	ops = append(ops, "b", "o?", sb.shims, at(sb.shims))
	if sb.braid != "" {
		ops = append(ops, "b", "o", sb.braid, at(sb.braid))
	}
	return append(ops, "c", root, workDir), nil
}

// dirOp shows the host's directory p at dst: bound read-only, or, when the
// step's upper layer has files under p, an overlay of p with that
// directory as its upper layer (and a work directory of its own, the i-th
// under the view's).
func dirOp(p string, v view, dst string, i int) ([]string, error) {
	upper := filepath.Join(v.upper, p)
	if info, err := os.Lstat(upper); err != nil || !info.IsDir() || strings.ContainsAny(p, ",:\\") {
		return []string{"b", "ro?", p, dst}, nil
	}
	work := filepath.Join(v.work, strconv.Itoa(i))
	if err := os.Mkdir(work, 0o700); err != nil {
		return nil, err
	}
	return []string{"O", p, upper, work, dst}, nil
}

// rwOp binds the host's mount m at dst: read-write, but /sys read-only;
// /proc is a proc of the step's own when the kernel allows it.
func (sb *sandbox) rwOp(m, dst string) []string {
	switch {
	case m == "/proc" && sb.pidns:
		return []string{"p", dst}
	case m == "/sys":
		return []string{"b", "ro", m, dst}
	}
	return []string{"b", "r", m, dst}
}

// maskOps hides and makes read-only in the view at root what OCI runtimes
// do (contain.go), once /proc and /sys are mounted there.
func maskOps(root string) []string {
	var ops []string
	for _, p := range maskedFiles {
		ops = append(ops, "b", "m", os.DevNull, filepath.Join(root, p))
	}
	for _, p := range maskedDirs {
		ops = append(ops, "e", filepath.Join(root, p))
	}
	for _, p := range readOnlyPaths {
		ops = append(ops, "b", "rom", filepath.Join(root, p), filepath.Join(root, p))
	}
	return ops
}

// filterOps loads the step's seccomp filter (under no_new_privs), the last
// operation before the exec: the filter refuses mounts.
func (sb *sandbox) filterOps() []string {
	if sb.filter == nil {
		return nil
	}
	return []string{"s", sb.filter.hex}
}

// usernsImageOps returns the operations of a view of an image's root: one
// overlay, then what the root view binds (image.go). The mount points are
// checked against the image's root here, as mkdirIn does; braid-nsinit
// makes those the image lacks.
func (sb *sandbox) usernsImageOps(v view, workDir string) ([]string, error) {
	at := func(p string) string { return filepath.Join(v.merged, p) }
	ops := []string{"o", v.lower, v.upper, v.work, v.merged}
	check := func(p string) error { return checkImagePath(v.lower, p) }
	for _, m := range sb.rw {
		if m == "/run" {
			continue // an image's root has its own
		}
		if err := check(m); err != nil {
			return nil, err
		}
		ops = append(ops, sb.rwOp(m, at(m))...)
	}
	ops = append(ops, maskOps(v.merged)...)
	for _, p := range []string{"/tmp", sb.dataDir} {
		if err := check(p); err != nil {
			return nil, err
		}
	}
	ops = append(ops, "b", "r", v.tmp, at("/tmp"), "t", at(sb.dataDir), "b", "-", v.dir, at(v.dir))
	ops = append(ops, "b", "o?", sb.shims, at(sb.shims))
	switch {
	case sb.braid != "":
		ops = append(ops, "b", "o", sb.braid, at(sb.braid))
	case sb.self != "":
		if err := check(filepath.Dir(sb.self)); err != nil {
			return nil, err
		}
		ops = append(ops, "b", "o", sb.self, at(sb.self))
	}
	for _, f := range []string{"/etc/resolv.conf", "/etc/hosts"} {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		if info, err := os.Lstat(filepath.Join(v.lower, f)); err == nil && !info.Mode().IsRegular() {
			continue // the image's own link or directory stays
		}
		if check(filepath.Dir(f)) != nil {
			continue
		}
		ops = append(ops, "b", "o", f, at(f))
	}
	return append(ops, "c", v.merged, workDir), nil
}

// startNSInit starts braid-nsinit with ops in new user, mount and PID
// namespaces, with attr's files, environment and process attributes, and
// waits until it has exec'd the step (or exited, after ops ending in x).
func (sb *sandbox) startNSInit(ops []string, attr *os.ProcAttr) (*os.Process, error) {
	un := sb.userns
	sys := *attr.Sys
	sys.Chroot, sys.Ptrace = "", false
	sys.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
	sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: un.uid, Size: 1}}
	sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: un.gid, Size: 1}}
	sys.GidMappingsEnableSetgroups = false
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	a := *attr
	a.Sys, a.Dir = &sys, ""
	a.Files = append(slices.Clone(attr.Files[:min(len(attr.Files), 3)]), w)
	argv := append([]string{un.helper}, ops...)
	proc, err := os.StartProcess(un.helper, argv, &a)
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	msg, _ := io.ReadAll(r)
	r.Close()
	if len(msg) > 0 {
		_, _ = proc.Wait()
		return nil, errors.New(string(msg))
	}
	return proc, nil
}

// startInUserns starts the step's process in its view, in namespaces of
// its own (see the top of this file).
func (sb *sandbox) startInUserns(v view, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	workDir := attr.Dir
	if workDir == "" {
		workDir = "/"
	}
	ops, err := sb.usernsOps(v, workDir)
	if err != nil {
		return nil, err
	}
	ops = append(append(append(ops, sb.filterOps()...), "--"), argv...)
	return sb.startNSInit(ops, attr)
}
