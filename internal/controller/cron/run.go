package cron

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/wfops"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// run is one firing of e's schedule for the scheduled time t: it checks
// suspend, when and the concurrency policy, creates the workflow and
// records it in the status.
func (s *Scheduler) run(ctx context.Context, e *entry, t time.Time) {
	cw, err := s.fresh(ctx, e)
	if err != nil {
		return
	}
	log := s.log.With("cron", key(cw.Namespace, cw.Name), "scheduled", t.Format(time.RFC3339))
	if cw.Spec.Suspend != nil && *cw.Spec.Suspend {
		log.Info("cron workflow is suspended; not run")
		return
	}
	if ok, err := evalWhen(cw, s.clock.Now()); err != nil {
		s.submissionError(ctx, e, fmt.Sprintf("failed to evaluate 'when': %v", err))
		return
	} else if !ok {
		log.Info("'when' is false; not run", "when", cw.Spec.When)
		return
	}
	s.settleActive(ctx, e)
	cw = e.cw
	switch cw.Spec.ConcurrencyPolicy {
	case v1alpha1.ForbidConcurrent:
		if len(cw.Status.Active) > 0 {
			log.Info("concurrencyPolicy Forbid and a workflow is active; not run", "active", cw.Status.Active[0].Name)
			return
		}
	case v1alpha1.ReplaceConcurrent:
		for _, ref := range cw.Status.Active {
			if err := s.terminate(ctx, ref.Namespace, ref.Name); err != nil {
				s.submissionError(ctx, e, fmt.Sprintf("failed to stop the active workflow %s: %v", ref.Name, err))
				return
			}
			log.Info("concurrencyPolicy Replace: terminated the active workflow", "workflow", ref.Name)
		}
	}
	wf, err := s.submit(ctx, cw, t)
	if err != nil {
		log.Warn("cannot submit the workflow", "err", err)
		s.submissionError(ctx, e, fmt.Sprintf("Failed to submit Workflow: %v", err))
		return
	}
	log.Info("workflow submitted", "workflow", wf.Name)
	s.writeStatus(ctx, e, func(cw *v1alpha1.CronWorkflow) bool {
		cw.Status.LastScheduledTime = &metav1.Time{Time: t}
		if !completed(wf) && !isActive(cw, wf.Name) {
			cw.Status.Active = append(cw.Status.Active, ref(wf))
		}
		if cw.Status.Phase == "" || cw.Status.Phase == v1alpha1.StoppedPhase {
			cw.Status.Phase = v1alpha1.ActivePhase
		}
		removeCondition(cw, v1alpha1.ConditionTypeSubmissionError)
		return true
	})
}

// fresh reads e's CronWorkflow again, so that a run sees the latest spec.
// A CronWorkflow that is gone is forgotten.
func (s *Scheduler) fresh(ctx context.Context, e *entry) (*v1alpha1.CronWorkflow, error) {
	o, err := s.st.Get(ctx, store.KindCronWorkflow, e.cw.Namespace, e.cw.Name)
	if errors.Is(err, store.ErrNotFound) {
		delete(s.entries, key(e.cw.Namespace, e.cw.Name))
		return nil, err
	}
	if err != nil {
		s.log.Warn("cannot read the cron workflow", "cron", key(e.cw.Namespace, e.cw.Name), "err", err)
		return nil, err
	}
	cw, ok := o.(*v1alpha1.CronWorkflow)
	if !ok {
		return nil, fmt.Errorf("store returned %T for a CronWorkflow", o)
	}
	e.cw = cw
	return cw, nil
}

