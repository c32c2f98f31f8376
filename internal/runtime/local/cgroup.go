package local

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	apiv1 "k8s.io/api/core/v1"
)

// MsgOOMKilled is the message of a step killed for exceeding its memory
// limit, as Argo words a container's OOMKilled termination.
const MsgOOMKilled = "OOMKilled (exit code 137)"

// cpuPeriod is the CFS period of a cpu limit, in microseconds.
const cpuPeriod = 100000

// cgroupParent is the cgroup, under each hierarchy's root, that holds the
// per-step cgroups.
const cgroupParent = "braid"

// limits are the resource limits of a step's main container; zero means
// none.
type limits struct {
	memory int64 // bytes
	cpu    int64 // microseconds of CPU per cpuPeriod
}

func (l limits) none() bool { return l.memory <= 0 && l.cpu <= 0 }

// limitsOf reads resources.limits.memory and .cpu of the main container.
func limitsOf(c *apiv1.Container) limits {
	var l limits
	if c == nil {
		return l
	}
	if q, ok := c.Resources.Limits[apiv1.ResourceMemory]; ok {
		l.memory = q.Value()
	}
	if q, ok := c.Resources.Limits[apiv1.ResourceCPU]; ok {
		if m := q.MilliValue(); m > 0 {
			l.cpu = max(m*cpuPeriod/1000, 1000) // the kernel's minimum quota is 1 ms
		}
	}
	return l
}

// cgroups is where per-step cgroups are made, detected once at New.
type cgroups struct {
	// v2 is the unified hierarchy's braid parent, when the unified
	// hierarchy has the memory and cpu controllers; "" otherwise.
	v2 string
	// memory and cpu are the v1 hierarchies' braid parents.
	memory, cpu string
	// memSelf and cpuSelf are the v1 cgroups of this process, where a
	// thread goes back after starting a step.
	memSelf, cpuSelf string
}

// detectCgroups finds the cgroup hierarchies and makes the braid parents.
func detectCgroups(root string) (*cgroups, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("cgroups need root")
	}
	for _, unified := range []string{root, filepath.Join(root, "unified")} {
		ctl, err := os.ReadFile(filepath.Join(unified, "cgroup.controllers"))
		if err != nil || !hasFields(string(ctl), "memory", "cpu") {
			continue
		}
		parent := filepath.Join(unified, cgroupParent)
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("cgroup %s: %w", parent, err)
		}
		for _, dir := range []string{unified, parent} {
			if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+memory +cpu"); err != nil {
				return nil, err
			}
		}
		return &cgroups{v2: parent}, nil
	}
	self, err := selfCgroups()
	if err != nil {
		return nil, err
	}
	cg := &cgroups{}
	for _, h := range []struct {
		name       string
		parent, me *string
	}{{"memory", &cg.memory, &cg.memSelf}, {"cpu", &cg.cpu, &cg.cpuSelf}} {
		mount := filepath.Join(root, h.name)
		rel, ok := self[h.name]
		if !ok {
			return nil, fmt.Errorf("no v1 %s hierarchy", h.name)
		}
		if _, err := os.Stat(filepath.Join(mount, "tasks")); err != nil {
			return nil, fmt.Errorf("no v1 %s hierarchy: %w", h.name, err)
		}
		*h.parent = filepath.Join(mount, cgroupParent)
		*h.me = filepath.Join(mount, rel)
		if err := os.Mkdir(*h.parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("cgroup %s: %w", *h.parent, err)
		}
	}
	return cg, nil
}

// selfCgroups maps each v1 controller to this process's cgroup in it.
func selfCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/thread-self/cgroup") // see hostMounts
	if err != nil {
		return nil, fmt.Errorf("this process's cgroups: %w", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c != "" {
				out[c] = parts[2]
			}
		}
	}
	return out, sc.Err()
}

