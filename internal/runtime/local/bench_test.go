package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/image"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// BenchmarkRunTrue starts `true` and waits for its final event, b.N times
// in a row: the runtime's cost of a step of a chain. Compare with
// BenchmarkExecTrue, the bare fork, exec and wait of the same program.
// Besides the wall time (ns/step) it reports braid's own CPU time
// (cpu-ns/step), which is steadier on a busy machine. "view" is a step in a
// root view of its own (Isolation required); "image" one in a view of an
// image's root (test/busybox:1 from an images directory, unpacked before
// the timer starts; BenchmarkImageFirstUse measures the unpack).
func BenchmarkRunTrue(b *testing.B) {
	for _, bc := range []struct {
		name          string
		includeResult bool
		isolation     string
		image         bool
	}{{"plain", false, IsolationNone, false}, {"result", true, IsolationNone, false},
		{"view", false, IsolationRequired, false}, {"image", false, IsolationRequired, true}} {
		includeResult := bc.includeResult
		b.Run(bc.name, func(b *testing.B) {
			cfg := Config{DataDir: b.TempDir(), Isolation: bc.isolation}
			c := apiContainerTrue
			if bc.image {
				cfg.ImagesDir = filepath.Join(b.TempDir(), "images")
				writeBusyboxImage(b, cfg.ImagesDir, false)
				c.Image = "test/busybox:1"
			}
			rt, err := New(cfg)
			if err != nil {
				b.Skipf("%s: %v", bc.name, err)
			}
			defer rt.Close()
			tp := &v1alpha1.Template{Name: "t", Container: &c}
			ctx := context.Background()
			if bc.image {
				if _, err := rt.imageStore.Get(ctx, c.Image); err != nil {
					b.Fatal(err)
				}
			}
			runs := make([]runtime.Run, b.N)
			for i := range runs {
				runs[i] = newRun(tp)
				runs[i].IncludeResult = includeResult
				runs[i].Env = map[string]string{"ARGO_NODE_ID": runs[i].NodeID}
			}
			benchRuns(b, rt, runs)
		})
	}
}

var apiContainerTrue = apiContainer

func init() {
	apiContainerTrue.Command = []string{"true"}
}

// BenchmarkImageFirstUse is the first use of an image: find test/busybox:1
// in an images directory (an OCI archive), check its blobs and unpack its
// root.
func BenchmarkImageFirstUse(b *testing.B) {
	images := filepath.Join(b.TempDir(), "images")
	writeBusyboxImage(b, images, true)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s := image.NewStore(images, filepath.Join(b.TempDir(), rootfsDir))
		b.StartTimer()
		if _, err := s.Get(ctx, "test/busybox:1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecTrue is the floor: fork, exec and wait of `true`, with its
// output to a file, in a process group of its own.
func BenchmarkExecTrue(b *testing.B) {
	path, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		b.Fatal(err)
	}
	defer devNull.Close()
	out, err := os.Create(b.TempDir() + "/log")
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	attr := &os.ProcAttr{Files: []*os.File{devNull, out, out}, Sys: &syscall.SysProcAttr{Setpgid: true}}
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		p, err := os.StartProcess(path, []string{"true"}, attr)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/step")
}

// cpuTime is the CPU time this process (not its children) has used: what
// braid itself spends on a step.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchRuns starts the runs one after another, each once the one before
// it succeeded, and reports the wall and CPU time a step takes.
func benchRuns(b *testing.B, rt *Runtime, runs []runtime.Run) {
	b.Helper()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range runs {
		if err := rt.Start(context.Background(), runs[i]); err != nil {
			b.Fatal(err)
		}
		for ev := range rt.Events() {
			if ev.Phase == v1alpha1.NodeRunning {
				continue
			}
			if ev.Phase != v1alpha1.NodeSucceeded {
				b.Fatalf("%s: %s", ev.Phase, ev.Message)
			}
			break
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/step")
}
