package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Reading outputs as the step sees them.
//
// Braid reads a step's outputs as root on the host, after the step ended;
// the step chose their paths and everything on the way to them. Resolved by
// the host's kernel, a symbolic link the step made at an output's path
// would lead wherever it says on the host: braid's config file, its
// database, a parent of the tarball being packed. So an output's path is
// never handed to the host's path walk. Paths.open walks it one element at
// a time over the directories that make up the step's root, as the kernel
// did inside the view:
//
//   - each element is looked up without following it (fstatat with
//     AT_SYMLINK_NOFOLLOW) in the upper layer, then in the lower one. In
//     the upper layer a whiteout (a character device 0/0) hides the lower
//     entry, a file hides a lower directory, and an opaque directory
//     (the xattr trusted.overlay.opaque, or user.overlay.opaque in a user
//     namespace's overlay, set to "y") hides the lower directory's entries;
//   - a symbolic link is read and its target walked instead, from the
//     view's root when it is absolute, at most maxLinks of them; ".." never
//     climbs above the root. A link can thus lead anywhere in the view, and
//     nowhere else;
//   - /tmp is the private /tmp on the host; braid's data directory (Hidden)
//     is an empty directory but for the step's own pod directory (Visible),
//     which is the host's directory at its own path, as the view binds them;
//     what lies under the data directory otherwise is refused, and so is
//     anything under /proc, /sys and /dev, which are the host's kernel's
//     (braid's /proc/self/environ, its devices), not the step's files;
//   - every directory is opened (O_DIRECTORY|O_NOFOLLOW) in the directory
//     found before it, and the last element, a regular file, is opened
//     with O_NOFOLLOW in its directory and checked to be the very file
//     looked up, so that nothing renamed meanwhile can redirect the walk.
//
// Without a view (Root empty: isolation none, or the emissary in its
// container), the lower layer is the host's root and there is no upper
// layer: links resolve on the host, but the data directory (but for the
// pod directory), /proc, /sys and /dev are refused all the same.
//
// Hard links need no care: a step can only link a file it could reach, on
// the file system it could write (its upper layer, its /tmp and its pod
// directory are all on the data directory's file system, whose other files
// it cannot see), so a hard link leads to nothing it could not read anyway.
//
// What the walk does not honour: an overlay's redirect_dir and metacopy
// xattrs, which braid's overlays do not use; a directory of the upper layer
// with such an xattr is read as the plain directory it is, which can only
// hide files of the lower layer, never show others.

// systemDirs are the file systems of the kernel that a view binds from the
// host, or mounts for the step's own PID namespace: read on the host, they
// are braid's, so no output is read there.
var systemDirs = []string{"/proc", "/sys", "/dev"}

// noFD marks a layer a directory does not have.
const noFD = -1

// place is what the view has at a path.
type place int

const (
	placeLayers place = iota // the upper layer over the lower, or the directory of a bound one it lies in
	placeBound               // a host directory bound at this path: the private /tmp, the pod directory
	placeWay                 // the data directory, or a directory of it on the way to the pod directory
	placeHidden              // anything else under the data directory
	placeSystem              // /proc, /sys or /dev
)

// place says what the view has at the clean absolute path view, and the
// host directory of a placeBound one (or the system directory).
func (p Paths) place(view string) (place, string) {
	if p.Hidden != "" {
		if p.Visible != "" && within(view, p.Visible) {
			if view == p.Visible {
				return placeBound, p.Visible
			}
			return placeLayers, ""
		}
		if within(view, p.Hidden) {
			if view == p.Hidden || (p.Visible != "" && within(p.Visible, view)) {
				return placeWay, ""
			}
			return placeHidden, ""
		}
	}
	for _, d := range systemDirs {
		if within(view, d) {
			return placeSystem, d
		}
	}
	if p.Tmp != "" && view == "/tmp" {
		return placeBound, p.Tmp
	}
	return placeLayers, ""
}

// within reports whether the clean absolute path is dir or lies under it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// refusedError is an output path that leads where braid reads nothing.
type refusedError struct {
	path string // as the step named it
	at   string // where it led in the view
	why  string
}