func hasFields(s string, want ...string) bool {
	have := strings.Fields(s)
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// stepCgroup is the cgroup of one step (one directory per v1 hierarchy, or
// one in the unified hierarchy).
type stepCgroup struct {
	cg   *cgroups
	dirs []string // v1: memory (when limited), cpu (when limited); v2: one
	mem  string   // the directory holding the memory controller's files, or ""
	fd   *os.File // v2: the cgroup's directory, for CLONE_INTO_CGROUP
}

// newStep makes the step's cgroup, named after its run, with its limits.
func (cg *cgroups) newStep(runID string, l limits) (*stepCgroup, error) {
	name := cgroupName(runID)
	sc := &stepCgroup{cg: cg}
	if cg.v2 != "" {
		dir := filepath.Join(cg.v2, name)
		sc.dirs, sc.mem = []string{dir}, dir
		if err := mkCgroup(dir); err != nil {
			return nil, err
		}
		var err error
		if l.memory > 0 {
			err = writeFile(filepath.Join(dir, "memory.max"), strconv.FormatInt(l.memory, 10))
			if err == nil {
				err = writeFile(filepath.Join(dir, "memory.swap.max"), "0")
				if errors.Is(err, os.ErrNotExist) {
					err = nil
				}
			}
		}
		if err == nil && l.cpu > 0 {
			err = writeFile(filepath.Join(dir, "cpu.max"), fmt.Sprintf("%d %d", l.cpu, cpuPeriod))
		}
		if err == nil {
			sc.fd, err = os.Open(dir)
		}
		if err != nil {
			sc.remove()
			return nil, fmt.Errorf("the step's cgroup: %w", err)
		}
		return sc, nil
	}
	if l.memory > 0 {
		dir := filepath.Join(cg.memory, name)
		if err := mkCgroup(dir); err != nil {
			return nil, err
		}
		sc.dirs, sc.mem = append(sc.dirs, dir), dir
		if err := sc.setMemoryV1(dir, l.memory); err != nil {
			sc.remove()
			return nil, err
		}
	}
	if l.cpu > 0 {
		dir := filepath.Join(cg.cpu, name)
		if err := mkCgroup(dir); err != nil {
			sc.remove()
			return nil, err
		}
		sc.dirs = append(sc.dirs, dir)
		err := writeFile(filepath.Join(dir, "cpu.cfs_period_us"), strconv.Itoa(cpuPeriod))
		if err == nil {
			err = writeFile(filepath.Join(dir, "cpu.cfs_quota_us"), strconv.FormatInt(l.cpu, 10))
		}
		if err != nil {
			sc.remove()
			return nil, fmt.Errorf("the step's cgroup: %w", err)
		}
	}
	return sc, nil
}

// setMemoryV1 sets the memory limit, and keeps the step off swap (as a
// Kubernetes node does), so that exceeding the limit kills it.
func (sc *stepCgroup) setMemoryV1(dir string, bytes int64) error {
	v := strconv.FormatInt(bytes, 10)
	if err := writeFile(filepath.Join(dir, "memory.limit_in_bytes"), v); err != nil {
		return fmt.Errorf("the step's cgroup: %w", err)
	}
	if err := writeFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), v); err != nil {
		_ = writeFile(filepath.Join(dir, "memory.swappiness"), "0") // no swap accounting
	}
	return nil
}

func mkCgroup(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("the step's cgroup: %w", err)
	}
	return nil
}

// cgroupName is a run ID made safe as a directory name.
func cgroupName(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || (c == '.' && i > 0) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	if b.Len() == 0 || b.Len() > 200 {
		sum := sha256.Sum256([]byte(id))
		return hex.EncodeToString(sum[:])
	}
	return b.String()
}

// join moves the calling (locked) thread into the step's v1 cgroups, so
// that a process it forks starts in them. Nothing to do on v2.
func (sc *stepCgroup) join() error {
	if sc == nil || sc.fd != nil {
		return nil
	}
	tid := strconv.Itoa(syscall.Gettid())
	for _, dir := range sc.dirs {
		if err := writeFile(filepath.Join(dir, "tasks"), tid); err != nil {
			return fmt.Errorf("join the step's cgroup: %w", err)
		}
	}
	return nil
}

// leave moves the calling thread back to this process's v1 cgroups.
func (sc *stepCgroup) leave() error {
	if sc == nil || sc.fd != nil {
		return nil
	}
	tid := strconv.Itoa(syscall.Gettid())
	var errs []error
	for _, self := range []string{sc.cg.memSelf, sc.cg.cpuSelf} {
		errs = append(errs, writeFile(filepath.Join(self, "tasks"), tid))
	}
	return errors.Join(errs...)
}

// apply sets attr to start the process in the step's v2 cgroup.
func (sc *stepCgroup) apply(attr *os.ProcAttr) {
	if sc == nil || sc.fd == nil {
		return
	}
	attr.Sys.UseCgroupFD = true
	attr.Sys.CgroupFD = int(sc.fd.Fd())
}

