package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// cgroupsHere detects the cgroups for a fresh data directory, tracking in
// kind ("": the best here), closed at the end of the test; it skips the
// test where there are none.
func cgroupsHere(t testing.TB, kind string) *cgroups {
	t.Helper()
	cg, err := detectCgroups(cgroupRoot, cgroupKey(t.TempDir()), kind)
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	t.Cleanup(cg.close)
	return cg
}

// trackingKinds lists the tracking hierarchies that work here, or skips
// the test where none does.
func trackingKinds(t testing.TB) []string {
	t.Helper()
	var kinds []string
	for _, k := range []string{trackUnified, trackFreezer, trackPids} {
		if cg, err := detectCgroups(cgroupRoot, cgroupKey(t.TempDir()), k); err == nil {
			kinds = append(kinds, k)
			cg.close()
		}
	}
	if len(kinds) == 0 {
		t.Skip("no cgroups here")
	}
	return kinds
}

// track makes rt, before its first step, track its steps in the hierarchy
// kind; "none" leaves it without cgroups.
func track(t testing.TB, rt *Runtime, kind string) {
	t.Helper()
	rt.cgroups.close()
	rt.cgroups = nil
	if kind == "none" {
		return
	}
	cg, err := detectCgroups(cgroupRoot, cgroupKey(rt.cfg.DataDir), kind)
	if err != nil {
		t.Fatal(err)
	}
	cg.startPool()
	rt.cgroups = cg
}

// relCgroup is a cgroup's path as /proc/<pid>/cgroup shows it.
func relCgroup(dir string) string {
	if i := strings.Index(dir, "/"+cgroupParent+"/"); i >= 0 {
		return dir[i:]
	}
	return dir
}

