package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// limitedRuntimes are the runtimes a limited step is tested on: without a
// root view and, where this process can mount one, with one. The test is
// skipped where cgroups are not available.
func limitedRuntimes(t *testing.T) map[string]func(*testing.T) *harness {
	t.Helper()
	if cg := cgroupsHere(t, ""); cg.limitsErr != nil {
		t.Skipf("no limits here: %v", cg.limitsErr)
	}
	return map[string]func(*testing.T) *harness{
		"host": func(t *testing.T) *harness { return newRuntime(t) },
		"view": func(t *testing.T) *harness { return newViewRuntime(t) },
	}
}

// A step past its memory limit ends Failed with OOMKilled; one under it
// succeeds; and the step's cgroup is gone once it ended.
func TestMemoryLimit(t *testing.T) {
	for name, mk := range limitedRuntimes(t) {
		t.Run(name, func(t *testing.T) {
			rt := mk(t)
			for _, tc := range []struct {
				name  string
				mib   int
				phase v1alpha1.NodePhase
				msg   string
			}{
				{"over", 300, v1alpha1.NodeFailed, MsgOOMKilled},
				{"under", 8, v1alpha1.NodeSucceeded, ""},
			} {
				run := newRun(tmpl(t, `
name: alloc
script:
  image: python:3
  command: [/usr/bin/python3]
  source: |
    b = b"x" * (`+strconv.Itoa(tc.mib)+` << 20)
    print(len(b))
  resources:
    limits: {memory: 64Mi}
`))
				ev := final(runToEnd(t, rt, run))
				if ev.Phase != tc.phase || ev.Message != tc.msg {
					t.Errorf("%s: got %s %q, want %s %q (log %q)", tc.name, ev.Phase, ev.Message, tc.phase, tc.msg, readLog(t, rt, run.ID))
				}
				if tc.phase == v1alpha1.NodeFailed && (ev.ExitCode == nil || *ev.ExitCode != 137) {
					t.Errorf("%s: exit code %v, want 137", tc.name, ptrStr(ev.ExitCode))
				}
				dir := filepath.Join(rt.cgroups.memory, cgroupName(run.ID))
				if rt.cgroups.v2 != "" {
					dir = filepath.Join(rt.cgroups.v2, cgroupName(run.ID))
				}
				if !gone(dir, 2*time.Second) {
					t.Errorf("%s: the step's cgroup %s is left", tc.name, dir)
				}
			}
		})
	}
}

// A step limited to 100m of CPU gets about a tenth of a CPU: a busy loop
// of one second of wall time uses well under 0.4 s of CPU, where the same
// loop unlimited uses most of a second.
func TestCPULimit(t *testing.T) {
	for name, mk := range limitedRuntimes(t) {
		t.Run(name, func(t *testing.T) {
			rt := mk(t)
			for _, tc := range []struct {
				limit     string
				min, max  float64
				throttled bool
			}{
				// 2 s of spinning: at most 0.2 s of CPU under the limit, and
				// the cgroup throttled it; without a CPU limit it is never
				// throttled and gets more, unless the machine is starved.
				{"cpu: 100m", 0, 0.35, true},
				{"memory: 1Gi", 0.25, 4, false},
			} {
				run := newRun(tmpl(t, `
name: spin
script:
  image: python:3
  command: [/usr/bin/python3]
  source: |
    import time
    def throttled():
        for line in open('/proc/self/cgroup'):
            _, ctrls, path = line.strip().split(':', 2)
            if 'cpu' in ctrls.split(','):
                bases = ['/sys/fs/cgroup/cpu,cpuacct', '/sys/fs/cgroup/cpu']
            elif ctrls == '':
                bases = ['/sys/fs/cgroup']
            else:
                continue
            for base in bases:
                try:
                    for stat in open(base + path + '/cpu.stat'):
                        key, value = stat.split()
                        if key == 'nr_throttled':
                            return int(value)
                except OSError:
                    pass
        return 0
    w = time.time()
    while time.time() - w < 2:
        pass
    print(time.process_time(), throttled())
  resources:
    limits: {`+tc.limit+`}
`))
				run.IncludeResult = true
				ev := final(runToEnd(t, rt, run))
				if ev.Phase != v1alpha1.NodeSucceeded || ev.Outputs == nil || ev.Outputs.Result == nil {
					t.Fatalf("%s: %s %q (log %q)", tc.limit, ev.Phase, ev.Message, readLog(t, rt, run.ID))
				}
				var cpu float64
				var throttled int
				if _, err := fmt.Sscan(*ev.Outputs.Result, &cpu, &throttled); err != nil || cpu < tc.min || cpu > tc.max {
					t.Errorf("%s: %q s of CPU in 2 s, want %v to %v", tc.limit, *ev.Outputs.Result, tc.min, tc.max)
				}
				if (throttled > 0) != tc.throttled {
					t.Errorf("%s: throttled %d times, want throttling %v", tc.limit, throttled, tc.throttled)
				}
			}
		})
	}
}

