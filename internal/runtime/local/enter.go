package local

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"syscall"
	"unsafe"
)

// Go forks, rather than vforks, a process it starts in a new user
// namespace (the parent must write its id maps while the child waits), and
// a fork of braid costs a copy of its page tables and a copy-on-write
// fault on every page braid writes afterwards: 15 ms of CPU a step on a
// small VM, more as braid grows. So when braid is root, a step joins one
// user namespace that all steps share (mapped to stepIDRange, made at New:
// the one idmapped mounts use) through a trampoline that braid vforks as
// root, from the thread that built the step's view, with the view as its
// working directory (enter_amd64.asm says what it does): it chroots there,
// mounts and masks the /proc of the step's PID namespace (it is its init,
// so no ptrace stop and no pidns= option are needed), changes to the
// step's working directory, joins the user namespace, becomes its root,
// loads the seccomp filter under no_new_privs, and execs the step. A
// failure is written as an errno on file descriptor 4, which the exec
// closes. The trampoline is a memfd (its code followed by the filter),
// executed through /proc/self/fd. Where there is none (another
// architecture, or a kernel that refuses to run it), each step is forked
// into a user namespace of its own instead (contain.go: intoUserns).

// stepEnter is the trampoline, ready to run.
type stepEnter struct {
	mem    *os.File // the memfd, held open: its finalizer would close it
	path   string   // /proc/self/fd/N of mem
	userns *os.File // the steps' user namespace
	// pidns: the trampoline mounts the /proc of the step's own PID
	// namespace; filter: it loads the seccomp filter.
	pidns, filter bool
}

// newStepEnter writes the trampoline and the filter (nil: none) into a
// memfd, and tries it once in a scratch directory under dir.
func newStepEnter(userns *os.File, filter *stepFilter, dir string) (*stepEnter, error) {
	if len(enterCode) == 0 {
		return nil, errors.New("no trampoline for this architecture")
	}
	name := []byte("braid-enter\x00")
	const mfdCloexec, mfdAllowSealing = 1, 2
	fd, _, e := syscall.Syscall(sysnum("memfd_create"), uintptr(unsafe.Pointer(&name[0])), mfdCloexec|mfdAllowSealing, 0)
	if e != 0 {
		return nil, fmt.Errorf("memfd_create: %w", e)
	}
	// Above the step's descriptors (0-4), which the fork moves into place.
	high, err := fcntlDup(int(fd), 10)
	syscall.Close(int(fd))
	if err != nil {
		return nil, err
	}
	mem := os.NewFile(uintptr(high), "braid-enter")
	var prog []syscall.SockFilter
	if filter != nil {
		prog = filter.prog
	}
	if _, err := mem.Write(enterELF(enterCode, prog)); err != nil {
		mem.Close()
		return nil, err
	}
	// Sealed: nothing changes what every step runs as root.
	const fAddSeals, sealAll = 1033, 1 | 2 | 4 | 8 // F_SEAL_SEAL, SHRINK, GROW, WRITE
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(high), fAddSeals, sealAll); e != 0 {
		mem.Close()
		return nil, fmt.Errorf("seal the trampoline: %w", e)
	}
	se := &stepEnter{mem: mem, path: "/proc/self/fd/" + strconv.Itoa(high), userns: userns, filter: filter != nil}
	if err := se.probeIn(dir); err != nil {
		mem.Close()
		return nil, err
	}
	return se, nil
}

// probeIn tries the trampoline with a PID namespace, else without.
func (se *stepEnter) probeIn(dataDir string) error {
	dir, err := os.MkdirTemp(dataDir, ".probe-enter-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil { // the step's root searches it
		return err
	}
	if err := os.Mkdir(filepath.Join(dir, "proc"), 0o755); err != nil {
		return err
	}
	if se.probe(dir, true) == nil {
		se.pidns = true
		return nil
	}
	return se.probe(dir, false)
}

func fcntlDup(fd, min int) (int, error) {
	nfd, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, uintptr(min))
	if e != 0 {
		return -1, fmt.Errorf("dup the trampoline: %w", e)
	}
	return int(nfd), nil
}

