package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A step's tracking cgroup holds every process of the step, whatever
// process group or session it moved to, so that none outlives the step:
// when the main process exits, and when the grace period of a kill ends,
// everything in the cgroup is killed. Three hierarchies can do it, tried in
// this order:
const (
	// trackUnified: the unified (v2) hierarchy, Linux 5.14 or later. The
	// step is cloned into its cgroup (CLONE_INTO_CGROUP); writing
	// cgroup.kill kills the cgroup whole, forks in flight included.
	trackUnified = "unified"
	// trackFreezer: the v1 freezer. The forking thread joins the cgroup for
	// the fork; to kill it, it is frozen (no task runs, none forks), every
	// task listed gets SIGKILL, and it is thawed: they die.
	trackFreezer = "freezer"
	// trackPids: the v1 pids controller, where the freezer is unusable.
	// Its pids.max is set to 0 (no fork succeeds) while the listed tasks
	// are killed, until none is left.
	trackPids = "pids"
)

// killWait bounds the wait for the processes of a killed cgroup to go.
const killWait = 2 * time.Second

// The pool: a step takes an empty tracking cgroup made ahead, and gives it
// back once nothing runs in it, so that a step costs no mkdir or rmdir in
// cgroupfs (each takes the kernel's global cgroup_mutex) and a chain of
// steps reuses one cgroup. A goroutine makes new ones, off the path of a
// step, when fewer than poolLow are free, up to poolFill; beyond poolMax
// free ones, a returned cgroup is removed.
const (
	poolFill = 4
	poolLow  = 2
	poolMax  = 32
)

// trackCgroup is a step's cgroup in the tracking hierarchy.
type trackCgroup struct {
	dir string
	// fd is, on v2, the cgroup's directory (for CLONE_INTO_CGROUP); on v1,
	// its tasks file, where the forking thread joins it.
	fd int
	// events is, on v2, the cgroup's cgroup.events, read to see whether it
	// is empty; -1 on v1.
	events int
	// pooled: back to the pool once empty; otherwise (a v2 cgroup with
	// limits) removed after its step.
	pooled bool
	// killed: a kill began in it (v1: pids.max may be 0, the freezer not
	// thawed; v2: it is spent, see put); clean: nothing runs in it since
	// its step's end.
	killed, clean bool
}

// cgroupPool holds the empty tracking cgroups made ahead.
type cgroupPool struct {
	mu     sync.Mutex
	free   []*trackCgroup
	made   int // names: pool~<made>
	closed bool
	kick   chan struct{} // asks the filler to make more
	done   chan struct{} // closed by close
	filler sync.WaitGroup
}

