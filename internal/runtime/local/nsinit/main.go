package main

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// init keeps main on one thread: no_new_privs and the seccomp filter (s)
// are the calling thread's, and the exec must be made by that thread.
func init() { runtime.LockOSThread() }

func main() {
	errFD := 3
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(errFD), syscall.F_SETFD, syscall.FD_CLOEXEC); e != 0 {
		errFD = 2
	}
	if msg := run(os.Args[1:]); msg != "" {
		_, _ = syscall.Write(errFD, []byte(msg))
		os.Exit(1)
	}
	os.Exit(0)
}

// run carries out the operations and execs the step; it returns only on
// failure (or after x, with "").
func run(args []string) string {
	if os.Getpid() != 1 {
		// Never touch the mounts of a namespace braid did not make.
		return "braid-nsinit runs only as the init of the namespaces braid starts it in"
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return "make the mounts private: " + err.Error()
	}
	for len(args) > 0 {
		op := args[0]
		n, known := arity(op)
		if !known || len(args) < 1+n {
			return "bad operation " + quote(op)
		}
		a := args[1 : 1+n]
		args = args[1+n:]
		var err error
		switch op {
		case "o":
			err = overlay(a[0], a[1], a[2], a[3])
		case "O":
			err = hostOverlay(a[0], a[1], a[2], a[3])
		case "b":
			err = bind(a[0], a[1], a[2])
		case "t":
			err = mountIn(a[0], "tmpfs", "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=755,size=64k")
		case "T":
			err = mountIn(a[0], "tmpfs", "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=755,size=1m")
		case "d":
			err = os.MkdirAll(a[0], 0o755)
		case "l":
			err = os.Symlink(a[0], a[1])
		case "e":
			err = maskDir(a[0])
		case "s":
			err = loadFilter(a[0])
		case "p":
			err = mountIn(a[0], "proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
		case "c":
			err = enter(a[0], a[1])
		case "x":
			return ""
		case "--":
			if len(args) == 0 {
				return "no command"
			}
			err = syscall.Exec(args[0], args, os.Environ())
			return "exec " + args[0] + ": " + err.Error()
		}
		if err != nil {
			return op + " " + quote(a[len(a)-1]) + ": " + err.Error()
		}
	}
	return "no command"
}

// arity is the number of arguments of operation op.
func arity(op string) (int, bool) {
	switch op {
	case "o", "O":
		return 4, true
	case "b":
		return 3, true
	case "l", "c":
		return 2, true
	case "t", "T", "d", "p", "e", "s":
		return 1, true
	case "x", "--":
		return 0, true
	}
	return 0, false
}

// overlay mounts an overlay of lower at dst.
func overlay(lower, upper, work, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return syscall.Mount("overlay", dst, "overlay", 0, "lowerdir="+lower+",upperdir="+upper+",workdir="+work+",userxattr")
}

// hostOverlay mounts an overlay of the host's directory lower at dst.
// braid listed the host's directories when it started: one that is gone
// since stays empty, and one that holds a mount since (the kernel refuses
// it as a lower layer) is bound read-only instead.
func hostOverlay(lower, upper, work, dst string) error {
	err := overlay(lower, upper, work, dst)
	if err == nil {
		return nil
	}
	var st syscall.Stat_t
	if syscall.Lstat(lower, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return nil
	}
	if berr := bind("ro", lower, dst); berr != nil {
		return err
	}
	return nil
}

func mountIn(dst, source, fstype string, flags uintptr, data string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return syscall.Mount(source, dst, fstype, flags, data)
}

func bind(flags, src, dst string) error {
	var rec, ro, optional, mask bool
	for _, f := range flags {
		rec, ro, optional, mask = rec || f == 'r', ro || f == 'o', optional || f == '?', mask || f == 'm'
	}
	var st syscall.Stat_t
	if err := syscall.Stat(src, &st); err != nil {
		if optional || mask && err == syscall.ENOENT {
			return nil
		}
		return err
	}
	if mask {
		var dt syscall.Stat_t
		if err := syscall.Stat(dst, &dt); err != nil {
			return nil // nothing to cover
		}
	} else if err := makeTarget(dst, st.Mode&syscall.S_IFMT == syscall.S_IFDIR); err != nil {
		return err
	}
	mflags := uintptr(syscall.MS_BIND)
	if rec {
		mflags |= syscall.MS_REC
	}
	if err := syscall.Mount(src, dst, "", mflags, ""); err != nil {
		if optional && (err == syscall.ENOENT || err == syscall.EACCES) {
			return nil
		}
		return err
	}
	if !ro {
		return nil
	}
	if rec && readOnlyTree(dst) == nil {
		return nil
	}
	// A user namespace may not clear the flags a mount came with: keep them.
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dst, &fs); err != nil {
		return err
	}
	keep := uintptr(fs.Flags) & (syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC | syscall.MS_NOATIME | syscall.MS_NODIRATIME)
	if fs.Flags&4096 != 0 { // ST_RELATIME
		keep |= syscall.MS_RELATIME
	}
	return syscall.Mount("", dst, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY|keep, "")
}