// stepCgroups runs a step that prints its /proc/self/cgroup, and maps
// each controller ("unified" for v2) to the step's cgroup there.
func stepCgroups(t *testing.T, rt *harness) map[string]string {
	t.Helper()
	run := newRun(tmpl(t, `{name: where, container: {image: alpine, command: [cat, /proc/self/cgroup]}}`))
	run.IncludeResult = true
	ev := final(runToEnd(t, rt, run))
	if ev.Phase != v1alpha1.NodeSucceeded || ev.Outputs == nil || ev.Outputs.Result == nil {
		t.Fatalf("%s %q", ev.Phase, ev.Message)
	}
	out := map[string]string{}
	for line := range strings.SplitSeq(*ev.Outputs.Result, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[trackUnified] = parts[2]
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// detachedRun is a step that starts a grandchild in a session of its own
// (out of the step's process group), `sleep <marker>`, which writes its
// PID ($$$$: a command's $$ is an escaped $) to a file (<step dir>/grandchild without a view; /tmp/grandchild in
// one, whose user namespace may not write the step's directory); once
// grandchild has seen it, the step ends, or with stay it ignores SIGTERM
// and sleeps on.
func detachedRun(t *testing.T, rt *harness, stay bool) (runtime.Run, string) {
	t.Helper()
	n := runSeq.Add(1)
	marker := fmt.Sprintf("%d.5", 3000+n)
	run := newRun(nil)
	pidFile := filepath.Join(rt.stepDir(run), "grandchild")
	if rt.sandbox != nil {
		pidFile = "/tmp/grandchild"
	}
	release := filepath.Join(rt.stepDir(run), "release")
	script := fmt.Sprintf(`setsid sh -c 'echo $$$$ > %s; exec sleep %s' &
i=0; while [ ! -e %s ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done`, pidFile, marker, release)
	if stay {
		script = "trap '' TERM\n" + script + "\nsleep 60"
	}
	run.Template = tmpl(t, fmt.Sprintf(`{name: detach, container: {image: alpine, command: [sh, -c, %q]}}`, script))
	return run, marker
}

// grandchild waits until the detached grandchild of run runs, and returns
// its host PIDs.
func grandchild(t *testing.T, rt *harness, run runtime.Run, marker string) []string {
	t.Helper()
	var pids []string
	testutil.Eventually(t, 10*time.Second, "the detached grandchild runs", func() error {
		if pids = processesWith(t, "sleep\x00"+marker); len(pids) > 0 {
			return nil
		}
		if st, _, _ := rt.Status(context.Background(), run.ID); st.Phase != v1alpha1.NodeRunning && st.Phase != v1alpha1.NodePending {
			t.Fatalf("the step ended first: %s %q (log %q)", st.Phase, st.Message, readLog(t, rt, run.ID))
		}
		return fmt.Errorf("no process %q", marker)
	})
	if err := os.WriteFile(filepath.Join(rt.stepDir(run), "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killPIDs(pids) })
	return pids
}

func killPIDs(pids []string) {
	for _, p := range pids {
		if pid, err := strconv.Atoi(p); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// checkGone fails the test unless the processes are gone now.
func checkGone(t *testing.T, what string, pids []string) {
	t.Helper()
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		if !processGone(pid) {
			t.Errorf("%s (PID %d) outlived its step", what, pid)
		}
	}
}

// A step that started a detached grandchild (setsid) ends: the grandchild
// is gone by the final event, in each tracking hierarchy, with isolation
// none (no PID namespace) and auto.
func TestCgroupEndKillsDetached(t *testing.T) {
	for _, kind := range trackingKinds(t) {
		for _, iso := range []string{IsolationNone, IsolationAuto} {
			t.Run(kind+"/"+iso, func(t *testing.T) {
				rt := newRuntime(t, func(c *Config) { c.Isolation = iso })
				track(t, rt.Runtime, kind)
				run, marker := detachedRun(t, rt, false)
				if err := rt.Start(context.Background(), run); err != nil {
					t.Fatal(err)
				}
				pids := grandchild(t, rt, run, marker)
				ev := final(waitFinal(t, rt, run.ID, 30*time.Second))
				checkGone(t, "the detached grandchild", pids)
				if ev.Phase != v1alpha1.NodeSucceeded {
					t.Errorf("%s %q (log %q)", ev.Phase, ev.Message, readLog(t, rt, run.ID))
				}
				if rt.sandbox == nil {
					data, err := os.ReadFile(filepath.Join(rt.stepDir(run), "grandchild"))
					if err != nil {
						t.Fatal(err)
					}
					pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
					if err != nil || !slices.Contains(pids, strconv.Itoa(pid)) {
						t.Fatalf("the grandchild's PID file holds %q, want one of %v", data, pids)
					}
					checkGone(t, "the grandchild of the PID file", []string{strconv.Itoa(pid)})
				}
			})
		}
	}
}

// Kill of a step that ignores SIGTERM and started a detached grandchild
// (which ignores it too): after the grace period both are killed, and the
// grandchild is gone by the final event.
func TestCgroupKillKillsDetached(t *testing.T) {
	for _, kind := range trackingKinds(t) {
		for _, iso := range []string{IsolationNone, IsolationAuto} {
			t.Run(kind+"/"+iso, func(t *testing.T) {
				rt := newRuntime(t, func(c *Config) { c.Isolation = iso })
				track(t, rt.Runtime, kind)
				run, marker := detachedRun(t, rt, true)
				if err := rt.Start(context.Background(), run); err != nil {
					t.Fatal(err)
				}
				pids := grandchild(t, rt, run, marker)
				if err := rt.Kill(context.Background(), run.ID); err != nil {
					t.Fatal(err)
				}
				ev := final(waitFinal(t, rt, run.ID, 30*time.Second))
				checkGone(t, "the detached grandchild", pids)
				if ev.Phase != v1alpha1.NodeFailed || ev.Message != MsgKilled {
					t.Errorf("final = %s %q, want Failed %q", ev.Phase, ev.Message, MsgKilled)
				}
			})
		}
	}
}

// Steps one after the other reuse the pool's cgroups instead of making
// new ones, and no thread of braid's stays in a step's cgroup.
func TestCgroupPoolReused(t *testing.T) {
	for _, kind := range trackingKinds(t) {
		t.Run(kind, func(t *testing.T) {
			rt := newRuntime(t)
			track(t, rt.Runtime, kind)
			seen := map[string]int{}
			const steps = 6
			for range steps {
				got := stepCgroups(t, rt)[kind]
				if !strings.HasPrefix(got, relCgroup(rt.cgroups.track)+"/pool~") {
					t.Fatalf("the step runs in %q of %s, want a pool cgroup of %s", got, kind, rt.cgroups.track)
				}
				seen[got]++
			}
			p := &rt.cgroups.pool
			p.mu.Lock()
			made := p.made
			p.mu.Unlock()
			if len(seen) == steps || made > poolFill+2 {
				t.Errorf("%d steps ran in %d cgroups (%v); the pool made %d", steps, len(seen), seen, made)
			}
			testutil.Until(t, 2*time.Second, "the last step's cgroup is back in the pool", func() bool {
				p.mu.Lock()
				defer p.mu.Unlock()
				return len(p.free) >= poolFill
			})
			tasks, _ := filepath.Glob("/proc/self/task/*/cgroup")
			for _, f := range tasks {
				data, _ := os.ReadFile(f)
				if strings.Contains(string(data), relCgroup(rt.cgroups.track)) {
					t.Errorf("a thread of braid's stays in a step's cgroup: %s: %s", f, data)
				}
			}
		})
	}
}

// The kill of a cgroup is race-free against forks: a shell that forks as
// fast as it can is killed with all its children, in each tracking
// hierarchy, and the cgroup is fit for another step.
func TestKillCgroupForking(t *testing.T) {
	for _, kind := range trackingKinds(t) {
		t.Run(kind, func(t *testing.T) {
			cg := cgroupsHere(t, kind)
			tc, err := cg.take()
			if err != nil {
				t.Fatal(err)
			}
			marker := fmt.Sprintf("%d.25", 4000+runSeq.Add(1))
			cmd := exec.Command("sh", "-c", `read go; i=0; while [ $i -lt 3000 ]; do sleep `+marker+` & i=$((i+1)); done; wait`)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			gate, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { killPIDs(processesWith(t, "sleep\x00"+marker)) })
			if err := writeFile(filepath.Join(tc.dir, "cgroup.procs"), strconv.Itoa(cmd.Process.Pid)); err != nil {
				t.Fatal(err)
			}
			gate.Close()
			testutil.Until(t, 5*time.Second, "the shell forks", func() bool { return len(processesWith(t, "sleep\x00"+marker)) > 20 })
			if err := killCgroup(kind, tc.dir, time.Now().Add(killWait)); err != nil {
				t.Fatal(err)
			}
			if left := processesWith(t, "sleep\x00"+marker); len(left) > 0 {
				t.Errorf("%d children of the shell survive the kill", len(left))
			}
			_ = cmd.Wait()
			if !tc.empty(kind) {
				t.Error("the cgroup is not empty after the kill")
			}
			if err := cg.put(tc); err != nil {
				t.Fatal(err)
			}
			checkResetFor(t, kind, tc.dir)
		})
	}
}

// checkResetFor checks that the killed cgroup dir may hold a step again.
func checkResetFor(t *testing.T, kind, dir string) {
	t.Helper()
	var file, want string
	switch kind {
	case trackFreezer:
		file, want = "freezer.state", "THAWED"
	case trackPids:
		file, want = "pids.max", "max"
	default:
		return
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil || strings.TrimSpace(string(data)) != want {
		t.Errorf("%s after a kill: %q %v, want %s", file, data, err, want)
	}
}

// deadInstance names the cgroups of a braid that is gone: no process has
// PID pid_max.
func deadInstance(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data)) + "-1-1"
}

// startOrphan makes the cgroup that a step of instance, on the data
// directory named key, would have left in the tracking hierarchy of cg,
// with a process running in it, and returns the process's exit.
func startOrphan(t *testing.T, cg *cgroups, key, instance string) (dir string, exited <-chan error) {
	t.Helper()
	mount := filepath.Dir(filepath.Dir(filepath.Dir(cg.track)))
	dir = filepath.Join(mount, cgroupParent, key, instance, "pool~1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", fmt.Sprintf("%d.75", 5000+runSeq.Add(1)))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(cmd.Process.Pid)); err != nil {
		_ = cmd.Process.Kill()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = reapTree(cg.kind, filepath.Join(mount, cgroupParent, key, instance))
		_ = syscall.Rmdir(filepath.Join(mount, cgroupParent, key))
	})
	return dir, done
}

// killedSoon fails the test unless the orphan's process is killed soon.
func killedSoon(t *testing.T, exited <-chan error) {
	t.Helper()
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("the orphan's process ended with %v, want killed", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the orphan's process still runs")
	}
}

// New kills and removes the cgroups that an earlier braid on the same data
// directory left, with a process still running in them; it leaves alone
// those of another data directory, and those of a Runtime still running on
// the same one.
func TestNewReapsOrphanCgroups(t *testing.T) {
	probe := cgroupsHere(t, "")
	dataDir, other := t.TempDir(), t.TempDir()
	orphan, orphanExit := startOrphan(t, probe, cgroupKey(dataDir), deadInstance(t))
	_, foreignExit := startOrphan(t, probe, cgroupKey(other), deadInstance(t))

	rt := newRuntime(t, func(c *Config) { c.DataDir = dataDir })
	killedSoon(t, orphanExit)
	if !gone(orphan, 2*time.Second) {
		t.Errorf("the orphan cgroup %s is left", orphan)
	}
	select {
	case err := <-foreignExit:
		t.Errorf("New killed a step of another data directory: %v", err)
	case <-time.After(100 * time.Millisecond):
	}

	run := newRun(tmpl(t, `{name: a, container: {image: alpine, command: [sleep, "60"]}}`))
	if err := rt.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if ev := <-rt.events(run.ID); ev.Phase != v1alpha1.NodeRunning {
		t.Fatalf("first event %s %q", ev.Phase, ev.Message)
	}
	newRuntime(t, func(c *Config) { c.DataDir = dataDir })
	rt.quiet(t, run.ID) // the second Runtime left the first's step running
	if err := rt.Kill(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	if ev := final(waitFinal(t, rt, run.ID, 10*time.Second)); ev.Message != MsgKilled {
		t.Errorf("final = %s %q, want %q", ev.Phase, ev.Message, MsgKilled)
	}
}

// reapOrphans works in each tracking hierarchy, on an orphan left frozen
// (freezer) or with forks forbidden (pids) by a braid killed mid-kill, and
// leaves a live instance alone.
func TestReapOrphansEachKind(t *testing.T) {
	for _, kind := range trackingKinds(t) {
		t.Run(kind, func(t *testing.T) {
			cg := cgroupsHere(t, kind)
			orphan, orphanExit := startOrphan(t, cg, cg.key, deadInstance(t))
			live := strings.Join(strings.SplitN(cg.instance, "-", 3)[:2], "-") + "-999999"
			_, liveExit := startOrphan(t, cg, cg.key, live)
			switch kind {
			case trackFreezer:
				if err := writeFile(filepath.Join(orphan, "freezer.state"), "FROZEN"); err != nil {
					t.Fatal(err)
				}
			case trackPids:
				if err := writeFile(filepath.Join(orphan, "pids.max"), "0"); err != nil {
					t.Fatal(err)
				}
			}
			n, err := cg.reapOrphans()
			if err != nil || n != 1 {
				t.Errorf("reapOrphans = %d, %v; want 1", n, err)
			}
			killedSoon(t, orphanExit)
			if _, err := os.Stat(filepath.Dir(orphan)); !os.IsNotExist(err) {
				t.Errorf("the orphan instance %s is left (%v)", filepath.Dir(orphan), err)
			}
			select {
			case err := <-liveExit:
				t.Errorf("reapOrphans killed a live instance's process: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
		})
	}
}

func TestInstanceAlive(t *testing.T) {
	me, err := newInstance()
	if err != nil {
		t.Fatal(err)
	}
	if !instanceAlive(me) {
		t.Errorf("this process's instance %s is not alive", me)
	}
	start, _ := startTime(os.Getpid())
	for _, dead := range []string{deadInstance(t), fmt.Sprintf("%d-%d-1", os.Getpid(), start+1), "junk", "1-x-1", ""} {
		if instanceAlive(dead) {
			t.Errorf("%q is alive", dead)
		}
	}
}

// BenchmarkRunTracked is BenchmarkRunTrue/plain in each tracking hierarchy
// and without cgroups ("none"), side by side in one run, so that a busy
// machine weighs on all alike: the cost of a step's cgroup.
func BenchmarkRunTracked(b *testing.B) {
	for _, kind := range append([]string{"none"}, trackingKinds(b)...) {
		b.Run(kind, func(b *testing.B) {
			rt, err := New(Config{DataDir: b.TempDir(), Isolation: IsolationNone})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			track(b, rt, kind)
			c := apiContainerTrue
			tp := &v1alpha1.Template{Name: "t", Container: &c}
			runs := make([]runtime.Run, b.N)
			for i := range runs {
				runs[i] = newRun(tp)
			}
			benchRuns(b, rt, runs)
		})
	}
}

// BenchmarkStepCgroupOps is the cgroupfs work of one step without its
// process, in each tracking hierarchy: take a cgroup, join and leave it
// (v1), see it empty at the end, give it back. "pool" reuses a cgroup as
// steps do; "mkdir" makes and removes one per step, as without the pool.
func BenchmarkStepCgroupOps(b *testing.B) {
	for _, kind := range trackingKinds(b) {
		for _, mode := range []string{"pool", "mkdir"} {
			b.Run(kind+"/"+mode, func(b *testing.B) {
				cg := cgroupsHere(b, kind)
				goruntimeLock(b)
				for range b.N {
					var t *trackCgroup
					var err error
					if mode == "pool" {
						t, err = cg.take()
					} else {
						t, err = cg.makeTrack()
					}
					if err != nil {
						b.Fatal(err)
					}
					sc := &stepCgroup{cg: cg, track: t}
					if err := sc.join(); err != nil {
						b.Fatal(err)
					}
					if err := sc.leave(); err != nil {
						b.Fatal(err)
					}
					if err := sc.killAll(); err != nil {
						b.Fatal(err)
					}
					if mode == "mkdir" {
						t.close()
						err = removeCgroupDir(kind, t.dir)
					} else {
						err = cg.put(t)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// goruntimeLock locks the benchmark's goroutine to its thread, as a step's
// forking thread is, for the time of the benchmark.
func goruntimeLock(b *testing.B) {
	goruntime.LockOSThread()
	b.Cleanup(goruntime.UnlockOSThread)
}

// A braid killed with -9 while its step runs leaves the step's detached
// grandchild running (the step's main process dies with braid, by its
// Pdeathsig); the next Runtime on the same data directory kills it. The
// braid is this test binary, run again in the helper mode of the test.
func TestKilledBraidOrphanReaped(t *testing.T) {
	if dir := os.Getenv("BRAID_TEST_ORPHAN_DATA"); dir != "" {
		orphanHelper(t, dir)
		return
	}
	cgroupsHere(t, "")
	dataDir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	braid := exec.Command(exe, "-test.run=^TestKilledBraidOrphanReaped$", "-test.count=1")
	braid.Env = append(os.Environ(), "BRAID_TEST_ORPHAN_DATA="+dataDir)
	out, err := braid.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := braid.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = braid.Process.Kill(); _ = braid.Wait() }()
	t.Cleanup(func() { // whatever the killed braid left, should the test fail
		if cg, err := detectCgroups(cgroupRoot, cgroupKey(dataDir), ""); err == nil {
			_, _ = cg.reapOrphans()
			cg.close()
		}
	})
	var pid int
	if _, err := fmt.Fscanln(out, &pid); err != nil {
		t.Fatalf("the braid's helper said no PID: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	_ = braid.Process.Signal(syscall.SIGKILL)
	_ = braid.Wait()
	time.Sleep(200 * time.Millisecond) // the step's main process dies with braid
	if processGone(pid) {
		t.Fatal("the grandchild died with braid: nothing to test")
	}
	newRuntime(t, func(c *Config) { c.DataDir = dataDir })
	if !processGone(pid) {
		t.Errorf("the grandchild (PID %d) of a step of a braid killed with -9 survives the next Runtime's New", pid)
	}
}

// orphanHelper is the braid of TestKilledBraidOrphanReaped: it starts a
// step whose detached grandchild writes its PID to a file, prints that
// PID, and waits to be killed.
func orphanHelper(t *testing.T, dataDir string) {
	rt := newRuntime(t, func(c *Config) { c.DataDir = dataDir })
	run := newRun(nil)
	pidFile := filepath.Join(rt.stepDir(run), "grandchild")
	script := fmt.Sprintf(`setsid sh -c 'echo $$$$ > %s; exec sleep 600' & sleep 600`, pidFile)
	run.Template = tmpl(t, fmt.Sprintf(`{name: detach, container: {image: alpine, command: [sh, -c, %q]}}`, script))
	if err := rt.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	testutil.Until(t, 10*time.Second, "the grandchild's PID file", func() bool {
		data, err := os.ReadFile(pidFile)
		return err == nil && strings.HasSuffix(string(data), "\n")
	})
	data, _ := os.ReadFile(pidFile)
	fmt.Print(string(data))
	select {}
}
