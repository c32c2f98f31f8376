package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const stoppable = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: stoppable-}
spec:
  entrypoint: main
  onExit: bye
  templates:
  - name: main
    container: {image: busybox, command: [sleep, "60"]}
  - name: bye
    container: {image: busybox, command: [echo, bye]}
`

// startRun starts braid run in the background and waits until its step runs.
func startRun(t *testing.T, workflow string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "wf.yaml")
	if err := os.WriteFile(file, []byte(workflow), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, braidBin, "run", "--data-dir", filepath.Join(dir, "home"), "-o", "json", file)
	var stdout bytes.Buffer
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "Pod Running") {
		if time.Now().After(deadline) {
			t.Fatalf("the step never ran:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, &stdout
}

func TestRunCtrlCStopsThenTerminates(t *testing.T) {
	t.Run("one Ctrl-C stops and runs the exit handler", func(t *testing.T) {
		cmd, stdout := startRun(t, stoppable)
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		wf := parseFinal(t, stdout.String())
		if cmd.ProcessState.ExitCode() != 1 || wf.Status.Phase != "Failed" || wf.Status.Message != "Stopped with strategy 'Stop'" {
			t.Fatalf("exit %d, phase %s, message %q", cmd.ProcessState.ExitCode(), wf.Status.Phase, wf.Status.Message)
		}
		if !hasNode(wf, ".onExit", "Succeeded") {
			t.Fatalf("the exit handler did not run: %+v", wf.Status.Nodes)
		}
	})
	t.Run("two Ctrl-C terminate without the exit handler", func(t *testing.T) {
		cmd, stdout := startRun(t, stoppable)
		_ = cmd.Process.Signal(syscall.SIGINT)
		time.Sleep(20 * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		wf := parseFinal(t, stdout.String())
		if wf.Status.Phase != "Failed" || !strings.HasPrefix(wf.Status.Message, "Stopped with strategy") {
			t.Fatalf("phase %s, message %q", wf.Status.Phase, wf.Status.Message)
		}
	})
}

func hasNode(wf finalWorkflow, suffix, phase string) bool {
	for _, n := range wf.Status.Nodes {
		if strings.HasSuffix(n.Name, suffix) && n.Phase == phase {
			return true
		}
	}
	return false
}
