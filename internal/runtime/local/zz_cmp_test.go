package local

import (
	"context"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestZZCompare(t *testing.T) {
	rt, _ := New(Config{DataDir: t.TempDir()})
	defer rt.Close()
	tp := &v1alpha1.Template{Name: "t", Container: &apiContainerTrue}
	path, _ := exec.LookPath("true")
	devNull, _ := os.Open(os.DevNull)
	out, _ := os.Create(t.TempDir() + "/log")
	attr := &os.ProcAttr{Files: []*os.File{devNull, out, out}, Sys: &syscall.SysProcAttr{Setpgid: true}}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var cpuRT, cpuEx time.Duration
	const block = 50
	var rts, exs []float64
	for round := 0; round < 40; round++ {
		c0 := cpu()
		start := time.Now()
		for range block {
			run := newRun(tp)
			run.Env = map[string]string{"ARGO_NODE_ID": run.NodeID}
			rt.Start(context.Background(), run)
			for ev := range rt.Events() {
				if ev.Phase != v1alpha1.NodeRunning {
					break
				}
			}
		}
		rts = append(rts, float64(time.Since(start).Microseconds())/block)
		c1 := cpu()
		cpuRT += c1 - c0
		start = time.Now()
		for range block {
			p, _ := os.StartProcess(path, []string{"true"}, attr)
			p.Wait()
		}
		exs = append(exs, float64(time.Since(start).Microseconds())/block)
		cpuEx += cpu() - c1
	}
	sort.Float64s(rts)
	sort.Float64s(exs)
	t.Logf("runtime us/step: min %.0f p25 %.0f median %.0f", rts[0], rts[len(rts)/4], rts[len(rts)/2])
	t.Logf("exec    us/step: min %.0f p25 %.0f median %.0f", exs[0], exs[len(exs)/4], exs[len(exs)/2])
	t.Logf("cpu/step: runtime %v exec %v", cpuRT/(40*block), cpuEx/(40*block))
	_ = runtime.Run{}
}
