package supervisor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// served is a supervisor serving a local runtime on a fresh data
// directory, in this process.
type served struct {
	dataDir string
	cancel  context.CancelFunc
	done    chan error
}

func serve(t *testing.T, dataDir string, idle time.Duration) *served {
	t.Helper()
	rt, err := local.New(local.Config{DataDir: dataDir, Isolation: local.IsolationNone, KillGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{dataDir: dataDir, cancel: cancel, done: make(chan error, 1)}
	listening := make(chan struct{})
	go func() {
		s.done <- Serve(ctx, rt, Options{DataDir: dataDir, Version: "test", IdleTimeout: idle,
			Listening: func(string) { close(listening) }})
	}()
	select {
	case <-listening:
	case err := <-s.done:
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(s.stop)
	return s
}

func (s *served) stop() {
	s.cancel()
	<-s.done
	s.done <- nil // stop again is a no-op
}

func dial(t *testing.T, dataDir string) *Client {
	t.Helper()
	c, err := Dial(context.Background(), ClientConfig{DataDir: dataDir, Version: "test", ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var seq atomic.Int64

func shellRun(t *testing.T, script string) runtime.Run {
	t.Helper()
	var tp v1alpha1.Template
	src := fmt.Sprintf("name: s\ncontainer: {image: alpine, command: [sh, -c, %q]}\n", script)
	if err := yaml.UnmarshalStrict([]byte(src), &tp); err != nil {
		t.Fatal(err)
	}
	n := seq.Add(1)
	return runtime.Run{ID: fmt.Sprintf("run-%d", n), Namespace: "argo", Workflow: "wf", WorkflowUID: "uid",
		Launch: step.Launch{NodeID: fmt.Sprintf("wf-%d", n), PodName: fmt.Sprintf("wf-pod-%d", n), Template: &tp}}
}

// final waits for the final event of run id.
func final(t *testing.T, c *Client, id string) runtime.StepEvent {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-c.Events():
			if ev.RunID == id && ev.Phase.Completed() {
				return ev
			}
		case <-timeout:
			t.Fatalf("no final event of %s", id)
		}
	}
}

func TestStepRunsInTheSupervisor(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir, time.Minute)
	c := dial(t, dir)
	run := shellRun(t, "echo hello")
	run.IncludeResult = true
	if err := c.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	ev := final(t, c, run.ID)
	if ev.Phase != v1alpha1.NodeSucceeded || ev.Outputs == nil || ev.Outputs.Result == nil || *ev.Outputs.Result != "hello" {
		t.Fatalf("final event %+v", ev)
	}
	if ev.NodeID != run.NodeID || ev.WorkflowUID != run.WorkflowUID {
		t.Errorf("the event lost the run's identity: %+v", ev)
	}
	st, known, err := c.Status(context.Background(), run.ID)
	if err != nil || !known || st.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("Status = %+v, %v, %v", st, known, err)
	}
	// A second Start of the same run runs nothing and reports its end.
	if err := c.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if ev := final(t, c, run.ID); ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("the known run's event %+v", ev)
	}
	info, err := os.Stat(SocketPath(dir))
	if err != nil || info.Mode().Perm() != 0o600 || info.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket %v, %v: want a 0600 socket", info, err)
	}
}

// A step goes on running when its client goes away, and the next client
// learns its result: from the events kept for it, and from Status.
func TestStepOutlivesItsClient(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir, time.Minute)
	first := dial(t, dir)
	run := shellRun(t, "sleep 0.5; echo done")
	if err := first.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	first.Close()
	if _, _, err := first.Status(context.Background(), run.ID); !errors.Is(err, ErrClosed) {
		t.Errorf("a closed client's Status: %v, want ErrClosed", err)
	}
	time.Sleep(time.Second) // the step ends with nobody connected
	second := dial(t, dir)
	if ev := final(t, second, run.ID); ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("kept event %+v", ev)
	}
	if st, known, err := second.Status(context.Background(), run.ID); err != nil || !known || st.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("Status = %+v, %v, %v", st, known, err)
	}
}

