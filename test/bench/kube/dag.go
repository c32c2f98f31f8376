package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/controller"
	kuberuntime "github.com/braidwf/braid/internal/runtime/kube"
	"github.com/braidwf/braid/internal/store"
	kubestore "github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// bogusNode is where K2's pods are bound: a node that does not exist, so
// no scheduler and no kubelet act on them.
const bogusNode = "braid-bench-none"

// dagBench is K2: DAGs of steps that do nothing, driven in-process.
type dagBench struct {
	kubeconfig string
	shape      string // layers or wide
	width      int
	timeout    time.Duration
	profile    string
}

type dagResult struct {
	nodes        int
	wall, cpu    time.Duration
	storeWrites  int64 // the store's Writes()
	storeCounts  map[string]int64
	rtCounts     map[string]int64
	storeTotal   int64
	rtTotal      int64
	conflicts    int64
	rssKiB       int64
	statusFormat string
	podsSeen     string // the pods in the namespace, by the manager that created them
}

func (b dagBench) runAll(rc *rest.Config, sizes []int) error {
	largest := 0
	for _, n := range sizes {
		largest = max(largest, n)
	}
	for _, n := range sizes {
		profile := ""
		if n == largest {
			profile = b.profile
		}
		r, err := b.run(rc, n, profile)
		if err != nil {
			return fmt.Errorf("%d nodes: %w", n, err)
		}
		b.report(r)
	}
	return nil
}

func (b dagBench) describeShape(n int) string {
	if b.shape == "wide" {
		return fmt.Sprintf("%d independent tasks", n)
	}
	return fmt.Sprintf("%d layers of %d, each task needing two of the layer before", n/b.width, b.width)
}

func (b dagBench) report(r dagResult) {
	n := float64(r.nodes)
	fmt.Printf("\nK2 (DAG of %d no-op steps: %s; pods marked done at once; in-process controller, kube store + kube runtime):\n",
		r.nodes, b.describeShape(r.nodes))
	fmt.Printf("  wall %s, %.2f ms per node; controller CPU %s, %.2f ms per node; bench process peak RSS %.1f MiB\n",
		r.wall.Round(time.Millisecond), float64(r.wall.Microseconds())/1000/n,
		r.cpu.Round(10*time.Millisecond), float64(r.cpu.Microseconds())/1000/n, float64(r.rssKiB)/1024)
	fmt.Printf("  API writes per step: %.2f (workflow writes %.2f by the store's Writes() [%d], pod writes %.2f [%d]; %d conflicts; final status %s)\n",
		float64(r.storeWrites+r.rtTotal)/n, float64(r.storeWrites)/n, r.storeWrites, float64(r.rtTotal)/n, r.rtTotal, r.conflicts, r.statusFormat)
	fmt.Printf("  store's transport: %s; runtime's transport: %s (Argo: about 40 writes per single-pod workflow)\n",
		describe(r.storeCounts), describe(r.rtCounts))
	fmt.Printf("  pods in the namespace, by creator: %s\n", r.podsSeen)
}