// submit builds the workflow of cw for t, validates it and resolves its
// workflowTemplateRef as the API's create does, and creates it. A workflow of that name
// already there (a run created before a crash) is taken as the run.
func (s *Scheduler) submit(ctx context.Context, cw *v1alpha1.CronWorkflow, t time.Time) (*v1alpha1.Workflow, error) {
	wf := spec.WorkflowFromCron(cw, t)
	cat, err := s.catalog(ctx, wf.Namespace)
	if err != nil {
		return nil, err
	}
	doc := &spec.Document{Kind: "Workflow", Name: wf.Name, Object: wf}
	if errs, _ := spec.Validate(doc, cat).Split(); len(errs) > 0 {
		return nil, errs
	}
	if err := spec.ResolveWorkflowTemplateRef(wf, cat); err != nil {
		return nil, err
	}
	err = s.st.Create(ctx, wf)
	if errors.Is(err, store.ErrAlreadyExists) {
		o, gerr := s.st.Get(ctx, store.KindWorkflow, wf.Namespace, wf.Name)
		if gerr != nil {
			return nil, fmt.Errorf("create workflow %s: %w", wf.Name, gerr)
		}
		if existing, ok := o.(*v1alpha1.Workflow); ok {
			return existing, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create workflow %s: %w", wf.Name, err)
	}
	return wf, nil
}

// catalog holds the namespace's WorkflowTemplates and every
// ClusterWorkflowTemplate, for workflowTemplateRef and templateRef.
func (s *Scheduler) catalog(ctx context.Context, namespace string) (*spec.Catalog, error) {
	var docs []*spec.Document
	for _, q := range []struct {
		kind store.Kind
		ns   string
	}{{store.KindWorkflowTemplate, namespace}, {store.KindClusterWorkflowTemplate, ""}} {
		objs, _, err := s.st.List(ctx, q.kind, q.ns, store.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", q.kind, err)
		}
		for _, o := range objs {
			docs = append(docs, &spec.Document{Kind: string(q.kind), Name: o.GetName(), Object: o})
		}
	}
	return spec.NewCatalog(docs), nil
}

// terminate asks an active workflow to stop (argo terminate), as Argo's
// Replace policy does. One that is gone or already completed is fine.
func (s *Scheduler) terminate(ctx context.Context, ns, name string) error {
	_, err := store.Modify(ctx, writeAttempts,
		func(ctx context.Context) (*v1alpha1.Workflow, error) {
			o, err := s.st.Get(ctx, store.KindWorkflow, ns, name)
			if err != nil {
				return nil, err
			}
			wf, ok := o.(*v1alpha1.Workflow)
			if !ok {
				return nil, fmt.Errorf("store returned %T for a Workflow", o)
			}
			return wf, nil
		},
		func(wf *v1alpha1.Workflow) (*v1alpha1.Workflow, bool, error) {
			if completed(wf) || wf.Spec.Shutdown == v1alpha1.ShutdownTerminate {
				return wf, false, nil
			}
			out, err := wfops.Terminate(wf)
			return out, err == nil, err
		},
		func(ctx context.Context, wf *v1alpha1.Workflow) error { return s.st.Update(ctx, wf) })
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err // the caller names the workflow
}

// submissionError records why a run could not be submitted.
func (s *Scheduler) submissionError(ctx context.Context, e *entry, msg string) {
	s.writeStatus(ctx, e, func(cw *v1alpha1.CronWorkflow) bool {
		return setCondition(cw, v1alpha1.ConditionTypeSubmissionError, msg)
	})
}

// ref is the status.active reference to wf.
func ref(wf *v1alpha1.Workflow) apiv1.ObjectReference {
	return apiv1.ObjectReference{Kind: "Workflow", APIVersion: v1alpha1.APIVersion,
		Namespace: wf.Namespace, Name: wf.Name, UID: wf.UID, ResourceVersion: wf.ResourceVersion}
}

func completed(wf *v1alpha1.Workflow) bool { return wf.Status.Phase.Completed() }

func isActive(cw *v1alpha1.CronWorkflow, name string) bool {
	for _, a := range cw.Status.Active {
		if a.Name == name {
			return true
		}
	}
	return false
}