// oomKilled reports whether the kernel killed a process of the step for
// exceeding its memory limit.
func (sc *stepCgroup) oomKilled() bool {
	if sc == nil || sc.mem == "" {
		return false
	}
	file := "memory.oom_control"
	if sc.fd != nil {
		file = "memory.events"
	}
	data, err := os.ReadFile(filepath.Join(sc.mem, file))
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n > 0
		}
	}
	return false
}

// remove kills what is left in the step's cgroups (a process that left
// the step's group) and removes them, waiting briefly for the dying.
func (sc *stepCgroup) remove() error {
	if sc == nil {
		return nil
	}
	if sc.fd != nil {
		sc.fd.Close()
	}
	var errs []error
	for _, dir := range sc.dirs {
		var err error
		for try := 0; try < 50; try++ {
			killAll(dir)
			if err = syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) || !errors.Is(err, syscall.EBUSY) {
				break
			}
			time.Sleep(time.Duration(try+1) * time.Millisecond)
		}
		if err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("remove the step's cgroup %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

func killAll(dir string) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return
	}
	for f := range strings.FieldsSeq(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// writeFile writes a cgroup control file (which exists: no O_CREATE).
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// startLimited starts the step's process in its cgroup, without a root
// view: on v2 through CLONE_INTO_CGROUP; on v1 from a thread of its own
// that joins the cgroup, forks, and leaves it, then keeps the thread until
// the process exits, since the process's Pdeathsig follows the thread.
func (rt *Runtime) startLimited(sc *stepCgroup, argv []string, attr *os.ProcAttr) (*os.Process, <-chan struct{}, error) {
	if sc.fd != nil {
		sc.apply(attr)
		proc, err := os.StartProcess(argv[0], argv, attr)
		return proc, nil, err
	}
	return rt.startOnThread(nil, nil, sc, argv, attr)
}

// startOnThread starts the process from a goroutine locked to a thread of
// its own: prepare (may be nil) runs on the thread first (a root view's
// mounts), then the thread forks the process inside sc, and forked (may be
// nil) runs on the thread with its PID (a failure kills the process). The
// thread is kept
// until the process exits, since the process's Pdeathsig follows it;
// exited is closed then, with the process left to reap.
func (rt *Runtime) startOnThread(prepare func() error, forked func(pid int) error, sc *stepCgroup, argv []string, attr *os.ProcAttr) (*os.Process, <-chan struct{}, error) {
	type result struct {
		proc *os.Process
		err  error
	}
	started := make(chan result, 1)
	exited := make(chan struct{})
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if prepare != nil {
			if err := prepare(); err != nil {
				started <- result{err: err}
				return
			}
		}
		proc, err := rt.forkIn(sc, argv, attr)
		if err == nil && forked != nil {
			if err = forked(proc.Pid); err != nil {
				_ = proc.Kill()
				_, _ = proc.Wait()
				proc = nil
			}
		}
		started <- result{proc: proc, err: err}
		if err != nil {
			return
		}
		waitExited(proc.Pid)
		close(exited)
	}()
	r := <-started
	return r.proc, exited, r.err
}

// forkIn starts the process from the calling locked thread inside sc (nil:
// as it is).
func (rt *Runtime) forkIn(sc *stepCgroup, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	sc.apply(attr)
	if err := sc.join(); err != nil {
		_ = sc.leave()
		return nil, err
	}
	proc, err := os.StartProcess(argv[0], argv, attr)
	if lerr := sc.leave(); lerr != nil {
		rt.log.Warn("a thread stays in a step's cgroup", "err", lerr)
	}
	return proc, err
}

// newCgroup makes the cgroup that enforces the step's limits: nil when it
// has none, or where cgroups are not available (the limits are then
// ignored, with one warning).
func (rt *Runtime) newCgroup(s *step, l limits) (*stepCgroup, error) {
	if l.none() {
		return nil, nil
	}
	if rt.cgroups == nil {
		rt.cgroupWarned.Do(func() {
			rt.log.Warn("resources.limits are ignored: cgroups are not available", "reason", fmt.Sprint(rt.cgroupErr))
		})
		return nil, nil
	}
	return rt.cgroups.newStep(s.id, l)
}

// removeCgroup removes the step's cgroup, if any.
func (rt *Runtime) removeCgroup(s *step, sc *stepCgroup) {
	if err := sc.remove(); err != nil {
		rt.log.Warn("cannot remove a step's cgroup", "run", s.id, "err", err)
	}
}
