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
	stdout := []io.Writer{o.Stdout}
	stderr := []io.Writer{o.Stderr}
	if s.includeResult {
		res.tail = executor.NewResultTail()
		stdout = append(stdout, res.tail)
	}
	if s.art.Repository != nil || archivesLogs(s) {
		f, err := os.OpenFile(logFile(s), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644) // retries append
		if err != nil {
			return nil, fmt.Errorf("open the main log: %w", err)
		}
		defer f.Close()
		lw := &lockedWriter{w: f}
		stdout, stderr = append(stdout, lw), append(stderr, lw)
		res.logPath = f.Name()
	}
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
	pid := cmd.Process.Pid
	stop := make(chan struct{})
	var mu sync.Mutex
	var killTimer *time.Timer
	kill := func(reason string) {
		mu.Lock()
		defer mu.Unlock()
		if res.killReason != "" {
			return
		}
		res.killReason = reason
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		killTimer = time.AfterFunc(o.KillGrace, func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	}
	var deadline <-chan time.Time
	if !s.deadline.IsZero() {
		t := time.NewTimer(s.deadline.Sub(o.Now()))
		defer t.Stop()
		deadline = t.C
	}
	stopWhen := s.stopWhen
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case sig := <-o.Signals:
				if ss, ok := sig.(syscall.Signal); ok {
					mu.Lock()
					res.signalled = true
					mu.Unlock()
					_ = syscall.Kill(-pid, ss)
				}
			case <-deadline:
				kill(s.deadlineMsg)
			case <-stopWhen:
				stopWhen = nil
				kill(MsgSidecarStopped)
			case <-stop:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	<-exited
	res.finished = o.Now()
	mu.Lock()
	if killTimer != nil {
		killTimer.Stop()
	}
	mu.Unlock()
	if err != nil && cmd.ProcessState == nil {
		return nil, fmt.Errorf("wait for %s: %w", argv[0], err)
	}
	res.code = exitCode(cmd.ProcessState)
	return res, nil
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