// detectTracking picks the tracking hierarchy: kind, or the first of
// trackUnified, trackFreezer and trackPids that works here.
func (cg *cgroups) detectTracking(root, unified string, self map[string]string, kind string) error {
	kinds := []string{trackUnified, trackFreezer, trackPids}
	if kind != "" {
		kinds = []string{kind}
	}
	var errs []error
	for _, k := range kinds {
		err := cg.useTracking(root, unified, self, k)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("no cgroup hierarchy can hold a step's processes: %w", errors.Join(errs...))
}

// useTracking makes this Runtime's parent in the tracking hierarchy kind.
func (cg *cgroups) useTracking(root, unified string, self map[string]string, kind string) error {
	if kind == trackUnified {
		if unified == "" {
			return errors.New("no unified hierarchy")
		}
		parent := cg.v2
		if parent == "" {
			var err error
			if parent, err = cg.makeParent(unified, ""); err != nil {
				return err
			}
		}
		if _, err := os.Stat(filepath.Join(parent, "cgroup.kill")); err != nil {
			removeParent(parent)
			return fmt.Errorf("the unified hierarchy cannot kill a cgroup whole (Linux 5.14): %w", err)
		}
		cg.kind, cg.track = kind, parent
		return nil
	}
	if cg.v2 != "" {
		return fmt.Errorf("v1 %s: steps with limits live in the unified hierarchy", kind)
	}
	mount := filepath.Join(root, kind)
	rel, ok := self[kind]
	if !ok {
		return fmt.Errorf("no v1 %s hierarchy", kind)
	}
	parent, err := cg.makeParent(mount, "")
	if err != nil {
		return err
	}
	control := map[string]string{trackFreezer: "freezer.state", trackPids: "pids.max"}[kind]
	if _, err := os.Stat(filepath.Join(parent, control)); err != nil {
		removeParent(parent)
		return fmt.Errorf("v1 %s: %w", kind, err)
	}
	fd, err := syscall.Open(filepath.Join(mount, rel, "tasks"), syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		removeParent(parent)
		return fmt.Errorf("v1 %s: this process's cgroup: %w", kind, err)
	}
	cg.kind, cg.track, cg.trackSelf = kind, parent, fd
	return nil
}

// openTrack opens the files of the tracking cgroup dir that a step uses.
func (cg *cgroups) openTrack(dir string, pooled bool) (*trackCgroup, error) {
	t := &trackCgroup{dir: dir, fd: -1, events: -1, pooled: pooled}
	var err error
	if cg.kind == trackUnified {
		t.fd, err = syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err == nil {
			t.events, err = syscall.Open(filepath.Join(dir, "cgroup.events"), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		}
	} else {
		t.fd, err = syscall.Open(filepath.Join(dir, "tasks"), syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		t.close()
		return nil, fmt.Errorf("open the step's cgroup %s: %w", dir, err)
	}
	return t, nil
}

func (t *trackCgroup) close() {
	for _, fd := range []*int{&t.fd, &t.events} {
		if *fd >= 0 {
			_ = syscall.Close(*fd)
			*fd = -1
		}
	}
}

// empty reports whether no process runs in the cgroup (a zombie does not
// count); an error counts as not empty.
func (t *trackCgroup) empty(kind string) bool {
	if kind == trackUnified {
		var buf [64]byte
		n, err := syscall.Pread(t.events, buf[:], 0)
		return err == nil && !populated(buf[:max(n, 0)])
	}
	pids, err := readProcs(t.dir)
	return err == nil && len(pids) == 0
}

// populated reads "populated 1" in a v2 cgroup.events.
func populated(events []byte) bool {
	for line := range strings.SplitSeq(string(events), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return strings.TrimSpace(v) != "0"
		}
	}
	return true
}

// killOnce sends SIGKILL to every process in the cgroup dir, race-free
// against forks, and returns the PIDs it listed (none on v2): v2 kills it
// whole; the freezer freezes it first; pids forbids forks first (and
// leaves them forbidden: reset allows them again). An empty kind is a v1
// cgroup of limits: its listed processes are killed.
func killOnce(kind, dir string) ([]int, error) {
	switch kind {
	case trackUnified:
		return nil, writeFile(filepath.Join(dir, "cgroup.kill"), "1")
	case trackFreezer:
		return freezeKill(dir, time.Now().Add(killWait))
	case trackPids:
		if err := writeFile(filepath.Join(dir, "pids.max"), "0"); err != nil {
			return nil, err
		}
	}
	return killListed(dir)
}

// killCgroup kills every process in the cgroup dir and waits, until
// deadline, for the cgroup to be empty; then it can hold a step again
// (reset). It kills again only when a process it has not killed shows up
// (one moved in from outside).
func killCgroup(kind, dir string, deadline time.Time) error {
	killed := map[int]bool{}
	kill := func() error {
		pids, err := killOnce(kind, dir)
		for _, pid := range pids {
			killed[pid] = true
		}
		if err != nil {
			return fmt.Errorf("kill the processes of %s: %w", dir, err)
		}
		return nil
	}
	if err := kill(); err != nil {
		return err
	}
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 20*time.Millisecond) {
		pids, left, err := leftIn(kind, dir)
		if err != nil {
			return err
		}
		if !left {
			return reset(kind, dir)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: processes survive SIGKILL (%v)", dir, pids)
		}
		fresh := kind == trackUnified
		for _, pid := range pids {
			fresh = fresh || !killed[pid]
		}
		if fresh {
			if err := kill(); err != nil {
				return err
			}
		}
		time.Sleep(wait)
	}
}

// leftIn reports whether processes run in the cgroup dir, and on v1 which.
func leftIn(kind, dir string) ([]int, bool, error) {
	if kind == trackUnified {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
		return nil, err == nil && populated(data), err
	}
	pids, err := readProcs(dir)
	return pids, len(pids) > 0, err
}

// reset lets a killed cgroup hold a step again: thawed, forks allowed.
func reset(kind, dir string) error {
	switch kind {
	case trackFreezer:
		return writeFile(filepath.Join(dir, "freezer.state"), "THAWED")
	case trackPids:
		return writeFile(filepath.Join(dir, "pids.max"), "max")
	}
	return nil
}

// settle makes the tracking cgroup t empty and ready for another step:
// what runs in it is killed, and a kill that began is undone (reset).
func (cg *cgroups) settle(t *trackCgroup) error {
	if t.clean {
		return nil
	}
	if !t.empty(cg.kind) {
		t.killed = true
		if err := killCgroup(cg.kind, t.dir, time.Now().Add(killWait)); err != nil {
			return err
		}
	} else if t.killed {
		if err := reset(cg.kind, t.dir); err != nil {
			return err
		}
	}
	t.clean = true
	if cg.kind != trackUnified {
		t.killed = false
	}
	return nil
}

// freezeKill freezes the v1 freezer cgroup dir (no task in it runs again,
// so none forks), sends SIGKILL to every task listed then, and thaws it:
// they die without running another instruction. A task that cannot freeze
// (in an uninterruptible sleep) holds the freeze back until deadline; it
// is killed all the same.
func freezeKill(dir string, deadline time.Time) ([]int, error) {
	state := filepath.Join(dir, "freezer.state")
	if err := writeFile(state, "FROZEN"); err != nil {
		return nil, err
	}
	for wait := 50 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		data, err := os.ReadFile(state)
		if err != nil || strings.TrimSpace(string(data)) == "FROZEN" || time.Now().After(deadline) {
			break
		}
		time.Sleep(wait)
	}
	pids, kerr := killListed(dir)
	return pids, errors.Join(kerr, writeFile(state, "THAWED"))
}

