package local

import (
	"context"
	"path/filepath"
	"time"

	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// launchAfterLoad starts a step whose input artifacts must be downloaded:
// a goroutine of its own loads them, then starts the process. The step's
// deadline counts from now and covers the loading; Kill (or the deadline)
// during the loading cancels it and the step ends without starting.
func (rt *Runtime) launchAfterLoad(s *step, run runtime.Run, deadline time.Time, deadlineMsg string) {
	ctx, cancel := context.WithCancel(rt.ctx)
	s.mu.Lock()
	if reason := s.killReason; reason != "" {
		s.mu.Unlock()
		cancel()
		rt.fail(s, v1alpha1.NodeFailed, reason)
		return
	}
	s.cancelLoad = cancel
	if !deadline.IsZero() {
		s.deadline = time.AfterFunc(deadline.Sub(rt.now()), func() { rt.kill(s, deadlineMsg) })
	}
	rt.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer rt.wg.Done()
		defer cancel()
		rt.start(ctx, s, run, deadline, deadlineMsg)
	}()
}

// saveOutputs saves the step's output artifacts (and its log, when asked)
// after its process ended. Without artifact drivers nothing is saved.
func (rt *Runtime) saveOutputs(s *step, run runtime.Run, p prepared) ([]v1alpha1.Artifact, error) {
	if rt.cfg.Artifacts == nil {
		return nil, nil
	}
	paths := p.paths()
	paths.Scratch = s.dir // tarballs are packed in the step's directory
	return executor.SaveOutputs(rt.ctx, run.Template, run.Artifacts, rt.cfg.Artifacts, paths, filepath.Join(s.dir, logFile))
}

// withSaveError adds the failure to save outputs to a step's first failure.
func withSaveError(msg string, err error) string {
	if err == nil {
		return msg
	}
	return msg + "; " + err.Error()
}

// paths maps the step's paths to the host's.
func (p prepared) paths() executor.Paths {
	paths := executor.Paths{WorkDir: p.workDir, Tmp: p.tmp}
	if p.view != nil {
		paths.Root, paths.Lower = p.view.upper, p.view.lower
	}
	return paths
}
