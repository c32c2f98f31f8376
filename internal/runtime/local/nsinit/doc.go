// Command braid-nsinit builds a step's root view and then becomes the step.
//
// braid, when it is not root, starts it as the first process of new user,
// mount and PID namespaces (the caller's uid and gid mapped to 0), with the
// step's environment, standard files and process group already set. Its
// arguments are a list of operations, run in order, then "--" and the
// step's argv, which it execs (argv[0] is an absolute path inside the
// view):
//
//	o LOWER UPPER WORK DST   mount an overlay (userxattr) at DST
//	O LOWER UPPER WORK DST   the same for a host directory, which may have
//	                         gone (DST then stays empty) or got a mount
//	                         since braid listed it (then it is bound
//	                         read-only)
//	b FLAGS SRC DST          bind SRC at DST; FLAGS holds r (recursive),
//	                         o (read-only, with r its submounts too),
//	                         ? (skip a SRC it cannot see) and m (a mask:
//	                         skip a DST that is missing), or is "-"; DST
//	                         is made (a directory, or an empty file for a
//	                         file) when missing, unless m
//	e DST                    cover the directory DST, if any, with an
//	                         empty read-only tmpfs (a mask)
//	s PROG                   set no_new_privs and load the seccomp program
//	                         PROG (hex, 8 bytes an instruction: code, jt,
//	                         jf, k, little-endian); the last operation
//	                         before the exec, since it refuses mounts
//	t DST                    mount a small empty tmpfs at DST
//	T DST                    mount an empty tmpfs at DST (a view's skeleton)
//	d DIR                    make the directory DIR and its parents
//	l TARGET PATH            make a symbolic link
//	p DST                    mount a proc of its own PID namespace at DST
//	c ROOT DIR               chroot into ROOT, then change to DIR
//	x                        exit 0 (a probe)
//
// File descriptor 3, when open, is the error channel: it is closed on exec
// when all went well, and receives the reason before exit status 1
// otherwise. The package must stay tiny: every step pays its start-up, so
// it imports only os, runtime, syscall and unsafe. braid's own package
// internal/runtime/local writes the operations (userns.go).
package main
