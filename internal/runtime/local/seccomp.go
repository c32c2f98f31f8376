package local

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"syscall"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
)

// Every step runs under no_new_privs and a seccomp filter modelled on the
// default profile of OCI runtimes (moby's): the system calls that reach
// the host's kernel state rather than the step's own (modules, kexec,
// keys, BPF, perf, the clock, swap, quotas, reboot), that open a file by
// handle (which walks out of a bind mount: open_by_handle_at on a bound
// directory reached the host's root), that change mounts or namespaces,
// and that read or write another process's memory fail with EPERM.
// Everything else is allowed: the step's user namespace and the kernel's
// checks do the rest. The filter is assembled once (at New) and loaded
// per step by the trampoline that execs it (braid as root: enter.go; it
// holds the program), or by the thread that forks it where there is no
// trampoline (both no_new_privs and the filter are per thread and
// inherited by the child), or by braid-nsinit before it execs the step
// (braid not root: it gets the program in its arguments, so that it stays
// tiny).

// deniedSyscalls fail with EPERM in every step. Names this architecture
// does not have are left out.
var deniedSyscalls = []string{
	"open_by_handle_at", "name_to_handle_at",
	"kexec_load", "kexec_file_load", "bpf",
	"keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen",
	"fsmount", "fsconfig", "fspick", "mount_setattr",
	"unshare", "setns",
	"process_vm_readv", "process_vm_writev",
	"init_module", "finit_module", "delete_module",
	"reboot", "swapon", "swapoff", "acct",
	"settimeofday", "clock_settime", "clock_adjtime", "stime",
	"perf_event_open", "userfaultfd", "iopl", "ioperm",
	"lookup_dcookie", "quotactl", "quotactl_fd",
	"syslog", "uselib", "vhangup", "nfsservctl",
	"create_module", "get_kernel_syms", "query_module",
}

// The two ptrace requests a step may make, which trace nothing of their
// own: the thread that forks a step in a PID namespace of its own forks it
// traced (the child asks with PTRACE_TRACEME, under the filter already) and
// detaches it after the fork (stepProc).
const (
	ptraceTraceme = 0  // PTRACE_TRACEME
	ptraceDetach  = 17 // PTRACE_DETACH
)

const (
	prSetNoNewPrivs   = 38 // PR_SET_NO_NEW_PRIVS
	seccompModeFilter = 2  // SECCOMP_MODE_FILTER, for PR_SET_SECCOMP
)

// stepFilter is the assembled program, or why there is none.
type stepFilter struct {
	prog []syscall.SockFilter
	hex  string // prog for braid-nsinit's s operation
}

// newStepFilter assembles the filter of every step, and checks that the
// kernel has seccomp filters.
func newStepFilter() (*stepFilter, error) {
	if !seccomp.Supported() {
		return nil, fmt.Errorf("the kernel has no seccomp filters")
	}
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	var names []string
	for _, n := range deniedSyscalls {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{{
			Action: seccomp.ActionErrno,
			Names:  names,
			NamesWithCondtions: []seccomp.NameWithConditions{{
				Name: "ptrace",
				Conditions: seccomp.ArgumentConditions{
					{Argument: 0, Operation: seccomp.NotEqual, Value: ptraceTraceme},
					{Argument: 0, Operation: seccomp.NotEqual, Value: ptraceDetach},
				},
			}},
		}},
	}
	insts, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	prog := nativeOnly(uint32(info.ID))
	for _, in := range insts {
		raw, err := in.Assemble()
		if err != nil {
			return nil, fmt.Errorf("seccomp: %w", err)
		}
		prog = append(prog, syscall.SockFilter{Code: raw.Op, Jt: raw.Jt, Jf: raw.Jf, K: raw.K})
	}
	return &stepFilter{prog: prog, hex: encodeFilter(prog)}, nil
}

// nativeOnly is the head of the program: a system call of another
// architecture (int 0x80 from an x86-64 process, or a 32-bit program) fails
// with ENOSYS, since the library's filter would let it through unchecked
// and a list of denials is only as good as its coverage.
func nativeOnly(native uint32) []syscall.SockFilter {
	const (
		ldArch = syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS
		jeq    = syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K
		ret    = syscall.BPF_RET | syscall.BPF_K
		errno  = 0x00050000 // SECCOMP_RET_ERRNO
	)
	return []syscall.SockFilter{
		{Code: ldArch, K: 4}, // seccomp_data.arch
		{Code: jeq, Jt: 1, K: native},
		{Code: ret, K: errno | uint32(syscall.ENOSYS)},
	}
}

// filterBytes is prog as the kernel reads it (struct sock_filter: code in
// 2 bytes, jt, jf, k in 4; little-endian, as on every architecture braid
// builds for).
func filterBytes(prog []syscall.SockFilter) []byte {
	buf := make([]byte, 0, 8*len(prog))
	for _, f := range prog {
		buf = binary.LittleEndian.AppendUint16(buf, f.Code)
		buf = append(buf, f.Jt, f.Jf)
		buf = binary.LittleEndian.AppendUint32(buf, f.K)
	}
	return buf
}

// encodeFilter writes prog as braid-nsinit reads it: filterBytes in hex.
func encodeFilter(prog []syscall.SockFilter) string {
	return hex.EncodeToString(filterBytes(prog))
}

// install sets no_new_privs and loads the filter on the calling thread
// (locked to its goroutine, which must let it end): both are inherited by
// every process it forks afterwards, and neither can be undone.
func (f *stepFilter) install() error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("no_new_privs: %w", e)
	}
	fprog := syscall.SockFprog{Len: uint16(len(f.prog)), Filter: &f.prog[0]}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_SECCOMP, seccompModeFilter, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("load the seccomp filter: %w", e)
	}
	return nil
}
