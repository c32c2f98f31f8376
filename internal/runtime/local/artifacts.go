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
	paths := rt.outputPaths(s, p)
	// Tarballs are packed, and unarchived outputs staged, beside the step's
	// directory: in its workflow's, which no step sees (the view shows only
	// its own directory of the data directory), so that nothing the step
	// left running can swap what is uploaded. Each is removed once saved.
	paths.Scratch = filepath.Dir(s.dir)
	return executor.SaveOutputs(rt.ctx, run.Template, run.Artifacts, rt.cfg.Artifacts, paths, filepath.Join(s.dir, logFile))
}

// outputPaths maps the step's paths to the host's for reading its outputs:
// p.paths(), with the data directory hidden but for the step's own
// directory, as its view shows them (and, without a view, so that no link
// leads an output into braid's files). Both are without links, as the
// view's path walk needs them: New resolved the data directory's
// (realDir), and braid made the step's directory under it.
func (rt *Runtime) outputPaths(s *step, p prepared) executor.Paths {
	paths := p.paths()
	paths.Hidden, paths.Visible = rt.cfg.DataDir, s.dir
	return paths
}

// withSaveError adds the failure to save outputs to a step's first failure.
func withSaveError(msg string, err error) string {
	if err == nil {
		return msg
	}
	return msg + "; " + err.Error()
}

// paths maps the step's paths to the host's. The data directory is hidden
// but for the step's own directory when p knows that directory: its view's
// (or, without a view, its private /tmp's parent); the data directory is
// then four levels up (runs/<namespace>/<workflow>/<pod>, files.go).
// outputPaths, which knows both, is the sure way.
func (p prepared) paths() executor.Paths {
	paths := executor.Paths{WorkDir: p.workDir, Tmp: p.tmp}
	pod := ""
	switch {
	case p.view != nil:
		paths.Root, paths.Lower = p.view.upper, p.view.lower
		pod = p.view.dir
	case p.tmp != "":
		pod = filepath.Dir(p.tmp) // withPrivateTmp: <pod>/tmp
	}
	if pod != "" {
		data := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(pod))))
		paths.Hidden, paths.Visible = data, pod // without links: see outputPaths
	}
	return paths
}
