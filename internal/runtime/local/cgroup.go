package local

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	apiv1 "k8s.io/api/core/v1"
)

// MsgOOMKilled is the message of a step killed for exceeding its memory
// limit, as Argo words a container's OOMKilled termination.
const MsgOOMKilled = "OOMKilled (exit code 137)"

// cpuPeriod is the CFS period of a cpu limit, in microseconds.
const cpuPeriod = 100000

// cgroupRoot is where the cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupParent is the cgroup, under each hierarchy's root, that holds
// braid's cgroups: <hierarchy>/braid/<data directory key>/<instance>/<step>
// (see cgroupKey and newInstance).
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

// cgroups is where per-step cgroups are made, detected once at New. Every
// step gets a cgroup in the tracking hierarchy (cgrouptrack.go), in which
// all its processes are killed when it ends; a step with limits also gets
// cgroups that enforce them.
type cgroups struct {
	log *slog.Logger
	// key names the data directory (cgroupKey), instance this Runtime
	// (newInstance): each hierarchy's parent is braid/<key>/<instance>.
	key, instance string

	// v2 is the parent in the unified hierarchy when it has the memory
	// and cpu controllers; "" otherwise.
	v2 string
	// memory and cpu are the v1 hierarchies' parents, when v2 is "".
	memory, cpu string
	// memSelf and cpuSelf are the v1 cgroups of this process, where a
	// thread goes back after starting a step.
	memSelf, cpuSelf string
	// limitsErr says why limits cannot be enforced; nil when they can.
	limitsErr error

	// kind is the tracking hierarchy: trackUnified, trackFreezer or
	// trackPids; track is its parent.
	kind, track string
	// trackSelf is, on v1, this process's tasks file in the tracking
	// hierarchy (open), where a thread goes back after a fork; -1 on v2.
	trackSelf int

	pool cgroupPool
}

// detectCgroups finds the cgroup hierarchies under root and makes this
// Runtime's parents in them, for the data directory named key. kind
// forces a tracking hierarchy ("": the best one here). It fails when no
// hierarchy can track a step's processes; limits may still be unavailable
// (limitsErr).
func detectCgroups(root, key, kind string) (*cgroups, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("cgroups need root")
	}
	self, err := selfCgroups()
	if err != nil {
		return nil, err
	}
	instance, err := newInstance()
	if err != nil {
		return nil, err
	}
	cg := &cgroups{log: slog.New(slog.DiscardHandler), key: key, instance: instance, trackSelf: -1}
	unified := unifiedMount(root)
	cg.limitsErr = cg.detectLimits(root, unified, self)
	if err := cg.detectTracking(root, unified, self, kind); err != nil {
		cg.removeParents()
		return nil, err
	}
	return cg, nil
}

// unifiedMount is where the unified (v2) hierarchy is mounted: root itself
// (v2 only), root/unified (hybrid), or "" (v1 only).
func unifiedMount(root string) string {
	for _, dir := range []string{root, filepath.Join(root, "unified")} {
		if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err == nil {
			return dir
		}
	}
	return ""
}

// detectLimits finds where limits are enforced: the unified hierarchy when
// it has the memory and cpu controllers, or else the v1 memory and cpu
// hierarchies; and makes the parents there.
func (cg *cgroups) detectLimits(root, unified string, self map[string]string) error {
	if unified != "" {
		ctl, err := os.ReadFile(filepath.Join(unified, "cgroup.controllers"))
		if err == nil && hasFields(string(ctl), "memory", "cpu") {
			parent, err := cg.makeParent(unified, "+memory +cpu")
			if err != nil {
				return err
			}
			cg.v2 = parent
			return nil
		}
	}
	for _, h := range []struct {
		name       string
		parent, me *string
	}{{"memory", &cg.memory, &cg.memSelf}, {"cpu", &cg.cpu, &cg.cpuSelf}} {
		mount := filepath.Join(root, h.name)
		rel, ok := self[h.name]
		if !ok {
			return fmt.Errorf("no v1 %s hierarchy", h.name)
		}
		if _, err := os.Stat(filepath.Join(mount, "tasks")); err != nil {
			return fmt.Errorf("no v1 %s hierarchy: %w", h.name, err)
		}
		parent, err := cg.makeParent(mount, "")
		if err != nil {
			return err
		}
		*h.parent, *h.me = parent, filepath.Join(mount, rel)
	}
	return nil
}