func (e *refusedError) Error() string {
	if e.path == "" || e.path == e.at {
		return fmt.Sprintf("path %s is %s; refused", e.at, e.why)
	}
	return fmt.Sprintf("path %s leads to %s, %s; refused", e.path, e.at, e.why)
}

// errNotFollowed is a symbolic link where braid wants the file itself.
var errNotFollowed = errors.New("is a symbolic link, which braid does not follow here")

// ref is an entry as a directory descriptor and a name in it; fd is
// unix.AT_FDCWD for a directory braid made (the private /tmp, the pod
// directory), whose name is then its absolute host path.
type ref struct {
	fd   int
	name string
}

// entry is one element of the view, looked up without following it.
type entry struct {
	view  string
	st    unix.Stat_t // as lstat describes it
	at    ref         // where st was read
	upper bool        // at is in the upper layer
	under ref         // a directory of the upper layer: the lower layer's directory under it (fd noFD: none)
	way   bool        // a directory of the data directory on the way to the pod directory: nothing on the host
}

// vdir is an open directory of the view: its upper layer's directory and
// its lower layer's (a bound directory is a lower layer alone), noFD where
// it has none; a directory on the way to the pod directory has neither.
type vdir struct {
	view         string
	upper, lower int
	way          bool
}

func (d *vdir) close() {
	for _, fd := range []int{d.upper, d.lower} {
		if fd != noFD {
			unix.Close(fd)
		}
	}
	d.upper, d.lower = noFD, noFD
}

// info describes the directory itself, as its topmost layer has it.
func (d *vdir) info(name string) fs.FileInfo {
	i := statInfo{name: name}
	for _, fd := range []int{d.upper, d.lower} {
		if fd != noFD && unix.Fstat(fd, &i.st) == nil {
			return i
		}
	}
	i.st.Mode = unix.S_IFDIR | 0o755
	return i
}

// openRoot opens the view's root: the upper layer over the lower one (the
// host's root when Lower is empty).
func (p Paths) openRoot() (*vdir, error) {
	d := &vdir{view: "/", upper: noFD, lower: noFD}
	lower := p.Lower
	if lower == "" {
		lower = "/"
	}
	var err error
	if d.lower, err = openDir(ref{unix.AT_FDCWD, lower}); err != nil {
		return nil, fmt.Errorf("the step's root %s: %w", lower, err)
	}
	if p.Root != "" {
		if d.upper, err = openDir(ref{unix.AT_FDCWD, p.Root}); err != nil {
			d.close()
			return nil, fmt.Errorf("the step's upper layer %s: %w", p.Root, err)
		}
	}
	return d, nil
}

// lookup finds the entry name of the directory d without following it.
func (p Paths) lookup(d *vdir, name string) (entry, error) {
	e := entry{view: path.Join(d.view, name), under: ref{fd: noFD}}
	switch pl, host := p.place(e.view); pl {
	case placeSystem:
		return e, &refusedError{at: e.view, why: "in " + host + ", which braid never reads an output from"}
	case placeHidden:
		return e, &refusedError{at: e.view, why: "in braid's data directory, outside the step's own directory"}
	case placeWay:
		e.way, e.st.Mode = true, unix.S_IFDIR|0o755
		return e, nil
	case placeBound:
		e.at = ref{unix.AT_FDCWD, host}
		return e, lstatAt(e.at, &e.st)
	}
	if d.way {
		return e, unix.ENOENT
	}
	if d.upper != noFD {
		e.at = ref{d.upper, name}
		err := lstatAt(e.at, &e.st)
		switch {
		case err == nil && e.st.Mode&unix.S_IFMT == unix.S_IFCHR && e.st.Rdev == 0:
			return e, unix.ENOENT // a whiteout: deleted in the view
		case err == nil:
			e.upper = true
			var lst unix.Stat_t
			if isDir(&e.st) && d.lower != noFD && lstatAt(ref{d.lower, name}, &lst) == nil && isDir(&lst) {
				e.under = ref{d.lower, name}
			}
			return e, nil
		case !errors.Is(err, unix.ENOENT):
			return e, err
		}
	}
	if d.lower == noFD {
		return e, unix.ENOENT
	}
	e.at = ref{d.lower, name}
	return e, lstatAt(e.at, &e.st)
}

