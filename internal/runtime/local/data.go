package local

import (
	"context"
	"time"

	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// launchData runs a data template in a goroutine of its own, with no
// process: it lists the source and applies the transformations
// (executor.RunData), and reports the JSON of the result as outputs.result,
// as every data template does. A failure (a location that cannot be listed,
// a bad expression) ends the step Error with its message. Kill and the
// deadline cancel the listing; the step then ends Failed with their message.
func (rt *Runtime) launchData(s *step, run runtime.Run) {
	now := rt.now()
	deadline, deadlineMsg := deadlineOf(run, now)
	if !deadline.IsZero() && !deadline.After(now) {
		rt.fail(s, v1alpha1.NodeFailed, deadlineMsg)
		return
	}
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
		s.deadline = time.AfterFunc(deadline.Sub(now), func() { rt.kill(s, deadlineMsg) })
	}
	rt.record(s)
	rt.wg.Add(1)
	s.mu.Unlock()
	ev := s.newEvent()
	ev.Phase, ev.StartedAt = v1alpha1.NodeRunning, now
	rt.emit(s, ev)
	go func() {
		defer rt.wg.Done()
		defer cancel()
		result, err := executor.RunData(ctx, run.Template, run.Artifacts, rt.cfg.Artifacts)
		rt.finishData(s, now, result, err)
	}()
}

// finishData reports the final event of a data step.
func (rt *Runtime) finishData(s *step, started time.Time, result string, err error) {
	s.mu.Lock()
	s.exited = true
	s.cancelLoad = nil
	if s.deadline != nil {
		s.deadline.Stop()
	}
	reason := s.killReason
	s.mu.Unlock()
	ev := s.newEvent()
	ev.StartedAt, ev.FinishedAt = started, rt.now()
	switch {
	case reason != "":
		ev.Phase, ev.Message = v1alpha1.NodeFailed, reason
	case err != nil:
		ev.Phase, ev.Message = v1alpha1.NodeError, err.Error()
	default:
		// The data executor is the main container, and it exited 0.
		code := int32(0)
		ev.ExitCode = &code
		ev.Phase, ev.Outputs = v1alpha1.NodeSucceeded, &v1alpha1.Outputs{Result: &result, ExitCode: ptr("0")}
	}
	rt.finish(s, ev)
}