// makeParent makes braid/<key>/<instance> in the hierarchy mounted at
// mount; on v2, controllers are enabled in each level's subtree.
func (cg *cgroups) makeParent(mount, controllers string) (string, error) {
	var err error
	for try := 0; try < 3; try++ {
		var dir string
		if dir, err = cg.mkParent(mount, controllers); !errors.Is(err, os.ErrNotExist) {
			return dir, err
		}
		// Another Runtime's Close removed the data directory's cgroup
		// between two mkdirs: make it again.
	}
	return "", err
}

func (cg *cgroups) mkParent(mount, controllers string) (string, error) {
	dir := mount
	for _, name := range []string{cgroupParent, cg.key, cg.instance} {
		if controllers != "" {
			if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), controllers); err != nil {
				return "", err
			}
		}
		dir = filepath.Join(dir, name)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("cgroup %s: %w", dir, err)
		}
	}
	if controllers != "" {
		if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), controllers); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// cgroupKey names a data directory's cgroups: a short hash of its path, so
// that braids on different data directories never touch each other's.
func cgroupKey(dataDir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(dataDir)))
	return hex.EncodeToString(sum[:6])
}

var instanceSeq atomic.Int64

// newInstance names the cgroups of one Runtime: <pid>-<start time>-<n>,
// the process's ID and start time (in clock ticks after boot, so that a
// reused PID does not pass for it) and a count of this process's
// Runtimes. reapOrphans kills the instances whose process is gone.
func newInstance() (string, error) {
	start, err := startTime(os.Getpid())
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d-%d-%d", os.Getpid(), start, instanceSeq.Add(1)), nil
}

// startTime reads when process pid started, in clock ticks after boot.
func startTime(pid int) (uint64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("the start time of process %d: %w", pid, err)
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')') // the command may hold spaces
	if i < 0 || len(strings.Fields(s[i+1:])) < 20 {
		return 0, fmt.Errorf("the start time of process %d: bad /proc stat %q", pid, s)
	}
	return strconv.ParseUint(strings.Fields(s[i+1:])[19], 10, 64) // field 22 of stat
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

// stepCgroup is the cgroups of one step: its tracking cgroup, and the v1
// memory and cpu cgroups of its limits.
type stepCgroup struct {
	cg    *cgroups
	track *trackCgroup
	dirs  []limitDir // v1: the memory and cpu cgroups made for the limits
	mem   string     // the directory holding the memory controller's files, or ""
}

// limitDir is a v1 cgroup of a step's limits, and this process's cgroup in
// the same hierarchy.
type limitDir struct{ dir, self string }

// newStep gives a step its cgroups: a tracking cgroup from the pool, and
// cgroups of its own, named after its run, for its limits (on v2, one
// that also tracks it). Limits are ignored where they are not available.
func (cg *cgroups) newStep(runID string, l limits) (*stepCgroup, error) {
	if l.none() || cg.limitsErr != nil {
		t, err := cg.take()
		if err != nil {
			return nil, err
		}
		return &stepCgroup{cg: cg, track: t}, nil
	}
	if cg.v2 != "" {
		return cg.newLimitedV2(cgroupName(runID), l)
	}
	t, err := cg.take()
	if err != nil {
		return nil, err
	}
	sc := &stepCgroup{cg: cg, track: t}
	if err := sc.limitV1(cgroupName(runID), l); err != nil {
		_ = sc.release()
		return nil, err
	}
	return sc, nil
}

