package e2e

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newStormServer is a crashServer whose steps run with braid's default
// isolation: they outlive the server in the data directory's supervisor.
func newStormServer(t *testing.T) *crashServer {
	t.Helper()
	s := &crashServer{t: t, home: t.TempDir()}
	s.start()
	t.Cleanup(func() { s.kill() })
	return s
}

// stormWorkflows are the shapes of the storm's workload, by kind: chains,
// fan-outs, retries, exit handlers, parameters and artifacts. Each is a
// format of the workflow's name.
var stormWorkflows = []string{
	// A chain of four steps.
	`metadata: {name: %s}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: a, template: work}
    - - {name: b, template: work}
    - - {name: c, template: work}
    - - {name: d, template: work}
  - name: work
    container: {image: alpine, command: [sh, -c, "sleep 0.3"]}
`,
	// A fan-out of 24.
	`metadata: {name: %s}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: fan, template: work, withSequence: {count: "24"}}
  - name: work
    container: {image: alpine, command: [sh, -c, "sleep 0.4"]}
`,
	// A step that fails on its first attempt and succeeds on its second,
	// with a parameter passed on.
	`metadata: {name: %s}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: flaky, template: flaky}
    - - name: echo
        template: echo
        arguments: {parameters: [{name: v, value: "{{steps.flaky.outputs.parameters.v}}"}]}
  - name: flaky
    retryStrategy: {limit: 3}
    container:
      image: alpine
      command: [sh, -c, "sleep 0.3; echo try-{{retries}} > /tmp/v; test {{retries}} -ge 1"]
    outputs: {parameters: [{name: v, valueFrom: {path: /tmp/v}}]}
  - name: echo
    inputs: {parameters: [{name: v}]}
    container: {image: alpine, command: [sh, -c, "test '{{inputs.parameters.v}}' = try-1"]}
`,
	// An exit handler that runs after the main step.
	`metadata: {name: %s}
spec:
  entrypoint: main
  onExit: cleanup
  templates:
  - name: main
    container: {image: alpine, command: [sh, -c, "sleep 0.3"]}
  - name: cleanup
    container: {image: alpine, command: [sh, -c, "sleep 0.6; test {{workflow.status}} = Succeeded"]}
`,
	// An artifact made by one step and read by the next.
	`metadata: {name: %s}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: make, template: make}
    - - name: use
        template: use
        arguments: {artifacts: [{name: in, from: "{{steps.make.outputs.artifacts.out}}"}]}
  - name: make
    container: {image: alpine, command: [sh, -c, "sleep 0.3; mkdir -p /tmp/out && echo made > /tmp/out/file.txt"]}
    outputs: {artifacts: [{name: out, path: /tmp/out}]}
  - name: use
    inputs: {artifacts: [{name: in, path: /tmp/in}]}
    container: {image: alpine, command: [sh, -c, "sleep 0.2; grep -qx made /tmp/in/file.txt"]}
`,
}

// stormKills is how many times the storm kills the server.
const stormKills = 30