// A client that only saw a step running (the controller's recover after a
// restart) gets its final event.
func TestFollowedStepReports(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir, time.Minute)
	first := dial(t, dir)
	run := shellRun(t, "sleep 0.7")
	if err := first.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	first.Close()
	second := dial(t, dir)
	st, known, err := second.Status(context.Background(), run.ID)
	if err != nil || !known || st.Phase != v1alpha1.NodeRunning {
		t.Fatalf("Status = %+v, %v, %v: want Running", st, known, err)
	}
	if ev := final(t, second, run.ID); ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("final %+v", ev)
	}
}

func TestOneSupervisorPerDataDir(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir, time.Minute)
	rt, err := local.New(local.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	err = Serve(context.Background(), rt, Options{DataDir: dir})
	if !errors.Is(err, ErrRunning) {
		t.Fatalf("a second supervisor: %v, want ErrRunning", err)
	}
	rt.Close()
	pid, err := os.ReadFile(filepath.Join(dir, PIDName))
	if err != nil || strings.TrimSpace(string(pid)) != fmt.Sprint(os.Getpid()) {
		t.Fatalf("pid file %q, %v", pid, err)
	}
}

// The supervisor exits once idle, and when its data directory is removed.
func TestSupervisorExits(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		dir := t.TempDir()
		s := serve(t, dir, 500*time.Millisecond)
		c := dial(t, dir)
		run := shellRun(t, "sleep 1.5")
		if err := c.Start(context.Background(), run); err != nil {
			t.Fatal(err)
		}
		c.Close()
		select {
		case err := <-s.done:
			t.Fatalf("exited with a step running: %v", err)
		case <-time.After(time.Second):
		}
		select {
		case err := <-s.done:
			if err != nil {
				t.Fatal(err)
			}
			s.done <- nil
		case <-time.After(10 * time.Second):
			t.Fatal("still running, idle")
		}
		if _, err := os.Stat(SocketPath(dir)); !os.IsNotExist(err) {
			t.Errorf("the socket is left: %v", err)
		}
	})
	t.Run("data directory removed", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		s := serve(t, dir, time.Hour)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		select {
		case <-s.done:
			s.done <- nil
		case <-time.After(10 * time.Second):
			t.Fatal("still running on a removed data directory")
		}
	})
}

// Garbage on the socket gets an error and the connection closed; the
// supervisor goes on serving.
func TestBadRequest(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir, time.Minute)
	for _, bad := range []string{"not json\n", `{"seq":1,"op":"start"}` + "\n", `{"seq":2,"op":"format-disk"}` + "\n"} {
		nc, err := net.Dial("unix", SocketPath(dir))
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := nc.Write([]byte(bad)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		n, _ := nc.Read(buf)
		if !strings.Contains(string(buf[:n]), `"err"`) {
			t.Errorf("%q: answer %q, want an error", bad, buf[:n])
		}
		nc.Close()
	}
	c := dial(t, dir)
	run := shellRun(t, "true")
	if err := c.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if ev := final(t, c, run.ID); ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("final %+v", ev)
	}
}

// A supervisor that goes away is replaced (here: by one the test starts, as
// Spawn would), and the client asks it about the runs in flight: one it
// never received is started, one that was lost is reported lost.
func TestClientReconnects(t *testing.T) {
	dir := t.TempDir()
	s := serve(t, dir, time.Minute)
	var spawned atomic.Int32
	c, err := Dial(context.Background(), ClientConfig{DataDir: dir, Version: "test", ConnectTimeout: 10 * time.Second,
		Spawn: func() error { spawned.Add(1); serve(t, dir, time.Minute); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := c.Instance()
	s.stop()
	run := shellRun(t, "echo after")
	if err := c.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if ev := final(t, c, run.ID); ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("final %+v", ev)
	}
	if spawned.Load() != 1 || c.Instance() == before || c.Instance() == "" {
		t.Fatalf("spawned %d, instance %q then %q", spawned.Load(), before, c.Instance())
	}
}

// A data directory whose path is too long for a unix socket address gets
// its socket in a private directory under the temporary directory; one
// that is not private is refused.
func TestLongDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	socket := SocketPath(dir)
	if len(socket) > maxSocketPath || filepath.Dir(socket) == dir {
		t.Fatalf("socket %s", socket)
	}
	serve(t, dir, time.Minute)
	c := dial(t, dir)
	run := shellRun(t, "true")
	if err := c.Start(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if ev := final(t, c, run.ID); ev.Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("final %+v", ev)
	}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := privateDir(open); err == nil {
		t.Fatal("a directory open to all was taken for the socket")
	}
}