// enterELF wraps code, followed by the filter prog as the code reads it
// (its length in 2 bytes, 6 of padding, the instructions), in a static
// ELF executable of one loadable segment.
func enterELF(code []byte, prog []syscall.SockFilter) []byte {
	const base, ehsize, phsize = 0x400000, 64, 56
	le := binary.LittleEndian
	b := make([]byte, ehsize+phsize, ehsize+phsize+len(code)+8+8*len(prog))
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(b[16:], uint16(elf.ET_EXEC))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[24:], base+ehsize+phsize) // entry
	le.PutUint64(b[32:], ehsize)             // program headers
	le.PutUint16(b[52:], ehsize)
	le.PutUint16(b[54:], phsize)
	le.PutUint16(b[56:], 1)
	b = append(b, code...)
	b = le.AppendUint16(b, uint16(len(prog)))
	b = append(b, 0, 0, 0, 0, 0, 0)
	b = append(b, filterBytes(prog)...)
	ph := b[ehsize:]
	le.PutUint32(ph[0:], uint32(elf.PT_LOAD))
	le.PutUint32(ph[4:], uint32(elf.PF_R|elf.PF_X))
	le.PutUint64(ph[16:], base) // vaddr
	le.PutUint64(ph[24:], base) // paddr
	le.PutUint64(ph[32:], uint64(len(b)))
	le.PutUint64(ph[40:], uint64(len(b)))
	le.PutUint64(ph[48:], 0x1000)
	return b
}

// flags is the trampoline's first argument.
func (se *stepEnter) flags(pidns bool) string {
	f := []byte("--")
	if pidns {
		f[0] = 'p'
	}
	if se.filter {
		f[1] = 's'
	}
	return string(f)
}

// probe runs the trampoline, in a thread of its own with a private mount
// namespace (and with pidns a new PID namespace), with dir (which holds a
// proc directory) as the view, up to the exec of a command that does not
// exist: everything before the exec must work.
func (se *stepEnter) probe(dir string, pidns bool) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread leaves the host's mount namespace
		settlePidfdCheck()
		if err := syscall.Unshare(syscall.CLONE_FS | syscall.CLONE_NEWNS); err != nil {
			errc <- err
			return
		}
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			errc <- err
			return
		}
		if pidns {
			if err := newPIDNamespace(); err != nil {
				errc <- err
				return
			}
		}
		if err := syscall.Chdir(dir); err != nil {
			errc <- err
			return
		}
		errc <- se.run(pidns)
	}()
	return <-errc
}

// run starts the trampoline from the calling thread with a command that
// does not exist, and checks that it got as far as its exec.
func (se *stepEnter) run(pidns bool) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	attr := &os.ProcAttr{Files: []*os.File{nil, nil, nil, se.userns, w}, Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	proc, err := os.StartProcess(se.path, []string{se.path, se.flags(pidns), "/", "/nonexistent/braid-probe"}, attr)
	w.Close()
	if err != nil {
		return fmt.Errorf("run the trampoline: %w", err)
	}
	_, _ = proc.Wait()
	err = enterResult(r)
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	if err == nil {
		err = errors.New("it exec'd a command that does not exist")
	}
	return fmt.Errorf("the trampoline: %w", err)
}

// enterResult reads the trampoline's error channel until the step's exec
// closes it: nil, or the errno that stopped it.
func enterResult(r io.Reader) error {
	var b [4]byte
	n, _ := io.ReadFull(r, b[:])
	if n == 0 {
		return nil
	}
	if n < 4 {
		return errors.New("the trampoline failed")
	}
	return syscall.Errno(binary.LittleEndian.Uint32(b[:]))
}

// startEntering starts the step through the trampoline, from the thread
// that builds its view (startOnThread).
func (rt *Runtime) startEntering(v view, cg *stepCgroup, argv []string, attr *os.ProcAttr) (*os.Process, <-chan struct{}, error) {
	sb := rt.sandbox
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	wd := attr.Dir
	if wd == "" {
		wd = "/"
	}
	sys := *attr.Sys
	sys.Chroot, sys.Ptrace = "", false // the trampoline's: its working directory is the view
	a := *attr
	a.Sys, a.Dir = &sys, ""
	a.Files = append(slices.Clone(attr.Files[:3]), sb.enter.userns, w)
	closed := false
	forked := func(int) error {
		w.Close()
		closed = true
		return enterResult(r)
	}
	args := append([]string{sb.enter.path, sb.enter.flags(sb.pidns), wd}, argv...)
	proc, exited, err := rt.startOnThread(func() error { return sb.enterView(v) }, forked, cg, args, &a)
	if !closed {
		w.Close()
	}
	if err != nil && errors.As(err, new(syscall.Errno)) {
		err = &os.PathError{Op: "exec", Path: argv[0], Err: err}
	}
	return proc, exited, err
}
