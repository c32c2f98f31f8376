package main

import (
	"os"
	"syscall"
)

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
	case "t", "T", "d", "p":
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
	var rec, ro, optional bool
	for _, f := range flags {
		rec, ro, optional = rec || f == 'r', ro || f == 'o', optional || f == '?'
	}
	var st syscall.Stat_t
	if err := syscall.Stat(src, &st); err != nil {
		if optional {
			return nil
		}
		return err
	}
	if err := makeTarget(dst, st.Mode&syscall.S_IFMT == syscall.S_IFDIR); err != nil {
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
