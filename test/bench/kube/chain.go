package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/braidwf/braid/internal/executor/emissary"
)

// chainBench is K1: a chain of steps run by a braid controller process.
type chainBench struct {
	bin        string
	kubeconfig string
	steps      int
	image      string
	timeout    time.Duration
}

// podTimes is what the bench saw of one pod: its own clock's times
// (added, termSeen), the apiserver's (seconds), and the emissary's
// (nanoseconds, from the termination message).
type podTimes struct {
	name                  string
	added, termSeen       time.Time
	created               time.Time
	started, finished     time.Time
	emStarted, emFinished time.Time
}

// podWatch records podTimes for every pod of a namespace.
type podWatch struct {
	mu   sync.Mutex
	pods map[string]*podTimes
}

func (w *podWatch) see(obj any, added bool) {
	pod, ok := obj.(*apiv1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	pt := w.pods[pod.Name]
	if pt == nil {
		pt = &podTimes{name: pod.Name, created: pod.CreationTimestamp.Time}
		w.pods[pod.Name] = pt
		if added {
			pt.added = now
		}
	}
	if !pt.termSeen.IsZero() {
		return
	}
	for _, s := range pod.Status.ContainerStatuses {
		t := s.State.Terminated
		if s.Name != "main" || t == nil {
			continue
		}
		pt.termSeen = now
		pt.started, pt.finished = t.StartedAt.Time, t.FinishedAt.Time
		if m, err := emissary.ParseMessage(t.Message); err == nil && m.StartedAt != nil && m.FinishedAt != nil {
			pt.emStarted, pt.emFinished = *m.StartedAt, *m.FinishedAt
		}
	}
}

// ordered returns the pods by first sight.
func (w *podWatch) ordered() []podTimes {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]podTimes, 0, len(w.pods))
	for _, p := range w.pods {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b podTimes) int { return a.added.Compare(b.added) })
	return out
}

func (b chainBench) run(rc *rest.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	ns, err := newNamespace(ctx, rc, "chain")
	if err != nil {
		return err
	}
	defer ns.delete()

	pw := &podWatch{pods: map[string]*podTimes{}}
	factory := informers.NewSharedInformerFactoryWithOptions(ns.cs, 0, informers.WithNamespace(ns.name))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { pw.see(obj, true) },
		UpdateFunc: func(_, obj any) { pw.see(obj, false) },
	}); err != nil {
		return err
	}
	stop := make(chan struct{})
	defer func() { close(stop); factory.Shutdown() }()
	factory.Start(stop)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return errors.New("pod informer not synced")
	}

	ctl, err := b.startController(ns.name)
	if err != nil {
		return err
	}
	defer ctl.stop()
	// Let it list and sync its informers before the clock starts.
	time.Sleep(3 * time.Second)
	if ctl.exited() {
		return fmt.Errorf("braid controller exited at start; its log: %s", ctl.logPath)
	}
	cpu0, err := cpuTime(ctl.pid())
	if err != nil {
		return err
	}
	start := time.Now()
	wf := chainWorkflow(b.steps, b.image)
	if _, err := ns.dyn.Resource(workflowsGVR()).Namespace(ns.name).Create(ctx, wf, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	phase, err := waitWorkflow(ctx, ns, wf.GetName(), ctl)
	if err != nil {
		return err
	}
	wall := time.Since(start)
	cpu1, err := cpuTime(ctl.pid())
	if err != nil {
		return err
	}
	rss := peakRSS(ctl.pid())
	pods := pw.ordered()
	if phase != "Succeeded" || len(pods) != b.steps {
		return fmt.Errorf("workflow %s ended %s with %d pods (want Succeeded, %d); controller log: %s", wf.GetName(), phase, len(pods), b.steps, ctl.logPath)
	}
	b.report(pods, wall, cpu0, cpu1-cpu0, rss)
	return nil
}