// newLimitedV2 makes a v2 cgroup with the step's limits, which also tracks
// it: it is not pooled, since its OOM count must start at zero.
func (cg *cgroups) newLimitedV2(name string, l limits) (*stepCgroup, error) {
	dir := filepath.Join(cg.v2, name)
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
	var t *trackCgroup
	if err == nil {
		t, err = cg.openTrack(dir, false)
	}
	if err != nil {
		_ = removeCgroupDir(cg.kind, dir)
		return nil, fmt.Errorf("the step's cgroup: %w", err)
	}
	sc := &stepCgroup{cg: cg, track: t}
	if l.memory > 0 {
		sc.mem = dir
	}
	return sc, nil
}

// limitV1 makes the step's v1 memory and cpu cgroups for its limits.
func (sc *stepCgroup) limitV1(name string, l limits) error {
	if l.memory > 0 {
		dir := filepath.Join(sc.cg.memory, name)
		if err := mkCgroup(dir); err != nil {
			return err
		}
		sc.dirs, sc.mem = append(sc.dirs, limitDir{dir, sc.cg.memSelf}), dir
		if err := setMemoryV1(dir, l.memory); err != nil {
			return err
		}
	}
	if l.cpu > 0 {
		dir := filepath.Join(sc.cg.cpu, name)
		if err := mkCgroup(dir); err != nil {
			return err
		}
		sc.dirs = append(sc.dirs, limitDir{dir, sc.cg.cpuSelf})
		err := writeFile(filepath.Join(dir, "cpu.cfs_period_us"), strconv.Itoa(cpuPeriod))
		if err == nil {
			err = writeFile(filepath.Join(dir, "cpu.cfs_quota_us"), strconv.FormatInt(l.cpu, 10))
		}
		if err != nil {
			return fmt.Errorf("the step's cgroup: %w", err)
		}
	}
	return nil
}