// openEntryDir opens the directory entry e, merging the lower layer's
// under the upper one's unless the upper one is opaque.
func openEntryDir(e entry) (*vdir, error) {
	d := &vdir{view: e.view, upper: noFD, lower: noFD, way: e.way}
	if e.way {
		return d, nil
	}
	fd, err := openDir(e.at)
	if err != nil {
		return nil, err
	}
	if !e.upper {
		d.lower = fd
		return d, nil
	}
	d.upper = fd
	if e.under.fd == noFD || opaque(fd) {
		return d, nil
	}
	if d.lower, err = openDir(e.under); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// opened is what an output path led to, open: a regular file or a
// directory of the view.
type opened struct {
	view string
	info fs.FileInfo
	file *os.File
	dir  *vdir
}

// open opens the step's path as the step saw it, a link at its end
// followed too. Its errors name the path as the step wrote it (op is the
// operation they show: "open", "stat").
func (p Paths) open(stepPath string, op string) (opened, error) {
	o, err := p.walk(stepPath)
	var pe *fs.PathError
	var re *refusedError
	switch {
	case err == nil:
		return o, nil
	case errors.As(err, &re):
		re.path = stepPath
		return o, re
	case errors.As(err, &pe):
		return o, &fs.PathError{Op: op, Path: stepPath, Err: pe.Err}
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		return o, &fs.PathError{Op: op, Path: stepPath, Err: err}
	}
	return o, err
}

// walk resolves the step's path element by element.
func (p Paths) walk(stepPath string) (opened, error) {
	stack, todo, err := p.start(stepPath)
	defer func() {
		for _, d := range stack {
			d.close()
		}
	}()
	if err != nil {
		return opened{}, err
	}
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		cur := stack[len(stack)-1]
		if name == ".." {
			if len(stack) > 1 {
				cur.close()
				stack = stack[:len(stack)-1]
			}
			continue
		}
		e, err := p.lookup(cur, name)
		var re *refusedError
		if errors.As(err, &re) {
			re.at = path.Join(append([]string{re.at}, todo...)...) // where the path led, in full
		}
		if err != nil {
			return opened{}, err
		}
		switch {
		case isLink(&e.st):
			if links++; links > maxLinks {
				return opened{}, unix.ELOOP
			}
			target, err := readlinkAt(e.at)
			if err != nil {
				return opened{}, err
			}
			if strings.HasPrefix(target, "/") {
				for _, d := range stack[1:] {
					d.close()
				}
				stack = stack[:1]
			}
			todo = append(splitView(target), todo...)
		case isDir(&e.st):
			d, err := openEntryDir(e)
			if err != nil {
				return opened{}, err
			}
			stack = append(stack, d)
		case len(todo) > 0:
			return opened{}, unix.ENOTDIR
		default:
			f, err := openFile(e)
			if err != nil {
				return opened{}, err
			}
			return opened{view: e.view, info: statInfo{name: path.Base(e.view), st: e.st}, file: f}, nil
		}
	}
	top := stack[len(stack)-1]
	stack = stack[:len(stack)-1]
	return opened{view: top.view, info: top.info(path.Base(top.view)), dir: top}, nil
}

// start returns the directories a walk of the step's path starts in (the
// root, and the working directory for a relative path) and the elements to
// walk from there. Without a view, a step whose working directory lies
// under its private /tmp works in the host's directory WorkDir itself (its
// cwd stays the host's directory as its /tmp is covered), so a relative
// path that stays under it starts there, when no link leads to it; a ".."
// out of it climbs the host's directories, as the kernel's does from a cwd.
func (p Paths) start(stepPath string) ([]*vdir, []string, error) {
	root, err := p.openRoot()
	if err != nil {
		return nil, nil, err
	}
	stack := []*vdir{root}
	wd := filepath.Clean(p.WorkDir)
	if p.Root != "" || p.Tmp == "" || !filepath.IsAbs(wd) || !within(wd, "/tmp") || !filepath.IsLocal(stepPath) {
		return stack, splitView(p.stepAbs(stepPath)), nil
	}
	if pl, _ := p.place(wd); pl != placeLayers {
		return stack, splitView(p.stepAbs(stepPath)), nil // the walk maps or refuses it
	}
	dirs, err := openHostDirs(wd)
	if err != nil {
		return stack, splitView(p.stepAbs(stepPath)), nil
	}
	return append(stack, dirs...), splitView(stepPath), nil
}