// A step without limits runs in a tracking cgroup from the pool, and in
// no memory or cpu cgroup of braid's.
func TestNoLimitsNoCgroup(t *testing.T) {
	cgroupsHere(t, "")
	rt := newRuntime(t)
	got := stepCgroups(t, rt)
	if want := rt.cgroups.track; !strings.HasPrefix(got[rt.cgroups.kind], relCgroup(want)+"/pool~") {
		t.Errorf("the step runs in %q of %s, want a pool cgroup under %s", got[rt.cgroups.kind], rt.cgroups.kind, want)
	}
	for _, h := range []string{"memory", "cpu"} {
		if strings.Contains(got[h], "/"+cgroupParent+"/") {
			t.Errorf("a step without limits runs in a %s cgroup of braid's: %q", h, got[h])
		}
	}
}

func TestLimitsOf(t *testing.T) {
	for _, tc := range []struct {
		mem, cpu string
		want     limits
	}{
		{"", "", limits{}},
		{"64Mi", "", limits{memory: 64 << 20}},
		{"1G", "100m", limits{memory: 1e9, cpu: 10000}},
		{"", "2", limits{cpu: 200000}},
		{"", "1m", limits{cpu: 1000}},
	} {
		c := &apiv1.Container{Resources: apiv1.ResourceRequirements{Limits: apiv1.ResourceList{}}}
		if tc.mem != "" {
			c.Resources.Limits[apiv1.ResourceMemory] = resource.MustParse(tc.mem)
		}
		if tc.cpu != "" {
			c.Resources.Limits[apiv1.ResourceCPU] = resource.MustParse(tc.cpu)
		}
		if got := limitsOf(c); got != tc.want {
			t.Errorf("%s/%s: got %+v, want %+v", tc.mem, tc.cpu, got, tc.want)
		}
	}
}

func TestCgroupName(t *testing.T) {
	for in, want := range map[string]string{
		"uid-1":   "uid-1",
		"a/b":     "a%2fb",
		"..":      "%2e.",
		"x.y_z-1": "x.y_z-1",
	} {
		if got := cgroupName(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	if got := cgroupName(strings.Repeat("x", 300)); len(got) != 64 {
		t.Errorf("a long ID: got %q", got)
	}
}

// BenchmarkRunLimited is BenchmarkRunTrue for a step with a memory and a
// cpu limit: the cost of its cgroups.
func BenchmarkRunLimited(b *testing.B) {
	if cg := cgroupsHere(b, ""); cg.limitsErr != nil {
		b.Skipf("no limits here: %v", cg.limitsErr)
	}
	for _, bc := range []struct {
		name      string
		limited   bool
		isolation string
	}{{"plain", false, IsolationNone}, {"limited", true, IsolationNone}, {"view", false, IsolationRequired}, {"view-limited", true, IsolationRequired}} {
		b.Run(bc.name, func(b *testing.B) {
			rt, err := New(Config{DataDir: b.TempDir(), Isolation: bc.isolation})
			if err != nil {
				b.Skipf("%s: %v", bc.name, err)
			}
			defer rt.Close()
			c := apiContainerTrue
			if bc.limited {
				c.Resources.Limits = apiv1.ResourceList{
					apiv1.ResourceMemory: resource.MustParse("64Mi"),
					apiv1.ResourceCPU:    resource.MustParse("500m"),
				}
			}
			tp := &v1alpha1.Template{Name: "t", Container: &c}
			runs := make([]runtime.Run, b.N)
			for i := range runs {
				runs[i] = newRun(tp)
			}
			benchRuns(b, rt, runs)
		})
	}
}

// gone reports whether path is removed within d (a step's cgroup is
// removed just after its final event).
func gone(path string, d time.Duration) bool {
	return testutil.Poll(d, func() error {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			return fmt.Errorf("%s is still there (%v)", path, err)
		}
		return nil
	}) == nil
}

func ptrStr(p *int32) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(int(*p))
}
