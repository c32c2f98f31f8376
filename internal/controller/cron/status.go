package cron

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// writeAttempts bounds the reads and writes of one change when another
// writer (the API) keeps changing the object first.
const writeAttempts = 5

// writeStatus applies change to the stored CronWorkflow of e and writes it
// when change reports a change, reading again on a conflict. e.cw becomes
// what was written. A failure is logged: the next event or run tries again.
func (s *Scheduler) writeStatus(ctx context.Context, e *entry, change func(*v1alpha1.CronWorkflow) bool) {
	if err := s.tryWriteStatus(ctx, e, change); err != nil {
		s.log.Warn("cannot update the cron workflow's status", "cron", key(e.cw.Namespace, e.cw.Name), "err", err)
	}
}

func (s *Scheduler) tryWriteStatus(ctx context.Context, e *entry, change func(*v1alpha1.CronWorkflow) bool) error {
	cw, err := store.Modify(ctx, writeAttempts,
		func(ctx context.Context) (*v1alpha1.CronWorkflow, error) {
			o, err := s.st.Get(ctx, store.KindCronWorkflow, e.cw.Namespace, e.cw.Name)
			if err != nil {
				return nil, err
			}
			cw, ok := o.(*v1alpha1.CronWorkflow)
			if !ok {
				return nil, fmt.Errorf("store returned %T for a CronWorkflow", o)
			}
			return cw, nil
		},
		func(cw *v1alpha1.CronWorkflow) (*v1alpha1.CronWorkflow, bool, error) { return cw, change(cw), nil },
		func(ctx context.Context, cw *v1alpha1.CronWorkflow) error { return s.st.Update(ctx, cw) })
	if err != nil {
		return err
	}
	e.cw = cw
	return nil
}

// setCondition sets a true condition of type t with msg; it reports
// whether anything changed.
func setCondition(cw *v1alpha1.CronWorkflow, t v1alpha1.ConditionType, msg string) bool {
	for i, c := range cw.Status.Conditions {
		if c.Type == t {
			if c.Message == msg && c.Status == metav1.ConditionTrue {
				return false
			}
			cw.Status.Conditions[i] = v1alpha1.Condition{Type: t, Status: metav1.ConditionTrue, Message: msg}
			return true
		}
	}
	cw.Status.Conditions = append(cw.Status.Conditions, v1alpha1.Condition{Type: t, Status: metav1.ConditionTrue, Message: msg})
	return true
}

// removeCondition drops the condition of type t; it reports whether there
// was one.
func removeCondition(cw *v1alpha1.CronWorkflow, t v1alpha1.ConditionType) bool {
	n := len(cw.Status.Conditions)
	out := cw.Status.Conditions[:0]
	for _, c := range cw.Status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	cw.Status.Conditions = out
	return len(out) != n
}

func hasCondition(cw *v1alpha1.CronWorkflow, t v1alpha1.ConditionType) bool {
	for _, c := range cw.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}