// openHostDirs opens the host's directories on the way to the clean
// absolute path dir, and dir, each in the one before, through no link.
func openHostDirs(dir string) ([]*vdir, error) {
	var dirs []*vdir
	at, view := unix.AT_FDCWD, "/"
	for _, name := range splitView(dir) {
		if at == unix.AT_FDCWD {
			name = "/" + name
		}
		fd, err := openDir(ref{at, name})
		if err != nil {
			for _, d := range dirs {
				d.close()
			}
			return nil, err
		}
		view = path.Join(view, path.Base(name))
		dirs = append(dirs, &vdir{view: view, upper: noFD, lower: fd})
		at = fd
	}
	return dirs, nil
}

// splitView splits a path into its elements, leaving out empty ones and ".".
func splitView(p string) []string {
	var out []string
	for part := range strings.SplitSeq(p, "/") {
		if part != "" && part != "." {
			out = append(out, part)
		}
	}
	return out
}

// stepAbs makes a path of the step absolute against its working directory.
func (p Paths) stepAbs(path string) string {
	if !filepath.IsAbs(path) && p.Root == "" && !filepath.IsAbs(p.WorkDir) {
		if wd, err := os.Getwd(); err == nil { // the emissary's and the tests' relative paths
			return filepath.Join(wd, p.WorkDir, path)
		}
	}
	return p.abs(path)
}

// openFile opens the regular file e for reading, without following a link
// and without blocking on a pipe, and checks that it is the file that was
// looked up.
func openFile(e entry) (*os.File, error) {
	if e.st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is not a regular file or a directory", e.view)
	}
	fd, err := unix.Openat(e.at.fd, e.at.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Dev != e.st.Dev || st.Ino != e.st.Ino {
		unix.Close(fd)
		return nil, fmt.Errorf("%s changed while braid read it", e.view)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), e.view), nil
}

func openDir(r ref) (int, error) {
	for {
		fd, err := unix.Openat(r.fd, r.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func lstatAt(r ref, st *unix.Stat_t) error {
	return unix.Fstatat(r.fd, r.name, st, unix.AT_SYMLINK_NOFOLLOW)
}

func readlinkAt(r ref) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(r.fd, r.name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// opaque reports whether the upper layer's directory fd hides the lower
// layer's: trusted.overlay.opaque for root's overlays, user.overlay.opaque
// for those of a user namespace (userxattr). Either only ever hides.
func opaque(fd int) bool {
	buf := make([]byte, 8)
	for _, name := range []string{"trusted.overlay.opaque", "user.overlay.opaque"} {
		if n, err := unix.Fgetxattr(fd, name, buf); err == nil && string(buf[:n]) == "y" {
			return true
		}
	}
	return false
}

func isDir(st *unix.Stat_t) bool  { return st.Mode&unix.S_IFMT == unix.S_IFDIR }
func isLink(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFLNK }

// statInfo is an lstat of the view as an fs.FileInfo.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (i statInfo) Name() string       { return i.name }
func (i statInfo) Size() int64        { return i.st.Size }
func (i statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i statInfo) IsDir() bool        { return isDir(&i.st) }
func (i statInfo) Sys() any           { return nil }

func (i statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	for bit, mode := range map[uint32]fs.FileMode{unix.S_ISUID: fs.ModeSetuid, unix.S_ISGID: fs.ModeSetgid, unix.S_ISVTX: fs.ModeSticky} {
		if i.st.Mode&bit != 0 {
			m |= mode
		}
	}
	return m
}