// The server is killed with SIGKILL 30 times at random moments while a
// mixed workload runs: no workflow fails because of it, no step that
// completed runs again, no step runs twice at once, and every workflow
// Succeeds. The steps run in the supervisor, with the default isolation.
func TestCrashStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("a storm of kills takes a minute")
	}
	s := newStormServer(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 19))
	var names []string
	submit := func(i int) {
		name := fmt.Sprintf("storm-%d", i)
		src := fmt.Sprintf(stormWorkflows[i%len(stormWorkflows)], name)
		// A request the kill cut short may or may not have been stored:
		// submitting the same name again tells which.
		for range 3 {
			if _, err := s.submit(src); err == nil || strings.Contains(err.Error(), "already exists") {
				names = append(names, name)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i := range len(stormWorkflows) {
		submit(i)
	}
	for k := range stormKills {
		submit(len(stormWorkflows) + k)
		time.Sleep(time.Duration(100+rng.IntN(1200)) * time.Millisecond)
		s.kill()
		s.start()
	}
	if len(names) < stormKills {
		t.Fatalf("only %d workflows were accepted", len(names))
	}
	for _, name := range names {
		wf := s.waitFor(name, "completed", completed)
		if wf.Status.Phase != "Succeeded" {
			t.Errorf("%s: %s: %s", name, wf.Status.Phase, wf.Status.Message)
		}
		retried := 0
		for _, n := range wf.Status.Nodes {
			if n.Type == "Pod" && n.Phase != "Succeeded" {
				retried++
				if !strings.HasPrefix(n.DisplayName, "flaky(0)") {
					t.Errorf("%s: node %s %s: %s", name, n.DisplayName, n.Phase, n.Message)
				}
			}
		}
		if strings.Contains(wf.Status.Message, "pod deleted") || retried > 1 {
			t.Errorf("%s: a step was lost: %d failed attempts, %q", name, retried, wf.Status.Message)
		}
	}
	for id, n := range journalStarts(t, s.home) {
		if n > 1 {
			t.Errorf("run %s started %d times", id, n)
		}
	}
	t.Logf("%d kills, %d workflows, all checked", stormKills, len(names))
}

// journalStarts counts the start records of each run in the supervisor's
// journal (runs/.index): a run that started twice ran twice.
func journalStarts(t *testing.T, home string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(home, "runs", ".index"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	starts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "S" {
			id, _ := url.PathUnescape(fields[1])
			starts[id]++
		}
	}
	if len(starts) == 0 {
		t.Fatal("the journal holds no run")
	}
	return starts
}

// supervisorPID is the running supervisor of the data directory.
func supervisorPID(t *testing.T, home string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, "supervisor.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// A supervisor killed with SIGKILL takes its steps with it: they end
// Error with Argo's message for a vanished pod, and the retryStrategy
// decides as Argo's does: OnError retries such a step, the default
// (OnFailure) does not.
func TestSupervisorKilled(t *testing.T) {
	s := newStormServer(t)
	const src = `metadata: {name: %s}
spec:
  entrypoint: main
  templates:
  - name: main
    retryStrategy: %s
    container: {image: alpine, command: [sh, -c, "sleep 3"]}
`
	if _, err := s.submit(fmt.Sprintf(src, "lost-retried", "{limit: 2, retryPolicy: OnError}")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.submit(fmt.Sprintf(src, "lost-default", "{limit: 2}")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lost-retried", "lost-default"} {
		s.waitFor(name, "running", func(wf crashWF) bool { return countNodes(wf, "Running") == 1 })
	}
	pid := supervisorPID(t, s.home)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wf := s.waitFor("lost-retried", "completed", completed)
	if wf.Status.Phase != "Succeeded" || countNodes(wf, "Error") != 1 {
		t.Errorf("lost-retried: %s (%s), %d attempts in Error, want Succeeded after one", wf.Status.Phase, wf.Status.Message, countNodes(wf, "Error"))
	}
	wf = s.waitFor("lost-default", "completed", completed)
	if wf.Status.Phase == "Succeeded" || countNodes(wf, "Error") != 1 {
		t.Errorf("lost-default: %s, %d attempts in Error; want it to end with its lost attempt", wf.Status.Phase, countNodes(wf, "Error"))
	}
	for _, n := range wf.Status.Nodes {
		if n.Type == "Pod" && n.Message != "pod deleted" {
			t.Errorf("lost-default: node %s: %q, want %q", n.DisplayName, n.Message, "pod deleted")
		}
	}
	if supervisorPID(t, s.home) == pid {
		t.Error("no new supervisor")
	}
}

// braid logs --follow goes on across a server killed with SIGKILL: the
// step keeps running in the supervisor, and each of its lines is printed
// once, in order, those written while the server was away included.
func TestLogsFollowAcrossKill(t *testing.T) {
	s := newStormServer(t)
	if _, err := s.submit(`metadata: {name: follow}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: alpine, command: [sh, -c, "for i in $(seq 1 30); do echo line-$i; sleep 0.1; done"]}
`); err != nil {
		t.Fatal(err)
	}
	s.waitFor("follow", "running", func(wf crashWF) bool { return countNodes(wf, "Running") == 1 })
	var out, errb syncBuffer
	cmd := exec.Command(braidBin, "logs", "follow", "--follow")
	cmd.Env = cleanEnv("BRAID_HOME=" + s.home)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	s.kill()
	time.Sleep(500 * time.Millisecond)
	s.start()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("logs --follow: %v\n%s", err, errb.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("logs --follow did not end\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		_, content, _ := strings.Cut(l, ": ")
		lines = append(lines, content)
	}
	for i := range 30 {
		if i >= len(lines) || lines[i] != fmt.Sprintf("line-%d", i+1) {
			t.Fatalf("logs --follow printed %q, want line-1 to line-30 once each\nstderr:\n%s", lines, errb.String())
		}
	}
	if len(lines) != 30 {
		t.Fatalf("printed %d lines, want 30: %q", len(lines), lines)
	}
	if !strings.Contains(errb.String(), "the server went away") {
		t.Errorf("no word of the server's restart: %q", errb.String())
	}
}
