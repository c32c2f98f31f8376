// Package local runs steps as host processes: the embedded deployment's
// runtime.Runtime.
//
// # What a step is
//
// A container or script template runs as one process in its own process
// group: the container's command and args (or, for a script, the command,
// the args and the staged source file), resolved through the image table of
// internal/executor, with its workingDir as the current directory and an
// environment of PATH, HOME, the container's env and the run's ARGO_*
// variables: never braid's own environment, which holds secrets
// (environ.go). Stdin is /dev/null; stdout
// and stderr go straight to the step's log file, so a step that prints
// gigabytes costs braid no memory. When the result is wanted, stdout goes
// through a pipe instead, copied to the log and into a bounded tail
// (executor.Tail). A data template runs in braid itself, with no process
// (data.go: executor.RunData lists its artifactPaths and applies its
// transformations). Other template types end Error with a message naming
// the type.
//
// Input artifacts are placed before the process starts
// (executor.LoadInputs): raw ones inline, in Start; any other location
// through Config.Artifacts in a goroutine of the step's own, so that a
// download never holds up Start or other steps. The step is Pending while
// it loads; its deadline covers the loading, and Kill or Close cancels it.
// A missing, corrupt or unsafe artifact ends the step Error before it runs.
//
// When the process exits, every other process of its group is killed (as a
// container's end kills what it started); the exit code, the result and the
// output parameters (valueFrom.path, read as the step saw them: links
// resolve inside its root, never into the data directory but its own
// directory, artifacts.go) are collected; the output artifacts (and, with
// archiveLogs, main.log) are packed beside the step's directory, in its
// workflow's, which no step sees, and saved, whether the step succeeded or
// not (executor.SaveOutputs, into Run.Artifacts' repository); and the final
// event is queued. A failure to save ends a successful step Error, and is
// added to the message of one that failed already. A deadline (the step's
// ActiveDeadline counted from its start, or the absolute Deadline, whichever
// comes first) or Kill sends SIGTERM to the group, then SIGKILL after the
// grace period.
//
// # Isolation
//
// With Config.Isolation auto (braid's default) or required, and braid
// running as root, every step gets a root view of its own (sandbox.go): a
// goroutine locked to a new thread unshares the thread's mount namespace,
// mounts an overlay whose lower layer is the host's root and whose upper
// layer is <pod>/upper at <pod>/root, binds the host's /dev and /run
// (read-write), /sys (read-only) and its other file systems (read-only),
// the private <pod>/tmp at /tmp, and, over an empty data directory, the
// pod directory itself (read-write) and the image shims (read-only); it
// then forks the step from that thread, chrooted into the view, and keeps
// the thread until the step exits. What a step writes anywhere lands in its
// upper layer or its /tmp, never on the host; steps side by side do not
// see each other's files, nor the data directory's. A step whose container
// sets no workingDir runs in "/" of its view, as in an image. Input
// artifacts are placed in the upper layer, and outputs are read from it
// first, then from the host (executor.Paths), as the view shows them. Without a view (none,
// or auto where it is not possible, with one warning), a step that reads
// an output under /tmp still gets a private /tmp.
//
// Each step is contained as OCI runtimes contain a container (contain.go,
// seccomp.go, enter.go). It runs as root of a user namespace whose ids
// 0-65535 are an unprivileged range of the host's (braid's entries in
// /etc/subuid and /etc/subgid, else 2147352576-2147418111): root in a step
// is nobody outside, with no capability in the host's namespace, and the
// view's mount and PID namespaces stay the host's user namespace's, so it
// can neither mount nor unmount. Steps share that user namespace (made
// once): braid vforks a 1.5 KB trampoline, as root in the view's mount
// namespace, which mounts and masks the step's /proc, joins the user
// namespace, loads the seccomp filter and execs the step, since Go forks
// rather than vforks into a new one, a copy of braid (elsewhere than
// amd64, each step is forked into one of its own, the forking thread
// holding the filter). The overlay's lower layer is idmapped into that
// range, so that the step still owns, and changes in its upper layer, the
// files of its view; braid shifts what it staged there before the fork,
// and reads, as root, what the step wrote. The filter, under no_new_privs,
// is modelled on moby's default profile: open_by_handle_at, mounts,
// namespaces, modules, kexec, keys, BPF, perf, the clock and the like fail
// with EPERM, and other architectures' system calls with ENOSYS. /proc and
// /sys are masked as OCI runtimes mask them (kcore, keys, timer_list,
// acpi, firmware, ... hidden; /proc/sys, /proc/sysrq-trigger and others
// read-only). The step is the init of a PID namespace of its own, with its
// own /proc. What the kernel refuses of this is named in one warning at
// New; with Isolation required, New fails instead.
//
// When braid is not root, a view is built in a user namespace of the
// step's own (userns.go): the step starts as braid-nsinit (./nsinit, built
// next to braid by `make build`), cloned into new user, mount and PID
// namespaces with braid's user mapped to root, which mounts the view (with
// the same masks), sets no_new_privs and the same seccomp filter (braid
// passes it the assembled program) and execs the step. The kernel locks
// the host's mounts in such a namespace, so that view is an overlay of a
// tmpfs outline of "/" with the host's
// directories bound read-only on top; a host directory that gets an input
// artifact or the working directory is an overlay of its own. Nothing
// reaches the host either way; limits are ignored there (cgroups are
// root's, one warning). Without braid-nsinit or user namespaces, auto falls
// back to plain processes and required refuses to run.
//
// # Limits
//
// Where braid is root and the kernel has cgroups, every step runs in a
// cgroup of its own from its first instruction (cgroup.go,
// cgrouptrack.go), so that no process outlives its step, whatever process
// group or session it moved to: when the main process exits, and when the
// grace period of a kill ends, everything left in the cgroup is killed,
// race-free against forks, before the final event. The hierarchy is
// detected once at New: the unified one where it can kill a cgroup whole
// (cgroup.kill, Linux 5.14; hybrid hosts mount it at /sys/fs/cgroup/unified),
// the step cloned into its cgroup; else the v1 freezer (freeze, SIGKILL
// what is listed, thaw, until empty) or, where it is unusable, v1 pids
// (pids.max 0, SIGKILL what is listed, until empty), the step forked from
// a thread that joins the cgroup for the fork only. Step cgroups come from
// a small pool made ahead and are reused once empty, so that a step costs
// no mkdir or rmdir in cgroupfs (a v2 cgroup that had to be killed is
// removed instead: the kernel kills what is later cloned into it).
//
// The cgroups live under <hierarchy>/braid/<key>/<instance>: key is a hash
// of the data directory, instance names the Runtime and its process (PID
// and start time). At New, the instances of processes that are gone, on the
// same data directory (a braid killed with -9, whose steps' leftovers may
// still run), are killed and removed (reapOrphans); live braids and other
// data directories are left alone.
//
// A main container with resources.limits.memory or .cpu also runs in
// cgroups that enforce them, made before the process starts and removed
// after its final event, named after its run: in the v1 memory and cpu
// hierarchies (memory.limit_in_bytes, and memsw to keep it off swap;
// cpu.cfs_quota_us per 100 ms), or, when the unified hierarchy has both
// controllers, one v2 cgroup (memory.max, cpu.max) that also holds the
// step. A step killed by SIGKILL whose cgroup counted an OOM kill ends
// Failed with MsgOOMKilled. Where cgroups are not available (braid is not
// root, or no hierarchy can hold a step), New warns once and steps run
// without them: limits are ignored, and a process that leaves a step's
// process group outlives the step unless the step has a PID namespace.
//
// # Files
//
//	<DataDir>/runs/<namespace>/<workflow>/<pod>/main.log     combined stdout and stderr
//	<DataDir>/runs/<namespace>/<workflow>/<pod>/script       a script template's source
//	<DataDir>/runs/<namespace>/<workflow>/<pod>/result.json  a final event too big for the index
//	<DataDir>/runs/.index                                    the journal of runs (index.go)
//	<DataDir>/shims/<image>-<hash>/<command>                 the image's aliases, appended to PATH
//
//	<DataDir>/runs/<namespace>/<workflow>/<pod>/{upper,work,root,tmp}  the step's root view,
//	                                                         removed once its outputs are saved
//	<DataDir>/rootfs/<algo>-<hex>/rootfs                     an image's unpacked root (image.go)
//
// A step's main.log outlives the step and the Runtime: LogFiles (logs.go)
// opens it by namespace, workflow and pod name, with no Runtime, for the
// API server.
//
// With a root view, when the images directory holds the step's image, the
// overlay's lower layer is that image's root instead of the host's
// (image.go).
//
// Without a root view, the pod directory is also the step's working
// directory when its container sets none, so that relative paths of
// parallel steps do not collide. The index records when each run starts (its directory) and ends
// (its final event), so that Status answers after braid restarts
// on the same DataDir; a run that started and never ended was lost (braid
// stopped while it ran) and is reported Error. Nothing is fsynced: the
// files are as durable as the page cache.
//
// # Cost of a step
//
// Beyond fork and exec, a step costs a handful of system calls. Two change
// a directory, and on a busy ext4 each can burn 0.1-0.4 ms of CPU: the pod
// directory and the log file, both needed before the exec. The rest are
// cheap: a PATH lookup answered from a cache (one stat), two appends to the
// index (the final one after the event is queued, off the path to the next
// step), waitid, kill. A step costs one goroutine that waits for it (two
// when its stdout is captured); deadlines are timers, not goroutines.
// Events go straight into a buffered channel, or, when the reader lags,
// into an unbounded queue drained by one goroutine, so the runtime never
// blocks on a slow reader.
//
// # Imports
//
// The package imports runtime, executor, image (image roots),
// artifact (the Drivers it is given) and the API types.
//
// # Must not import
//
// The engine, the controller, a store, the server, the CLI or the wiring
// (internal/app): the controller drives it through runtime.Runtime.
package local
