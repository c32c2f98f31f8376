package emissary

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/braidwf/braid/internal/executor"
)

// childResult is how the child ended.
type childResult struct {
	code              int
	started, finished time.Time
	tail              *executor.Tail // stdout's tail, with includeResult
	logPath           string         // the captured log, "" when not captured
	killReason        string         // the deadline's message when it killed the child
	signalled         bool           // a signal to the emissary was forwarded to it
}

// runChild runs argv with stdout and stderr passed through (and captured
// for outputs.result and the shipped log), forwards signals to it, kills it
// at the deadline, and waits for it.
func runChild(o Options, s *setup, argv []string) (*childResult, error) {
	res := &childResult{}
	stdout, stderr, closeLog, err := childOutputs(o, s, res)
	if err != nil {
		return nil, err
	}
	defer closeLog()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = childEnv(os.Environ())
	cmd.Stdin = o.Stdin
	cmd.Stdout = io.MultiWriter(stdout...)
	cmd.Stderr = io.MultiWriter(stderr...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", argv[0], unwrapExec(err))
	}
	res.started = o.Now()
	w := &childWatch{res: res, pid: cmd.Process.Pid, grace: o.KillGrace}
	var deadline <-chan time.Time
	if !s.deadline.IsZero() {
		t := time.NewTimer(s.deadline.Sub(o.Now()))
		defer t.Stop()
		deadline = t.C
	}
	stop := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		w.watch(o.Signals, deadline, s.deadlineMsg, s.stopWhen, stop)
	}()
	err = cmd.Wait()
	close(stop)
	<-exited
	res.finished = o.Now()
	w.stopKillTimer()
	if err != nil && cmd.ProcessState == nil {
		return nil, fmt.Errorf("wait for %s: %w", argv[0], err)
	}
	res.code = exitCode(cmd.ProcessState)
	return res, nil
}

// childOutputs returns the writers of the child's stdout and stderr: the
// emissary's own, the result's tail when the step has outputs.result, and
// the main log file when the log is saved. closeLog closes that file.
func childOutputs(o Options, s *setup, res *childResult) (stdout, stderr []io.Writer, closeLog func(), err error) {
	stdout = []io.Writer{o.Stdout}
	stderr = []io.Writer{o.Stderr}
	if s.includeResult {
		res.tail = executor.NewResultTail()
		stdout = append(stdout, res.tail)
	}
	closeLog = func() {}
	if s.art.Repository != nil || archivesLogs(s) {
		f, err := os.OpenFile(logFile(s), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644) // retries append
		if err != nil {
			return nil, nil, nil, fmt.Errorf("open the main log: %w", err)
		}
		closeLog = func() { _ = f.Close() }
		lw := &lockedWriter{w: f}
		stdout, stderr = append(stdout, lw), append(stderr, lw)
		res.logPath = f.Name()
	}
	return stdout, stderr, closeLog, nil
}

// childWatch signals the child's process group: it forwards the emissary's
// signals and kills the group, SIGTERM then SIGKILL after the grace period,
// at the deadline or when the sidecars must stop.
type childWatch struct {
	mu        sync.Mutex
	res       *childResult // killReason and signalled are guarded by mu
	pid       int
	grace     time.Duration
	killTimer *time.Timer
}

// watch serves signals, the deadline and stopWhen until stop is closed.
func (w *childWatch) watch(signals <-chan os.Signal, deadline <-chan time.Time, deadlineMsg string,
	stopWhen <-chan struct{}, stop <-chan struct{}) {
	for {
		select {
		case sig := <-signals:
			if ss, ok := sig.(syscall.Signal); ok {
				w.mu.Lock()
				w.res.signalled = true
				w.mu.Unlock()
				_ = syscall.Kill(-w.pid, ss)
			}
		case <-deadline:
			w.kill(deadlineMsg)
		case <-stopWhen:
			stopWhen = nil
			w.kill(MsgSidecarStopped)
		case <-stop:
			return
		}
	}
}

// kill ends the child's group once, recording why.
func (w *childWatch) kill(reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.res.killReason != "" {
		return
	}
	w.res.killReason = reason
	_ = syscall.Kill(-w.pid, syscall.SIGTERM)
	w.killTimer = time.AfterFunc(w.grace, func() { _ = syscall.Kill(-w.pid, syscall.SIGKILL) })
}

// stopKillTimer cancels a pending SIGKILL once the child has exited.
func (w *childWatch) stopKillTimer() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.killTimer != nil {
		w.killTimer.Stop()
	}
}

// exitCode is the exit code, or 128+N when signal N killed the process.
func exitCode(state *os.ProcessState) int {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return state.ExitCode()
}

// unwrapExec drops exec's "exec: " wrapping of a path error.
func unwrapExec(err error) error {
	if ee, ok := err.(*exec.Error); ok {
		return ee.Err
	}
	return err
}

// lockedWriter serialises stdout's and stderr's writes to one log file.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// archivesLogs reports whether the template asks for its log to be saved
// to an archiveLocation of its own.
func archivesLogs(s *setup) bool {
	if s.tmpl == nil {
		return false
	}
	al := s.tmpl.ArchiveLocation
	return al != nil && al.ArchiveLogs != nil && *al.ArchiveLogs
}

// childEnv is the container's environment without the artifact
// credentials the pod gives the emissary (BRAID_SECRET_*): a step sees only
// the secrets its own spec names.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "BRAID_SECRET_") {
			out = append(out, kv)
		}
	}
	return out
}
