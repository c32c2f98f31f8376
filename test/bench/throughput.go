package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	apiclient "github.com/braidwf/braid/pkg/apiclient/client"
	wfapi "github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// throughput is W6: count single-step workflows submitted through the API
// of a real braid server by clients at once, as fast as they go, over gRPC
// (Argo's wire format) or REST (JSON, the client's HTTP/1 transport). It
// reports workflows per minute from the first submit to the last
// completion, and the server's peak RSS.
type throughput struct {
	count      int
	clients    int
	profile    string // the server's CPU profile, when set
	plain      bool   // the server without TLS or client auth
	transports string // comma-separated: grpc, rest
}

type throughputResult struct {
	took    time.Duration
	perMin  float64
	peakKiB int64
}

// run runs W6 once over gRPC, or over REST when rest is set.
func (w throughput) run(bin, dir string, rest bool) (throughputResult, error) {
	var res throughputResult
	home := filepath.Join(dir, "home-w6")
	defer os.RemoveAll(home)
	var extra []string
	if w.profile != "" {
		extra = append(extra, "--cpuprofile", w.profile)
	}
	srv, err := startServer(bin, home, filepath.Join(dir, "w6-server.log"), w.plain, extra...)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	client := srv.client
	if rest {
		c, err := srv.dial(true)
		if err != nil {
			return res, err
		}
		defer c.Close()
		client = c.Workflow
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := waitReady(ctx, client); err != nil {
		return res, err
	}

	start := time.Now()
	if err := createAll(ctx, client, w.count, w.clients, w6Workflow); err != nil {
		return res, err
	}
	if err := waitCompleted(ctx, client, w.count); err != nil {
		return res, err
	}
	res.took = time.Since(start)
	res.perMin = float64(w.count) / res.took.Minutes()
	res.peakKiB = peakRSS(srv.pid())
	return res, nil
}

// createAll creates count workflows, mk(0) to mk(count-1), from clients
// goroutines at once; it returns the first error.
func createAll(ctx context.Context, client wfapi.WorkflowServiceClient, count, clients int, mk func(int64) *v1alpha1.Workflow) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(count) {
					return
				}
				if _, err := client.CreateWorkflow(ctx, &wfapi.WorkflowCreateRequest{Namespace: "default", Workflow: mk(i)}); err != nil {
					errs <- fmt.Errorf("create %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func w6Workflow(i int64) *v1alpha1.Workflow {
	return &v1alpha1.Workflow{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: "Workflow"},
		ObjectMeta: metav1.ObjectMeta{Name: "w6-" + strconv.FormatInt(i, 10)},
		Spec: v1alpha1.WorkflowSpec{
			Entrypoint: "main",
			Templates:  []v1alpha1.Template{{Name: "main", Container: trueContainer()}},
		},
	}
}

// trueContainer runs `true`.
func trueContainer() *corev1.Container {
	return &corev1.Container{Image: "busybox", Command: []string{"true"}}
}

func waitReady(ctx context.Context, client wfapi.WorkflowServiceClient) error {
	for {
		_, err := client.ListWorkflows(ctx, &wfapi.WorkflowListRequest{Namespace: "default", ListOptions: &metav1.ListOptions{Limit: 1}})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server not ready: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitCompleted polls the list of completed workflows until it holds n.
func waitCompleted(ctx context.Context, client wfapi.WorkflowServiceClient, n int) error {
	for {
		list, err := client.ListWorkflows(ctx, &wfapi.WorkflowListRequest{
			Namespace:   "default",
			ListOptions: &metav1.ListOptions{LabelSelector: "workflows.argoproj.io/completed=true"},
			Fields:      "items.metadata.name,items.status.phase",
		})
		if err != nil {
			return err
		}
		if len(list.Items) >= n {
			for _, it := range list.Items {
				if it.Status.Phase != v1alpha1.WorkflowSucceeded {
					return fmt.Errorf("%s ended %s%s", it.Name, it.Status.Phase, why(ctx, client, it.Name))
				}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d completed: %w", len(list.Items), n, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// why is what the workflow name and its nodes say about how they ended,
// as ": message; node: phase message...", or "" when it cannot be read.
func why(ctx context.Context, client wfapi.WorkflowServiceClient, name string) string {
	wf, err := client.GetWorkflow(ctx, &wfapi.WorkflowGetRequest{Namespace: "default", Name: name})
	if err != nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(": " + wf.Status.Message)
	for id, n := range wf.Status.Nodes {
		fmt.Fprintf(&b, "; node %s (%s): %s %s", id, n.Type, n.Phase, n.Message)
	}
	return b.String()
}

// peakRSS reads a live process's peak resident set (VmHWM) in KiB.
func peakRSS(pid int) int64 { return procStatusKiB(pid, "VmHWM:") }

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// big is W7: one workflow of n parallel steps (a loop over a sequence)
// through a braid server. It reports the wall time and what the server
// wrote per finished step: the bytes it passed to write(2) (wchar) and
// those that reached the disk (write_bytes), from /proc/<pid>/io.
type big struct {
	steps int
	plain bool // the server without TLS or client auth
}

type bigResult struct {
	took                    time.Duration
	wcharPerStep, wbPerStep float64
	peakKiB                 int64
}

func (w big) run(bin, dir string) (bigResult, error) {
	var res bigResult
	home := filepath.Join(dir, "home-w7")
	defer os.RemoveAll(home)
	// One workflow of w.steps nodes and more: raise limits.maxNodes (50,000
	// by default) past it.
	if err := os.MkdirAll(home, 0o700); err != nil {
		return res, err
	}
	limits := fmt.Sprintf("limits: {maxNodes: %d}\n", 2*w.steps+10)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(limits), 0o600); err != nil {
		return res, err
	}
	srv, err := startServer(bin, home, "", w.plain)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	client := srv.client
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := waitReady(ctx, client); err != nil {
		return res, err
	}
	wc0, wb0 := procIO(srv.pid())
	start := time.Now()
	if _, err := client.CreateWorkflow(ctx, &wfapi.WorkflowCreateRequest{Namespace: "default", Workflow: fanOut("w7", w.steps)}); err != nil {
		return res, err
	}
	if err := waitCompleted(ctx, client, 1); err != nil {
		return res, err
	}
	res.took = time.Since(start)
	wc1, wb1 := procIO(srv.pid())
	res.wcharPerStep = float64(wc1-wc0) / float64(w.steps)
	res.wbPerStep = float64(wb1-wb0) / float64(w.steps)
	res.peakKiB = peakRSS(srv.pid())
	return res, nil
}

// fanOut is a workflow of one step run n times in parallel (a loop over a
// sequence), each running `true`: n+2 nodes when it is done.
func fanOut(name string, n int) *v1alpha1.Workflow {
	count := intstr.FromString(strconv.Itoa(n))
	return &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.WorkflowSpec{
			Entrypoint: "main",
			Templates: []v1alpha1.Template{
				{Name: "main", Steps: []v1alpha1.ParallelSteps{{{Name: "s", Template: "true", WithSequence: &v1alpha1.Sequence{Count: &count}}}}},
				{Name: "true", Container: trueContainer()},
			},
		},
	}
}

// procIO reads wchar and write_bytes of a live process.
func procIO(pid int) (wchar, writeBytes int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "wchar":
			wchar = n
		case "write_bytes":
			writeBytes = n
		}
	}
	return wchar, writeBytes
}

// benchServer is a braid server the bench started, with a gRPC client.
type benchServer struct {
	cmd    *exec.Cmd
	done   chan struct{} // closed when the server has exited
	opts   apiclient.Options
	conn   *apiclient.Client
	client wfapi.WorkflowServiceClient
	log    *os.File
}

// dial opens another client to the server, with the same credentials:
// gRPC, or REST (JSON) when http1 is set. The caller closes it.
func (s *benchServer) dial(http1 bool) (*apiclient.Client, error) {
	o := s.opts
	o.HTTP1 = http1
	return apiclient.New(o)
}

// transportName names a client transport in the reports.
func transportName(http1 bool) string {
	if http1 {
		return "REST"
	}
	return "gRPC"
}

// serverKind says how the bench's servers run, for the report.
func serverKind(plain bool) string {
	if plain {
		return "server without TLS or auth"
	}
	return "server with TLS and a token"
}

// startServer starts `braid server` on a free port with its data in home,
// its output to logPath ("" discards it), and connects a gRPC client. By
// default the server runs as users run it, with TLS and client auth: the
// client pins the certificate fingerprint that the server records in
// home/server.json and sends the local token of home/token, as the braid
// CLI does. plain runs it without either (--secure=false --auth-mode
// server).
func startServer(bin, home, logPath string, plain bool, extra ...string) (*benchServer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	args := []string{"server", "--port", port, "--data-dir", home}
	if plain {
		args = append(args, "--secure=false", "--auth-mode", "server")
	}
	s := &benchServer{cmd: exec.Command(bin, append(args, extra...)...), done: make(chan struct{})}
	if logPath != "" {
		if s.log, err = os.Create(logPath); err != nil {
			return nil, err
		}
		s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	}
	if err := s.cmd.Start(); err != nil {
		s.closeLog()
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	o := apiclient.Options{Address: addr}
	if !plain {
		if o, err = s.credentials(home, addr); err != nil {
			s.stop()
			return nil, err
		}
	}
	s.opts = o
	if s.conn, err = apiclient.New(o); err != nil {
		s.stop()
		return nil, err
	}
	s.client = s.conn.Workflow
	return s, nil
}

// credentials waits (up to a minute) for the server to record itself in
// home/server.json, then returns the options to reach it: TLS pinned to
// its certificate and its local token.
func (s *benchServer) credentials(home, addr string) (apiclient.Options, error) {
	var info struct {
		Address     string `json:"address"`
		PID         int    `json:"pid"`
		Secure      bool   `json:"secure"`
		Fingerprint string `json:"fingerprint"`
	}
	deadline := time.Now().Add(time.Minute)
	for {
		data, err := os.ReadFile(filepath.Join(home, "server.json"))
		if err == nil {
			if err = json.Unmarshal(data, &info); err == nil && (info.Address != addr || info.PID != s.pid()) {
				err = fmt.Errorf("server.json names %s (pid %d)", info.Address, info.PID)
			}
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return apiclient.Options{}, fmt.Errorf("braid server did not record itself in %s: %w", home, err)
		}
		select {
		case <-s.done:
			return apiclient.Options{}, errors.New("braid server exited (see its log, or run with -plain-server)")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if !info.Secure || info.Fingerprint == "" {
		return apiclient.Options{}, fmt.Errorf("braid server on %s does not serve TLS (secure %t, fingerprint %q)", addr, info.Secure, info.Fingerprint)
	}
	token, err := os.ReadFile(filepath.Join(home, "token"))
	if err != nil {
		return apiclient.Options{}, fmt.Errorf("the server's local token: %w", err)
	}
	return apiclient.Options{Address: addr, Secure: true, CertFingerprint: info.Fingerprint,
		Token: "Bearer " + strings.TrimSpace(string(token))}, nil
}

func (s *benchServer) pid() int { return s.cmd.Process.Pid }

// stop closes the client and stops the server (SIGTERM) and waits for it.
func (s *benchServer) stop() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done
	s.closeLog()
}

func (s *benchServer) closeLog() {
	if s.log != nil {
		_ = s.log.Close()
	}
}