// report prints K1's figures.
func (b chainBench) report(pods []podTimes, wall, startCPU, cpu time.Duration, rssKiB int64) {
	var over, overAPI, cycle, lag, startup, startupNs []time.Duration
	for i, p := range pods {
		startup = append(startup, p.started.Sub(p.created))
		if !p.emStarted.IsZero() {
			startupNs = append(startupNs, p.emStarted.Sub(p.added))
			lag = append(lag, p.termSeen.Sub(p.emFinished))
		}
		if i+1 < len(pods) {
			next := pods[i+1]
			over = append(over, next.added.Sub(p.termSeen))
			overAPI = append(overAPI, next.created.Sub(p.finished))
			cycle = append(cycle, next.added.Sub(p.added))
		}
	}
	n := len(pods)
	fmt.Printf("\nK1 (%d-step chain, %s `true`, by a braid controller process): wall %s, %s per step\n",
		n, b.image, wall.Round(time.Millisecond), ms(wall/time.Duration(n)))
	fmt.Printf("  per-step overhead, bench informer (next pod ADD - this pod's main terminated seen): median %s, p90 %s, max %s\n",
		ms(quantile(over, .5)), ms(quantile(over, .9)), ms(quantile(over, 1)))
	fmt.Printf("  per-step overhead, apiserver times, 1 s resolution (next creationTimestamp - finishedAt): median %s, p90 %s\n",
		ms(quantile(overAPI, .5)), ms(quantile(overAPI, .9)))
	fmt.Printf("  step cycle (pod ADD to next pod ADD): median %s; kubelet report lag (emissary's child end, ns -> terminated seen): median %s\n",
		ms(quantile(cycle, .5)), ms(quantile(lag, .5)))
	fmt.Printf("  pod start-up: creationTimestamp -> main startedAt (1 s resolution) median %s; ADD seen -> emissary's child start (ns) median %s\n",
		ms(quantile(startup, .5)), ms(quantile(startupNs, .5)))
	fmt.Printf("  controller: CPU %s over the chain (%s per step; %s to start), peak RSS %.1f MiB\n",
		cpu.Round(10*time.Millisecond), ms(cpu/time.Duration(n)), startCPU.Round(10*time.Millisecond), float64(rssKiB)/1024)
}

// chainWorkflow is a steps template of n sequential steps.
func chainWorkflow(n int, image string) *unstructured.Unstructured {
	steps := make([]any, n)
	for i := range steps {
		steps[i] = []any{map[string]any{"name": fmt.Sprintf("s%d", i), "template": "t"}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Workflow",
		"metadata":   map[string]any{"name": "bench-chain"},
		"spec": map[string]any{
			"entrypoint": "main",
			"templates": []any{
				map[string]any{"name": "t", "container": map[string]any{"image": image, "command": []any{"true"}}},
				map[string]any{"name": "main", "steps": steps},
			},
		},
	}}
}

// waitWorkflow polls the workflow until its phase is final.
func waitWorkflow(ctx context.Context, ns *namespace, name string, ctl *controllerProc) (string, error) {
	for {
		wf, err := ns.dyn.Resource(workflowsGVR()).Namespace(ns.name).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			phase, _, _ := unstructured.NestedString(wf.Object, "status", "phase")
			switch phase {
			case "Succeeded", "Failed", "Error":
				return phase, nil
			}
		}
		if ctl != nil && ctl.exited() {
			return "", fmt.Errorf("braid controller exited; its log: %s", ctl.logPath)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("workflow %s not done: %w", name, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// controllerProc is a `braid controller` process the bench started.
type controllerProc struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
}

// startController starts braid controller on the namespace only, with no
// leader election, its output in a log file that is kept.
func (b chainBench) startController(ns string) (*controllerProc, error) {
	home, err := os.MkdirTemp("", "braid-bench-kube-")
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(home, "controller.log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	args := []string{"controller", "--backend", "kube", "--namespaced", "--managed-namespace", ns, "--leader-elect=false"}
	if b.kubeconfig != "" {
		args = append(args, "--kubeconfig", b.kubeconfig)
	}
	cmd := exec.Command(b.bin, args...)
	cmd.Env = append(os.Environ(), "BRAID_HOME="+home)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start braid controller: %w", err)
	}
	p := &controllerProc{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *controllerProc) pid() int { return p.cmd.Process.Pid }

func (p *controllerProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, then SIGKILL after 15 s, to the process by its PID.
func (p *controllerProc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