// setMemoryV1 sets the memory limit, and keeps the step off swap (as a
// Kubernetes node does), so that exceeding the limit kills it.
func setMemoryV1(dir string, bytes int64) error {
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

// joins reports whether a thread must join the step's cgroups to fork it
// there (v1); on v2 it is cloned into its cgroup.
func (sc *stepCgroup) joins() bool {
	return sc != nil && (len(sc.dirs) > 0 || sc.cg.kind != trackUnified)
}

// join moves the calling (locked) thread into the step's v1 cgroups, so
// that a process it forks starts in them. "0" is the writing thread: the
// kernel then skips the global lock that moving another task takes.
func (sc *stepCgroup) join() error {
	if !sc.joins() {
		return nil
	}
	if sc.cg.kind != trackUnified {
		if err := writeFD(sc.track.fd, "0"); err != nil {
			return fmt.Errorf("join the step's cgroup %s: %w", sc.track.dir, err)
		}
	}
	for _, d := range sc.dirs {
		if err := writeFile(filepath.Join(d.dir, "tasks"), "0"); err != nil {
			return fmt.Errorf("join the step's cgroup: %w", err)
		}
	}
	return nil
}

// leave moves the calling thread back to this process's v1 cgroups.
func (sc *stepCgroup) leave() error {
	if !sc.joins() {
		return nil
	}
	var errs []error
	if sc.cg.kind != trackUnified {
		errs = append(errs, writeFD(sc.cg.trackSelf, "0"))
	}
	for _, d := range sc.dirs {
		errs = append(errs, writeFile(filepath.Join(d.self, "tasks"), "0"))
	}
	return errors.Join(errs...)
}

// apply sets attr to start the process in the step's v2 cgroup.
func (sc *stepCgroup) apply(attr *os.ProcAttr) {
	if sc == nil || sc.cg.kind != trackUnified {
		return
	}
	attr.Sys.UseCgroupFD = true
	attr.Sys.CgroupFD = sc.track.fd
}

// oomKilled reports whether the kernel killed a process of the step for
// exceeding its memory limit.
func (sc *stepCgroup) oomKilled() bool {
	if sc == nil || sc.mem == "" {
		return false
	}
	file := "memory.oom_control"
	if sc.cg.v2 != "" {
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

// killAll kills every process left in the step's cgroup (those that left
// its process group), race-free against forks, and waits briefly for them
// to go: the step's main process has exited.
func (sc *stepCgroup) killAll() error {
	if sc == nil {
		return nil
	}
	return sc.cg.settle(sc.track)
}

// signal sends SIGKILL to every process in the step's cgroup, once and
// race-free against forks, without waiting: the step's grace period ended.
func (sc *stepCgroup) signal() {
	if sc != nil {
		sc.track.killed = true
		_, _ = killOnce(sc.cg.kind, sc.track.dir)
	}
}

// release gives the step's tracking cgroup back to the pool once nothing
// runs in it, and removes the cgroups made for the step.
func (sc *stepCgroup) release() error {
	if sc == nil {
		return nil
	}
	var errs []error
	if sc.track != nil {
		errs = append(errs, sc.cg.put(sc.track))
	}
	for _, d := range sc.dirs {
		errs = append(errs, removeCgroupDir("", d.dir))
	}
	return errors.Join(errs...)
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

// writeFD writes a cgroup control file open as fd.
func writeFD(fd int, value string) error {
	_, err := syscall.Pwrite(fd, []byte(value), 0)
	return err
}

// startInCgroup starts the step's process in its cgroups, without a root
// view: on v2 through CLONE_INTO_CGROUP; on v1 from a thread of its own
// that joins the cgroups, forks, and leaves them, then keeps the thread
// until the process exits, since the process's Pdeathsig follows the
// thread.
func (rt *Runtime) startInCgroup(sc *stepCgroup, argv []string, attr *os.ProcAttr) (*os.Process, <-chan struct{}, error) {
	if !sc.joins() {
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

// initCgroups detects the cgroups, once, at New: it kills what earlier
// braids on the same data directory left (reapOrphans) and starts the pool
// of step cgroups. Where cgroups are not available, it says so once and
// steps run without them.
func (rt *Runtime) initCgroups() {
	cg, err := detectCgroups(cgroupRoot, cgroupKey(rt.cfg.DataDir), "")
	if err != nil {
		rt.log.Warn("steps run without cgroups: resources.limits are ignored, and a process that leaves a step's process group may outlive the step",
			"reason", err.Error())
		return
	}
	cg.log = rt.log
	if cg.limitsErr != nil {
		rt.log.Warn("resources.limits are ignored", "reason", cg.limitsErr.Error())
	}
	if n, err := cg.reapOrphans(); err != nil {
		rt.log.Warn("cannot remove every cgroup an earlier braid left", "err", err)
	} else if n > 0 {
		rt.log.Info("removed the cgroups an earlier braid left on this data directory", "cgroups", n)
	}
	cg.startPool()
	rt.cgroups = cg
}

// newCgroup makes the step's cgroups: nil where cgroups are not available
// (then limits are ignored, as New warned).
func (rt *Runtime) newCgroup(s *step, l limits) (*stepCgroup, error) {
	if rt.cgroups == nil {
		return nil, nil
	}
	return rt.cgroups.newStep(s.id, l)
}

// killCgroup kills what is left in the step's cgroup once its main
// process exited.
func (rt *Runtime) killCgroup(s *step, sc *stepCgroup) {
	if err := sc.killAll(); err != nil {
		rt.log.Warn("processes a step left survive it", "run", s.id, "err", err)
	}
}

// removeCgroup releases the step's cgroups, if any.
func (rt *Runtime) removeCgroup(s *step, sc *stepCgroup) {
	if err := sc.release(); err != nil {
		rt.log.Warn("cannot remove a step's cgroup", "run", s.id, "err", err)
	}
}
