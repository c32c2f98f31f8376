package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/testutil"
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

// startRun starts braid run in the background and waits until its step
// runs. It returns the command, its stdout and its stderr.
func startRun(t *testing.T, workflow string) (*exec.Cmd, *bytes.Buffer, *syncBuffer) {
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
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitStderr(t, stderr, "Pod Running")
	return cmd, &stdout, stderr
}

// waitStderr waits until braid run has printed want.
func waitStderr(t *testing.T, stderr *syncBuffer, want string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, fmt.Sprintf("braid run printed %q", want), func() error {
		if got := stderr.String(); !strings.Contains(got, want) {
			return fmt.Errorf("stderr:\n%s", got)
		}
		return nil
	})
}

func TestRunCtrlCStopsThenTerminates(t *testing.T) {
	t.Run("one Ctrl-C stops and runs the exit handler", func(t *testing.T) {
		cmd, stdout, _ := startRun(t, stoppable)
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
		cmd, stdout, stderr := startRun(t, stoppable)
		_ = cmd.Process.Signal(syscall.SIGINT)
		waitStderr(t, stderr, "press Ctrl-C again") // the first one was taken
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