// dagWorkflow is the K2 workflow of n tasks.
func (b dagBench) dagWorkflow(ns string, n int) (*v1alpha1.Workflow, error) {
	var sb strings.Builder
	fmt.Fprintf(&sb, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: bench-dag, namespace: %s}
spec:
  entrypoint: main
  templates:
  - name: t
    podSpecPatch: '{"nodeName": %q}'
    container: {image: "busybox:1.36", command: ["true"]}
  - name: main
    dag:
      tasks:
`, ns, bogusNode)
	width := b.width
	if b.shape == "wide" {
		width = n
	} else if b.shape != "layers" || width <= 0 || n%width != 0 {
		return nil, fmt.Errorf("shape %q width %d: want wide, or layers with a width that divides %d", b.shape, width, n)
	}
	for i := range n {
		fmt.Fprintf(&sb, "      - {name: t%d, template: t", i)
		if l, k := i/width, i%width; l > 0 {
			prev := (l - 1) * width
			if width == 1 {
				fmt.Fprintf(&sb, ", depends: \"t%d\"", prev)
			} else {
				fmt.Fprintf(&sb, ", depends: \"t%d && t%d\"", prev+k, prev+(k+1)%width)
			}
		}
		sb.WriteString("}\n")
	}
	var wf v1alpha1.Workflow
	if err := yaml.UnmarshalStrict([]byte(sb.String()), &wf); err != nil {
		return nil, fmt.Errorf("the bench's workflow: %w", err)
	}
	return &wf, nil
}

// run drives one DAG of n nodes to its end.
func (b dagBench) run(rc *rest.Config, n int, profile string) (dagResult, error) {
	res := dagResult{nodes: n}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	ns, err := newNamespace(ctx, rc, "dag")
	if err != nil {
		return res, err
	}
	defer ns.delete()
	wf, err := b.dagWorkflow(ns.name, n)
	if err != nil {
		return res, err
	}
	patcher, err := b.startPatcher(ctx, ns.name)
	if err != nil {
		return res, err
	}
	defer patcher.stop()

	h, err := newHarness(rc, ns.name)
	if err != nil {
		return res, err
	}
	defer h.close()
	if err := h.rt.WaitSynced(ctx); err != nil {
		return res, err
	}
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		return res, err
	}
	defer stopProfile()
	cpu0, err := cpuTime(os.Getpid())
	if err != nil {
		return res, err
	}
	w, err := watchDone(ctx, ns, wf.Name)
	if err != nil {
		return res, err
	}
	start := time.Now()
	if err := h.st.Create(ctx, wf); err != nil {
		w.Stop()
		return res, fmt.Errorf("submit: %w", err)
	}
	w0 := h.st.Writes()
	s0, _, _ := h.storeCount.snapshot()
	final, err := h.wait(ctx, ns, wf.Name, w, patcher)
	if err != nil {
		return res, err
	}
	res.wall = time.Since(start)
	cpu1, err := cpuTime(os.Getpid())
	if err != nil {
		return res, err
	}
	res.cpu = cpu1 - cpu0
	res.rssKiB = peakRSS(os.Getpid())
	res.storeWrites = h.st.Writes() - w0
	res.storeCounts, res.storeTotal, res.conflicts = h.storeCount.snapshot()
	for k, v := range s0 { // the submit is not the controller's
		res.storeCounts[k] -= v
		res.storeTotal -= v
	}
	var rc2 int64
	res.rtCounts, res.rtTotal, rc2 = h.rtCount.snapshot()
	res.conflicts += rc2
	res.statusFormat = statusFormat(final)
	if res.podsSeen, err = countPods(ctx, ns); err != nil {
		return res, err
	}
	return res, checkDAGEnd(final, n, res.podsSeen)
}

// startCPUProfile writes a CPU profile to path until the returned function
// is called; with path "" it does nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// checkDAGEnd checks that the DAG of n nodes succeeded with n pods, all of
// them created by this bench's runtime (podsSeen, from countPods).
func checkDAGEnd(final *v1alpha1.Workflow, n int, podsSeen string) error {
	pods := 0
	for _, nd := range final.Status.Nodes {
		if nd.Type == v1alpha1.NodeTypePod && nd.Phase == v1alpha1.NodeSucceeded {
			pods++
		}
	}
	if podsSeen != fmt.Sprintf("braid-runtime %d", n) {
		return fmt.Errorf("pods in the namespace by creator: %s: another braid controller that watches every namespace drove this workflow too; run again when none does", podsSeen)
	}
	if final.Status.Phase != v1alpha1.WorkflowSucceeded || pods != n {
		return fmt.Errorf("workflow ended %s with %d pods Succeeded (want Succeeded, %d): %s", final.Status.Phase, pods, n, final.Status.Message)
	}
	return nil
}

// countPods lists the namespace's pods and counts them by the field
// manager (the client's user agent) that created them.
func countPods(ctx context.Context, ns *namespace) (string, error) {
	pods, err := ns.cs.CoreV1().Pods(ns.name).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("list pods: %w", err)
	}
	by := map[string]int64{}
	for _, p := range pods.Items {
		m := "?"
		for _, f := range p.ManagedFields {
			if f.Operation == metav1.ManagedFieldsOperationUpdate && f.Subresource == "" {
				m = f.Manager
				break
			}
		}
		by[m]++
	}
	return describe(by), nil
}

func statusFormat(wf *v1alpha1.Workflow) string {
	switch {
	case wf.Status.OffloadNodeStatusVersion != "":
		return "offloaded"
	case wf.Status.CompressedNodes != "":
		return "compressed"
	}
	return "plain"
}

// harness is the controller under test: the kube store and the kube
// runtime, each on a client whose writes are counted, and a Manager.
type harness struct {
	st         *kubestore.Store
	rt         *kuberuntime.Runtime
	storeCount *writeCounter
	rtCount    *writeCounter
	cancel     context.CancelFunc
	done       chan error
}

func newHarness(rc *rest.Config, ns string) (*harness, error) {
	h := &harness{storeCount: newWriteCounter(), rtCount: newWriteCounter(), done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	src := rest.CopyConfig(rc)
	src.UserAgent = "braid-store"
	src.Wrap(h.storeCount.wrap)
	rrc := rest.CopyConfig(rc)
	rrc.UserAgent = "braid-runtime"
	rrc.Wrap(h.rtCount.wrap)
	var err error
	if h.st, err = kubestore.New(kubestore.Options{Config: src, Namespace: ns, Logger: log}); err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(rrc)
	if err != nil {
		return nil, errors.Join(err, h.st.Close())
	}
	// The pods never run: the bounded waits must not end them first.
	h.rt, err = kuberuntime.New(kuberuntime.Config{Client: client, Namespace: ns, Logger: log,
		UnschedulableWait: time.Hour, PullWait: time.Hour})
	if err != nil {
		return nil, errors.Join(err, h.st.Close())
	}
	ctl, err := controller.New(controller.Options{Store: h.st, Runtime: h.rt, Hooks: h.rt, Logger: log})
	if err == nil {
		var mgr *controller.Manager
		if mgr, err = ctl.NewManager(h.st, controller.StoreTemplates(h.st)); err == nil {
			var mctx context.Context
			mctx, h.cancel = context.WithCancel(context.Background())
			go func() { h.done <- mgr.Run(mctx) }()
			return h, nil
		}
	}
	return nil, errors.Join(err, h.rt.Close(), h.st.Close())
}

// watchDone watches the workflow from before the submit, outside the
// counted clients, so that the bench's own waiting costs little CPU in the
// process whose CPU is the controller's (one decode per write).
func watchDone(ctx context.Context, ns *namespace, name string) (watch.Interface, error) {
	return ns.dyn.Resource(workflowsGVR()).Namespace(ns.name).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + name})
}

// wait waits for the watch's event (a new watch when one ends early),
// then reads the workflow from the store.
func (h *harness) wait(ctx context.Context, ns *namespace, name string, w watch.Interface, p *patcherProc) (*v1alpha1.Workflow, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	defer func() { w.Stop() }()
	for done := false; !done; {
		select {
		case ev, ok := <-w.ResultChan():
			switch {
			case ok && (ev.Type == watch.Added || ev.Type == watch.Modified):
				if u, isU := ev.Object.(*unstructured.Unstructured); isU {
					phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
					done = v1alpha1.WorkflowPhase(phase).Completed()
				}
			case !ok:
				var err error
				if w, err = watchDone(ctx, ns, name); err != nil {
					return nil, err
				}
			}
		case <-tick.C:
			if p.exited() {
				return nil, errors.New("the patcher exited")
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("workflow %s not done: %w", name, ctx.Err())
		}
	}
	// The store reads its informer, which may be a moment behind.
	for {
		obj, err := h.st.Get(ctx, store.KindWorkflow, ns.name, name)
		if wf, ok := obj.(*v1alpha1.Workflow); err == nil && ok && wf.Status.Phase.Completed() {
			return wf, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("workflow %s: the store does not show it done: %w", name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (h *harness) close() {
	h.cancel()
	<-h.done
	_ = h.rt.Close()
	_ = h.st.Close()
}

// patcherProc is the bench's own child process that marks pods done.
type patcherProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startPatcher starts the patcher and waits until its informer synced.
func (b dagBench) startPatcher(ctx context.Context, ns string) (*patcherProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{patcherArg, "-namespace", ns}
	if b.kubeconfig != "" {
		args = append(args, "-kubeconfig", b.kubeconfig)
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the patcher: %w", err)
	}
	p := &patcherProc{cmd: cmd, done: make(chan struct{})}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := sc.Scan() && sc.Text() == patcherReady
		ready <- ok
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(p.done)
	}()
	select {
	case ok := <-ready:
		if ok {
			return p, nil
		}
		p.stop()
		return nil, errors.New("the patcher did not start")
	case <-ctx.Done():
		p.stop()
		return nil, fmt.Errorf("the patcher did not start: %w", ctx.Err())
	}
}

func (p *patcherProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, then SIGKILL after 10 s, to the patcher by its PID.
func (p *patcherProc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