// makeTarget makes the mount point dst: a directory, or an empty file.
func makeTarget(dst string, dir bool) error {
	if dir {
		return os.MkdirAll(dst, 0o755)
	}
	var st syscall.Stat_t
	if syscall.Stat(dst, &st) == nil {
		return nil
	}
	if err := os.MkdirAll(parent(dst), 0o755); err != nil {
		return err
	}
	fd, err := syscall.Open(dst, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	return syscall.Close(fd)
}

func enter(root, dir string) error {
	if err := syscall.Chdir(root); err != nil {
		return err
	}
	if err := syscall.Chroot("."); err != nil {
		return err
	}
	return syscall.Chdir(dir)
}

func parent(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}

func quote(s string) string { return "\"" + s + "\"" }

// mountAttr is struct mount_attr of mount_setattr(2).
type mountAttr struct {
	set, clr, propagation, usernsFD uint64
}

// readOnlyTree makes the mount at dst and its submounts read-only
// (mount_setattr, Linux 5.12; its number is the same on every
// architecture).
func readOnlyTree(dst string) error {
	const sysMountSetattr, atRecursive, mountAttrRdonly = 442, 0x8000, 1
	p, err := syscall.BytePtrFromString(dst)
	if err != nil {
		return err
	}
	cwd := -100 // AT_FDCWD
	a := mountAttr{set: mountAttrRdonly}
	_, _, e := syscall.Syscall6(sysMountSetattr, uintptr(cwd), uintptr(unsafe.Pointer(p)), atRecursive, uintptr(unsafe.Pointer(&a)), unsafe.Sizeof(a), 0)
	if e != 0 {
		return e
	}
	return nil
}

// maskDir covers the directory dst, when there is one, with an empty
// read-only tmpfs.
func maskDir(dst string) error {
	var st syscall.Stat_t
	if syscall.Stat(dst, &st) != nil {
		return nil
	}
	return syscall.Mount("tmpfs", dst, "tmpfs", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=555,size=4k")
}

// loadFilter sets no_new_privs and loads the seccomp program prog (hex:
// each instruction's code in 2 bytes, jt, jf, and k in 4, little-endian).
func loadFilter(prog string) error {
	if len(prog) == 0 || len(prog)%16 != 0 {
		return syscall.EINVAL
	}
	filter := make([]syscall.SockFilter, len(prog)/16)
	for i := range filter {
		b, ok := unhex(prog[16*i : 16*i+16])
		if !ok {
			return syscall.EINVAL
		}
		filter[i] = syscall.SockFilter{
			Code: uint16(b[0]) | uint16(b[1])<<8, Jt: b[2], Jf: b[3],
			K: uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24,
		}
	}
	const prSetNoNewPrivs, seccompModeFilter = 38, 2
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return e
	}
	fprog := syscall.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_SECCOMP, seccompModeFilter, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return e
	}
	return nil
}

// unhex decodes 16 hex digits.
func unhex(s string) ([8]byte, bool) {
	var out [8]byte
	for i := 0; i < 16; i++ {
		c := s[i]
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		default:
			return out, false
		}
		out[i/2] = out[i/2]<<4 | v
	}
	return out, true
}
