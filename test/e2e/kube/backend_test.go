package kube_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// backend is one test's braid on the cluster: `braid controller` and
// `braid server` as host processes (pods on this node cannot reach the
// apiserver without hostNetwork; the Deployments of manifests/install.yaml
// are for real clusters), and a namespace of its own.
type backend struct {
	t   *testing.T
	c   *apiClient
	bin string
	ns  string
	env []string
	// braidServer is the test's braid server (addr, secure).
	braidServer
	// token is a cluster-admin ServiceAccount's token, sent to the server
	// (which authenticates callers with the cluster: --auth-mode client).
	token    string
	identity string
	logDir   string

	mu   sync.Mutex
	ctl  *exec.Cmd
	runs int // controller starts, for log file names
}

func repoRootDir() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", "..", ".."))
}

// newBackend installs the CRDs, prepares a namespace and starts the
// controller and the server.
func newBackend(t *testing.T, ctx context.Context) *backend {
	t.Helper()
	return newBackendConfig(t, ctx, "")
}

// newBackendConfig is newBackend with config (when not "") as the
// config.yaml of braid's data directory, which the controller and the
// server read.
func newBackendConfig(t *testing.T, ctx context.Context, config string) *backend {
	t.Helper()
	c := newClient(t)
	bin := os.Getenv("BRAID_BIN")
	if bin == "" {
		t.Skip("set BRAID_BIN to the braid binary (the braid:dev image must hold the same build)")
	}
	if os.Getenv("BRAID_KUBE_IMAGES") == "1" {
		out, err := exec.CommandContext(ctx, filepath.Join(repoRootDir(), "hack", "kube", "images.sh")).CombinedOutput()
		if err != nil {
			t.Fatalf("hack/kube/images.sh: %v\n%s", err, out)
		}
	}
	installCRDs(t, ctx, c)
	ns := prepareNamespace(t, ctx, c, "braid-be")
	home := t.TempDir()
	if config != "" {
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := &backend{t: t, c: c, bin: bin, ns: ns, identity: "e2e-" + ns, logDir: t.TempDir(),
		env: append(os.Environ(), "BRAID_HOME="+home)}
	b.token = adminToken(t, ctx, c)
	b.startController()
	b.braidServer = b.startServer(t, ctx, "server")
	t.Cleanup(func() { b.mu.Lock(); defer b.mu.Unlock(); stopProcess(t, b.ctl) })
	return b
}

// braidServer is one `braid server --backend kube` a test talks to.
type braidServer struct {
	addr   string
	secure bool // it speaks TLS (a self-signed certificate)
}

// startServer starts `braid server --backend kube` with args on a port of
// its own, stopped when t ends, and waits until it is ready.
func (b *backend) startServer(t *testing.T, ctx context.Context, logName string, args ...string) braidServer {
	t.Helper()
	port := strconv.Itoa(freePort(t))
	srv := b.start(logName, append([]string{"server", "--backend", "kube", "--port", port}, args...)...)
	t.Cleanup(func() { stopProcess(t, srv) })
	s := braidServer{addr: "127.0.0.1:" + port}
	s.waitReady(t, ctx)
	return s
}

// start runs braid with args, its output in a log file under logDir.
func (b *backend) start(logName string, args ...string) *exec.Cmd {
	b.t.Helper()
	f, err := os.Create(filepath.Join(b.logDir, logName+".log"))
	if err != nil {
		b.t.Fatal(err)
	}
	cmd := exec.Command(b.bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = b.env, f, f
	if err := cmd.Start(); err != nil {
		b.t.Fatalf("start braid %s: %v", strings.Join(args, " "), err)
	}
	f.Close()
	b.t.Cleanup(func() {
		if b.t.Failed() {
			data, _ := os.ReadFile(f.Name())
			b.t.Logf("--- %s ---\n%s", logName, tail(string(data), 4000))
		}
	})
	return cmd
}

// startController starts `braid controller`, its Lease in the test's
// namespace so that it does not wait on another test's controller, and
// --namespaced to it, so that concurrent tests' controllers never drive
// each other's workflows.
func (b *backend) startController() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.runs++
	b.ctl = b.start(fmt.Sprintf("controller-%d", b.runs), "controller", "--backend", "kube",
		"--leader-election-namespace", b.ns, "--leader-election-identity", b.identity,
		"--namespaced", "--managed-namespace", b.ns)
}

// killController SIGKILLs the controller (no clean-up, no Lease release).
func (b *backend) killController() {
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.ctl.Process.Signal(syscall.SIGKILL)
	_ = b.ctl.Wait()
}

func stopProcess(t *testing.T, cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Logf("pid %d did not stop on SIGTERM; killing it", cmd.Process.Pid)
		_ = cmd.Process.Kill()
		<-done
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitReady polls /readyz over HTTPS and plain HTTP until one answers 200,
// and so learns whether the server speaks TLS.
func (s *braidServer) waitReady(t *testing.T, ctx context.Context) {
	t.Helper()
	hc := insecureHTTPClient()
	var err error
	for {
		for _, secure := range []bool{true, false} {
			s.secure = secure
			var resp *http.Response
			if resp, err = hc.Get(s.baseURL() + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("braid server on %s not ready: %v", s.addr, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// installCRDs applies manifests/base/crds through the API (409: present).
func installCRDs(t *testing.T, ctx context.Context, c *apiClient) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRootDir(), "manifests", "base", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under manifests/base/crds: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.create(ctx, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", obj); err != nil {
			t.Fatalf("install %s: %v", filepath.Base(f), err)
		}
	}
}

// cli runs the braid CLI against the server.
func (b *backend) cli(ctx context.Context, args ...string) (string, error) {
	args = append(args, "--argo-server", b.addr, "-n", b.ns)
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Env = append(slices.Clip(b.env), "ARGO_TOKEN=Bearer "+b.token)
	if b.secure {
		cmd.Env = append(cmd.Env, "ARGO_SECURE=true", "ARGO_INSECURE_SKIP_VERIFY=true")
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("braid %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// submit submits YAML through the server and returns the workflow's name.
func (b *backend) submit(ctx context.Context, name, spec string) string {
	b.t.Helper()
	path := filepath.Join(b.t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		b.t.Fatal(err)
	}
	out, err := b.cli(ctx, "submit", path, "-o", "name")
	if err != nil {
		b.t.Fatal(err)
	}
	return strings.TrimSpace(lastLine(out))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// workflow reads the Workflow custom resource straight from the apiserver.
func (b *backend) workflow(ctx context.Context, name string) (*v1alpha1.Workflow, error) {
	var wf v1alpha1.Workflow
	_, err := b.c.do(ctx, http.MethodGet, "/apis/argoproj.io/v1alpha1/namespaces/"+b.ns+"/workflows/"+name, nil, &wf)
	return &wf, err
}

// waitWorkflow polls the CR until cond holds.
func (b *backend) waitWorkflow(ctx context.Context, name string, what string, cond func(*v1alpha1.Workflow) bool) *v1alpha1.Workflow {
	b.t.Helper()
	for {
		wf, err := b.workflow(ctx, name)
		if err == nil && cond(wf) {
			return wf
		}
		select {
		case <-ctx.Done():
			b.t.Fatalf("workflow %s: %s: %v (last: phase %q, err %v)", name, what, ctx.Err(), wf.Status.Phase, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (b *backend) waitCompleted(ctx context.Context, name string) *v1alpha1.Workflow {
	b.t.Helper()
	return b.waitWorkflow(ctx, name, "completed", func(wf *v1alpha1.Workflow) bool { return wf.Status.Phase.Completed() })
}

// pods lists the workflow's pods.
func (b *backend) pods(ctx context.Context, wf string) []corev1.Pod {
	b.t.Helper()
	var list corev1.PodList
	q := url.Values{"labelSelector": {"workflows.argoproj.io/workflow=" + wf}}
	if _, err := b.c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+b.ns+"/pods?"+q.Encode(), nil, &list); err != nil {
		b.t.Fatal(err)
	}
	return list.Items
}

func kubectlBin() string {
	dir := os.Getenv("BRAID_KUBE_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "braid-kube")
	}
	p := filepath.Join(dir, "bin", "kubectl")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

const helloYAML = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: hello-
spec:
  entrypoint: main
  templates:
  - name: main
    container:
      image: busybox
      command: [sh, -c, "echo hello from a braid pod"]
`

// chainYAML is n steps in a row, each running cmd.
func chainYAML(prefix string, n int, cmd string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  generateName: %s-\nspec:\n  entrypoint: main\n  templates:\n  - name: main\n    steps:\n", prefix)
	for i := range n {
		fmt.Fprintf(&b, "    - - name: s%d\n        template: step\n", i)
	}
	fmt.Fprintf(&b, "  - name: step\n    container:\n      image: busybox:1.36\n      command: [sh, -c, %q]\n", cmd)
	return b.String()
}

// TestKubeBackend runs braid's Kubernetes backend end to end: visibility
// through the CLI and kubectl, a controller killed mid-workflow, bad input,
// and the per-step overhead of a chain.
func TestKubeBackend(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b := newBackend(t, ctx)

	t.Run("visibility", func(t *testing.T) { b.t = t; testVisibility(t, ctx, b) })
	t.Run("template-ref", func(t *testing.T) { b.t = t; testTemplateRef(t, ctx, b) })
	t.Run("controller-restart", func(t *testing.T) { b.t = t; testRestart(t, ctx, b) })
	t.Run("bad-image", func(t *testing.T) { b.t = t; testBadImage(t, ctx, b) })
	t.Run("pod-deleted", func(t *testing.T) { b.t = t; testPodDeleted(t, ctx, b) })
	t.Run("overhead", func(t *testing.T) { b.t = t; testOverhead(t, ctx, b) })
}

func testVisibility(t *testing.T, ctx context.Context, b *backend) {
	name := b.submit(ctx, "hello", helloYAML)
	wf := b.waitCompleted(ctx, name)
	if wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("%s: phase %s (%s), want Succeeded", name, wf.Status.Phase, wf.Status.Message)
	}
	out, err := b.cli(ctx, "list")
	if err != nil || !strings.Contains(out, name) || !strings.Contains(out, "Succeeded") {
		t.Errorf("braid list: want %s Succeeded in\n%s (err %v)", name, out, err)
	}
	out, err = b.cli(ctx, "get", name)
	if err != nil || !strings.Contains(out, "Succeeded") {
		t.Errorf("braid get %s: want Succeeded in\n%s (err %v)", name, out, err)
	}
	out, err = b.cli(ctx, "logs", name)
	if err != nil || !strings.Contains(out, "hello from a braid pod") {
		t.Errorf("braid logs %s: want the echo in\n%s (err %v)", name, out, err)
	}
	kubectl := kubectlBin()
	if kubectl == "" {
		t.Log("kubectl get wf not checked: no kubectl built under $BRAID_KUBE_DIR/bin (hack/kube/build.sh builds it)")
		return
	}
	cmd := exec.CommandContext(ctx, kubectl, "get", "wf", "-n", b.ns)
	cmd.Env = os.Environ()
	kout, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(kout), name) || !strings.Contains(string(kout), "Succeeded") {
		t.Errorf("kubectl get wf -n %s: want %s Succeeded in\n%s (err %v)", b.ns, name, kout, err)
	}
	t.Logf("kubectl get wf -n %s:\n%s", b.ns, kout)
}

// testRestart kills the controller while the second of three steps runs;
// the restarted controller finishes the workflow, and the pods of the
// steps are the same objects (UID) as before the kill: none ran twice.
func testRestart(t *testing.T, ctx context.Context, b *backend) {
	name := b.submit(ctx, "chain3", chainYAML("chain3", 3, "sleep 3; echo ran"))
	b.waitWorkflow(ctx, name, "first step done, second running", func(wf *v1alpha1.Workflow) bool {
		done, running := 0, 0
		for _, n := range wf.Status.Nodes {
			if n.Type == v1alpha1.NodeTypePod && n.Phase == v1alpha1.NodeSucceeded {
				done++
			}
			if n.Type == v1alpha1.NodeTypePod && n.Phase == v1alpha1.NodeRunning {
				running++
			}
		}
		return done == 1 && running == 1
	})
	before := map[string]string{} // pod name -> UID
	for _, p := range b.pods(ctx, name) {
		before[p.Name] = string(p.UID)
	}
	b.killController()
	t.Logf("controller killed with %d pods: %v", len(before), before)
	// The downtime is the thing under test: the second step's pod runs on
	// for a second with no controller.
	time.Sleep(time.Second)
	b.startController()
	wf := b.waitCompleted(ctx, name)
	if wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("%s: phase %s (%s), want Succeeded", name, wf.Status.Phase, wf.Status.Message)
	}
	after := b.pods(ctx, name)
	if len(after) != 3 {
		t.Errorf("%d pods after the restart, want 3 (one per step)", len(after))
	}
	for _, p := range after {
		if uid, ok := before[p.Name]; ok && uid != string(p.UID) {
			t.Errorf("pod %s was created again after the restart (UID %s, was %s): a step ran twice", p.Name, p.UID, uid)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.RestartCount != 0 {
				t.Errorf("pod %s container %s restarted %d times", p.Name, cs.Name, cs.RestartCount)
			}
		}
	}
	pods := 0
	for _, n := range wf.Status.Nodes {
		if n.Type == v1alpha1.NodeTypePod {
			pods++
			if n.Phase != v1alpha1.NodeSucceeded {
				t.Errorf("node %s: %s (%s)", n.DisplayName, n.Phase, n.Message)
			}
		}
	}
	if pods != 3 {
		t.Errorf("%d pod nodes, want 3", pods)
	}
}

// podNode returns the workflow's first Pod node.
func podNode(wf *v1alpha1.Workflow) *v1alpha1.NodeStatus {
	for _, n := range wf.Status.Nodes {
		if n.Type == v1alpha1.NodeTypePod {
			return &n
		}
	}
	return nil
}

func testBadImage(t *testing.T, ctx context.Context, b *backend) {
	spec := strings.Replace(helloYAML, "image: busybox", "image: braid-e2e/no-such-image:0", 1)
	start := time.Now()
	name := b.submit(ctx, "badimage", spec)
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	wf := b.waitCompleted(wctx, name)
	n := podNode(wf)
	t.Logf("%s: workflow %s after %v; node %v", name, wf.Status.Phase, time.Since(start).Round(time.Second), n)
	if n == nil || n.Phase != v1alpha1.NodeError || !strings.Contains(strings.ToLower(n.Message), "image") {
		t.Errorf("node = %+v, want Error with a message about the image", n)
	}
}

func testPodDeleted(t *testing.T, ctx context.Context, b *backend) {
	spec := strings.Replace(helloYAML, `"echo hello from a braid pod"`, `"sleep 120"`, 1)
	name := b.submit(ctx, "poddeleted", spec)
	b.waitWorkflow(ctx, name, "step running", func(wf *v1alpha1.Workflow) bool {
		n := podNode(wf)
		return n != nil && n.Phase == v1alpha1.NodeRunning
	})
	pods := b.pods(ctx, name)
	if len(pods) != 1 {
		t.Fatalf("%d pods, want 1", len(pods))
	}
	zero := int64(0)
	if _, err := b.c.do(ctx, http.MethodDelete, "/api/v1/namespaces/"+b.ns+"/pods/"+pods[0].Name,
		&metav1.DeleteOptions{GracePeriodSeconds: &zero}, nil); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	wf := b.waitCompleted(wctx, name)
	n := podNode(wf)
	t.Logf("%s: workflow %s; node %s %q", name, wf.Status.Phase, n.Phase, n.Message)
	if n.Phase != v1alpha1.NodeError || !strings.Contains(n.Message, "deleted") {
		t.Errorf("node %s %q, want Error with a message saying the pod was deleted", n.Phase, n.Message)
	}
}

// testOverhead runs a 10-step chain while watching its pods and its
// Workflow: the overhead of a step is the time from the API showing a
// pod's main container ended (its watch event) to the next pod's creation (its watch
// event); from the container's own end (the emissary's finishedAt) it
// also holds the kubelet's status report. Workflow writes are counted as
// the Workflow's watch events.
func testOverhead(t *testing.T, ctx context.Context, b *backend) {
	const steps = 10
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	podEvents := make(chan podEvent, 1024)
	wfEvents := make(chan wfEvent, 4096)
	opened := make(chan struct{}, 2)
	go b.watchPods(wctx, opened, podEvents)
	go b.watchWorkflows(wctx, opened, wfEvents)
	for range 2 {
		select {
		case <-opened:
		case <-time.After(30 * time.Second):
			t.Fatal("the watches did not open")
		}
	}
	name := b.submit(ctx, "chain10", chainYAML("chain10", steps, "echo step"))
	wf := b.waitCompleted(ctx, name)
	if wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("%s: %s (%s)", name, wf.Status.Phase, wf.Status.Message)
	}
	added := map[string]time.Time{}
	ended := map[string]time.Time{}
	finished := map[string]time.Time{}
	var order []string
	pod := func(e podEvent) {
		if e.pod.Labels["workflows.argoproj.io/workflow"] != name {
			return
		}
		if _, ok := added[e.pod.Name]; !ok && e.typ == "ADDED" {
			added[e.pod.Name] = e.at
			order = append(order, e.pod.Name)
		}
		if _, ok := ended[e.pod.Name]; !ok && mainTerminated(&e.pod) {
			ended[e.pod.Name] = e.at
			finished[e.pod.Name] = emissaryFinish(&e.pod)
		}
	}
	// Read the watches until they have shown every pod's end and the
	// Workflow's completion.
	writes, completed := 0, false
	timeout := time.After(30 * time.Second)
	for len(ended) < steps || !completed {
		select {
		case e := <-podEvents:
			pod(e)
		case e := <-wfEvents:
			if e.name == name {
				writes++
				completed = completed || e.completed
			}
		case <-timeout:
			t.Fatalf("the watches showed %d of %d pods ending; the Workflow completed: %v", len(ended), steps, completed)
		}
	}
	cancel()
	for len(podEvents) > 0 {
		pod(<-podEvents)
	}
	for len(wfEvents) > 0 {
		if (<-wfEvents).name == name {
			writes++
		}
	}
	var fromAPI, fromContainer []time.Duration
	for i := 1; i < len(order); i++ {
		prev, next := order[i-1], order[i]
		fromAPI = append(fromAPI, added[next].Sub(ended[prev]))
		if f := finished[prev]; !f.IsZero() {
			fromContainer = append(fromContainer, added[next].Sub(f))
		}
	}
	if len(order) != steps {
		t.Fatalf("saw %d pods created, want %d", len(order), steps)
	}
	t.Logf("10-step chain: median overhead %v from the pod's end in the API to the next pod's creation, %v from the container's end (emissary finishedAt); %d Workflow writes (watch events) + %d pod creates = %.1f writes per step",
		median(fromAPI), median(fromContainer), writes, steps, float64(writes+steps)/steps)
	fmt.Printf("kube-overhead: median %v (API end -> next pod), %v (container end -> next pod), %.1f writes/step\n",
		median(fromAPI), median(fromContainer), float64(writes+steps)/steps)
}

type podEvent struct {
	typ string
	at  time.Time
	pod corev1.Pod
}

// wfEvent is a change of a Workflow: its name, and whether it is completed.
type wfEvent struct {
	name      string
	completed bool
}

// watchStream opens a watch on path, sends on opened once the apiserver
// answered, and calls fn with each event's type, its receive time and its
// raw object, until ctx ends.
func (b *backend) watchStream(ctx context.Context, path string, opened chan<- struct{}, fn func(typ string, at time.Time, obj json.RawMessage)) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.c.server+path, nil)
	if err != nil {
		return
	}
	if b.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.c.token)
	}
	resp, err := (&http.Client{Transport: b.c.http.Transport}).Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	opened <- struct{}{}
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return
		}
		fn(ev.Type, time.Now(), ev.Object)
	}
}

func (b *backend) watchPods(ctx context.Context, opened chan<- struct{}, out chan<- podEvent) {
	b.watchStream(ctx, "/api/v1/namespaces/"+b.ns+"/pods?watch=1", opened, func(typ string, at time.Time, obj json.RawMessage) {
		var p corev1.Pod
		if json.Unmarshal(obj, &p) == nil {
			out <- podEvent{typ: typ, at: at, pod: p}
		}
	})
}

func (b *backend) watchWorkflows(ctx context.Context, opened chan<- struct{}, out chan<- wfEvent) {
	b.watchStream(ctx, "/apis/argoproj.io/v1alpha1/namespaces/"+b.ns+"/workflows?watch=1", opened, func(typ string, _ time.Time, obj json.RawMessage) {
		var wf struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Status   struct {
				Phase v1alpha1.WorkflowPhase `json:"phase"`
			} `json:"status"`
		}
		if typ == "MODIFIED" && json.Unmarshal(obj, &wf) == nil {
			out <- wfEvent{name: wf.Metadata.Name, completed: wf.Status.Phase.Completed()}
		}
	})
}

// mainTerminated: the pod's status shows the main container ended.
func mainTerminated(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == "main" && cs.State.Terminated != nil {
			return true
		}
	}
	return false
}

// emissaryFinish is the finishedAt of the main container's termination
// message (nanoseconds, unlike the API's timestamps), or zero.
func emissaryFinish(p *corev1.Pod) time.Time {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != "main" || cs.State.Terminated == nil {
			continue
		}
		var m struct {
			FinishedAt *time.Time `json:"finishedAt"`
		}
		if json.Unmarshal([]byte(cs.State.Terminated.Message), &m) == nil && m.FinishedAt != nil {
			return *m.FinishedAt
		}
	}
	return time.Time{}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}