// killListed sends SIGKILL to the processes listed in the cgroup dir.
func killListed(dir string) ([]int, error) {
	pids, err := readProcs(dir)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return pids, err
}

// readProcs lists the processes of the cgroup dir. It opens cgroup.procs
// each time: on v1 an open file keeps serving the list it read first.
func readProcs(dir string) ([]int, error) {
	fd, err := syscall.Open(filepath.Join(dir, "cgroup.procs"), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("list the processes of %s: %w", dir, err)
	}
	defer syscall.Close(fd)
	var data []byte
	buf := make([]byte, 512)
	for {
		n, err := syscall.Read(fd, buf)
		if err != nil {
			return nil, fmt.Errorf("list the processes of %s: %w", dir, err)
		}
		if n <= 0 {
			break
		}
		data = append(data, buf[:n]...)
	}
	var pids []int
	for f := range strings.FieldsSeq(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// removeCgroupDir removes the cgroup dir, and the cgroups under it,
// killing what runs there (kind as in killOnce) and waiting briefly for
// the dying. A cgroup already gone is no error.
func removeCgroupDir(kind, dir string) error {
	var err error
	for try := 0; try < 50; try++ {
		if err = syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		if entries, rerr := os.ReadDir(dir); rerr == nil {
			for _, e := range entries {
				if e.IsDir() {
					_ = removeCgroupDir(kind, filepath.Join(dir, e.Name()))
				}
			}
		}
		_, _ = killOnce(kind, dir)
		time.Sleep(time.Duration(try+1) * time.Millisecond)
	}
	return fmt.Errorf("remove the cgroup %s: %w", dir, err)
}

// removeParent removes this Runtime's parent dir and, when no other
// Runtime uses it, the data directory's.
func removeParent(dir string) {
	if syscall.Rmdir(dir) == nil {
		_ = syscall.Rmdir(filepath.Dir(dir))
	}
}

// removeParents removes this Runtime's parents in every hierarchy.
func (cg *cgroups) removeParents() {
	if cg.trackSelf >= 0 {
		_ = syscall.Close(cg.trackSelf)
		cg.trackSelf = -1
	}
	for _, dir := range []string{cg.track, cg.v2, cg.memory, cg.cpu} {
		if dir != "" {
			removeParent(dir)
		}
	}
}

// startPool starts the goroutine that makes tracking cgroups ahead.
func (cg *cgroups) startPool() {
	p := &cg.pool
	p.kick = make(chan struct{}, 1)
	p.done = make(chan struct{})
	p.filler.Add(1)
	go cg.fill()
	cg.kickPool()
}

func (cg *cgroups) kickPool() {
	select {
	case cg.pool.kick <- struct{}{}:
	default: // a kick is pending, or there is no filler
	}
}

// fill makes tracking cgroups ahead, up to poolFill free, when kicked.
func (cg *cgroups) fill() {
	p := &cg.pool
	defer p.filler.Done()
	for {
		select {
		case <-p.kick:
		case <-p.done:
			return
		}
		for {
			p.mu.Lock()
			enough := p.closed || len(p.free) >= poolFill
			p.mu.Unlock()
			if enough {
				break
			}
			t, err := cg.makeTrack()
			if err != nil {
				cg.log.Warn("cannot make a step's cgroup ahead", "err", err)
				break
			}
			_ = cg.put(t)
		}
	}
}

// makeTrack makes a tracking cgroup for the pool.
func (cg *cgroups) makeTrack() (*trackCgroup, error) {
	cg.pool.mu.Lock()
	cg.pool.made++
	dir := filepath.Join(cg.track, "pool~"+strconv.Itoa(cg.pool.made)) // "~": never a cgroupName
	cg.pool.mu.Unlock()
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make a step's cgroup: %w", err)
	}
	t, err := cg.openTrack(dir, true)
	if err != nil {
		_ = syscall.Rmdir(dir)
		return nil, err
	}
	return t, nil
}

// take gives a step an empty tracking cgroup: from the pool, or made now
// when the pool is empty.
func (cg *cgroups) take() (*trackCgroup, error) {
	p := &cg.pool
	p.mu.Lock()
	n := len(p.free)
	if n == 0 {
		p.mu.Unlock()
		cg.kickPool()
		return cg.makeTrack()
	}
	t := p.free[n-1]
	p.free = p.free[:n-1]
	p.mu.Unlock()
	if n-1 < poolLow {
		cg.kickPool()
	}
	t.clean = false
	return t, nil
}

// put takes back a step's tracking cgroup: into the pool once nothing runs
// in it, or removed. One whose processes survive is left (the next
// braid's reapOrphans tries again).
//
// A v2 cgroup once killed is removed too: the kernel (seen on 6.18) sends
// SIGKILL to every process cloned into it afterwards, since it compares
// the kill count of the forking process's cgroup with the target's.
// Steps that leave nothing behind, the usual case, keep their cgroup.
func (cg *cgroups) put(t *trackCgroup) error {
	if err := cg.settle(t); err != nil {
		t.close()
		return err
	}
	if t.pooled && !(cg.kind == trackUnified && t.killed) {
		p := &cg.pool
		p.mu.Lock()
		if !p.closed && len(p.free) < poolMax {
			p.free = append(p.free, t)
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
	}
	t.close()
	return removeCgroupDir(cg.kind, t.dir)
}

// close removes the pool's cgroups and this Runtime's parents; the steps
// have ended.
func (cg *cgroups) close() {
	if cg == nil {
		return
	}
	p := &cg.pool
	p.mu.Lock()
	p.closed = true
	free := p.free
	p.free = nil
	p.mu.Unlock()
	if p.done != nil {
		close(p.done)
		p.filler.Wait()
	}
	for _, t := range free {
		t.close()
		_ = removeCgroupDir(cg.kind, t.dir)
	}
	cg.removeParents()
}

// reapOrphans kills the processes in the cgroups that earlier braids left
// on this data directory, and removes those cgroups. A braid killed with
// -9 cannot remove its cgroups, and the processes its steps left (a
// daemon, a double fork) may still run and race the steps that retry them.
//
// New calls it before its first step. The supervisor process that will own
// a data directory's steps calls it once at its start, before it starts a
// step. It leaves alone the cgroups of a process that still runs (an
// instance, newInstance), whether another Runtime of this process or a
// braid still running on the same data directory, and those of other data
// directories (another key). It returns how many instances it removed.
func (cg *cgroups) reapOrphans() (int, error) {
	n := 0
	var errs []error
	// The tracking hierarchy first: once its cgroups are empty, no process
	// is left in the limits' ones either.
	for _, h := range []struct{ kind, parent string }{{cg.kind, cg.track}, {"", cg.memory}, {"", cg.cpu}} {
		if h.parent == "" {
			continue
		}
		keyDir := filepath.Dir(h.parent)
		entries, err := os.ReadDir(keyDir)
		if err != nil {
			errs = append(errs, fmt.Errorf("list %s: %w", keyDir, err))
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || e.Name() == cg.instance || instanceAlive(e.Name()) {
				continue
			}
			if err := reapTree(h.kind, filepath.Join(keyDir, e.Name())); err != nil {
				errs = append(errs, err)
			} else if h.kind == cg.kind {
				n++
			}
		}
	}
	return n, errors.Join(errs...)
}

// reapTree kills what runs in the cgroup dir and the cgroups under it, and
// removes them all.
func reapTree(kind, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, reapTree(kind, filepath.Join(dir, e.Name())))
		}
	}
	if kind != "" {
		if err := killCgroup(kind, dir, time.Now().Add(killWait)); err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
	return errors.Join(append(errs, removeCgroupDir(kind, dir))...)
}

// instanceAlive reports whether the process that named a Runtime's cgroups
// instance (<pid>-<start time>-<n>) still runs.
func instanceAlive(instance string) bool {
	parts := strings.SplitN(instance, "-", 3)
	if len(parts) != 3 {
		return false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return false
	}
	now, err := startTime(pid)
	return err == nil && now == start
}
