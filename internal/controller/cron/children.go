package cron

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// History limits when the spec sets none (Argo's, and Kubernetes CronJob's).
const (
	defaultSucceededHistory = 3
	defaultFailedHistory    = 1
)

// workflowEvent follows a child workflow: one that completes or is deleted
// leaves status.active, and a completion is counted.
func (s *Scheduler) workflowEvent(ctx context.Context, ev store.Event) {
	wf, ok := ev.Object.(*v1alpha1.Workflow)
	if !ok {
		return
	}
	name := wf.Labels[spec.LabelCronWorkflow]
	if name == "" {
		return
	}
	e, ok := s.entries[key(wf.Namespace, name)]
	if !ok || !isActive(e.cw, wf.Name) {
		return
	}
	switch {
	case ev.Type == store.Deleted:
		s.settle(ctx, e, map[string]v1alpha1.WorkflowPhase{wf.Name: ""})
	case completed(wf):
		s.settle(ctx, e, map[string]v1alpha1.WorkflowPhase{wf.Name: wf.Status.Phase})
	}
}

// settleActive reads each workflow of status.active: one that completed or
// is gone is settled. It runs after a restart, when events were missed,
// and before each run, so that Forbid and Replace see the truth.
func (s *Scheduler) settleActive(ctx context.Context, e *entry) {
	ended := map[string]v1alpha1.WorkflowPhase{}
	for _, a := range e.cw.Status.Active {
		ns := a.Namespace
		if ns == "" {
			ns = e.cw.Namespace
		}
		o, err := s.st.Get(ctx, store.KindWorkflow, ns, a.Name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			ended[a.Name] = ""
		case err != nil:
			s.log.Warn("cannot read an active workflow", "workflow", a.Name, "err", err)
		default:
			if wf, ok := o.(*v1alpha1.Workflow); ok && (completed(wf) || (a.UID != "" && wf.UID != a.UID)) {
				ended[a.Name] = wf.Status.Phase
			}
		}
	}
	if len(ended) > 0 {
		s.settle(ctx, e, ended)
	}
}

// settle removes the ended workflows from status.active and counts the
// completed ones (phase "" means deleted: not counted), then applies the
// history limits and the stop strategy.
func (s *Scheduler) settle(ctx context.Context, e *entry, ended map[string]v1alpha1.WorkflowPhase) {
	counted := false
	s.writeStatus(ctx, e, func(cw *v1alpha1.CronWorkflow) bool {
		keep := cw.Status.Active[:0]
		changed := false
		for _, a := range cw.Status.Active {
			phase, done := ended[a.Name]
			if !done {
				keep = append(keep, a)
				continue
			}
			changed = true
			switch phase {
			case v1alpha1.WorkflowSucceeded:
				cw.Status.Succeeded++
				counted = true
			case v1alpha1.WorkflowFailed, v1alpha1.WorkflowError:
				cw.Status.Failed++
				counted = true
			}
		}
		if len(keep) == 0 {
			keep = nil
		}
		cw.Status.Active = keep
		return changed
	})
	if !counted {
		return
	}
	s.enforceHistory(ctx, e.cw)
	s.applyStopStrategy(ctx, e)
}

// enforceHistory deletes the oldest completed workflows of cw beyond
// successfulJobsHistoryLimit (default 3) and failedJobsHistoryLimit
// (default 1).
func (s *Scheduler) enforceHistory(ctx context.Context, cw *v1alpha1.CronWorkflow) {
	objs, _, err := s.st.List(ctx, store.KindWorkflow, cw.Namespace,
		store.ListOptions{LabelSelector: spec.LabelCronWorkflow + "=" + cw.Name})
	if err != nil {
		s.log.Warn("cannot list the cron workflow's workflows", "cron", key(cw.Namespace, cw.Name), "err", err)
		return
	}
	var succeeded, failed []*v1alpha1.Workflow
	for _, o := range objs {
		wf, ok := o.(*v1alpha1.Workflow)
		if !ok || isActive(cw, wf.Name) {
			continue
		}
		switch wf.Status.Phase {
		case v1alpha1.WorkflowSucceeded:
			succeeded = append(succeeded, wf)
		case v1alpha1.WorkflowFailed, v1alpha1.WorkflowError:
			failed = append(failed, wf)
		}
	}
	s.deleteBeyond(ctx, succeeded, limit(cw.Spec.SuccessfulJobsHistoryLimit, defaultSucceededHistory))
	s.deleteBeyond(ctx, failed, limit(cw.Spec.FailedJobsHistoryLimit, defaultFailedHistory))
}

func limit(n *int32, def int) int {
	if n == nil {
		return def
	}
	return max(int(*n), 0)
}

// deleteBeyond keeps the keep most recently finished workflows and deletes
// the others.
func (s *Scheduler) deleteBeyond(ctx context.Context, wfs []*v1alpha1.Workflow, keep int) {
	if len(wfs) <= keep {
		return
	}
	slices.SortStableFunc(wfs, func(a, b *v1alpha1.Workflow) int {
		return finishedAt(b).Compare(finishedAt(a)) // newest first
	})
	for _, wf := range wfs[keep:] {
		err := s.st.Delete(ctx, store.KindWorkflow, wf.Namespace, wf.Name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("cannot delete an old workflow of a cron workflow", "workflow", wf.Name, "err", err)
			continue
		}
		s.log.Info("deleted a workflow beyond the cron workflow's history limit", "workflow", wf.Name)
	}
}

func finishedAt(wf *v1alpha1.Workflow) time.Time {
	if !wf.Status.FinishedAt.IsZero() {
		return wf.Status.FinishedAt.Time
	}
	return wf.CreationTimestamp.Time
}

// applyStopStrategy stops the cron workflow (spec.suspend true, phase
// Stopped) once its stopStrategy expression holds.
func (s *Scheduler) applyStopStrategy(ctx context.Context, e *entry) {
	st := e.cw.Spec.StopStrategy
	if st == nil || st.Expression == "" || e.cw.Status.Phase == v1alpha1.StoppedPhase {
		return
	}
	stop, err := expr.EvalBool(st.Expression, cronEnv(e.cw))
	if err != nil {
		s.log.Warn("cannot evaluate the stop strategy", "cron", key(e.cw.Namespace, e.cw.Name), "err", err)
		return
	}
	if !stop {
		return
	}
	s.log.Info("stop strategy holds; the cron workflow is stopped", "cron", key(e.cw.Namespace, e.cw.Name), "expression", st.Expression)
	s.writeStatus(ctx, e, func(cw *v1alpha1.CronWorkflow) bool {
		t := true
		cw.Spec.Suspend = &t
		cw.Status.Phase = v1alpha1.StoppedPhase
		return true
	})
}
