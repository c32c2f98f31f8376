package spec

import (
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// validateCron checks a CronWorkflow: its schedules, timezone and policies,
// then its workflowSpec as a Workflow's spec.
func validateCron(r *reporter, cat *Catalog, cw *v1alpha1.CronWorkflow) {
	s := &cw.Spec
	schedules := s.Schedules
	path := "spec.schedules"
	if s.Schedule != "" {
		if len(schedules) > 0 {
			r.add("spec.schedule", "set schedules or the legacy schedule, not both")
		}
		schedules = []string{s.Schedule}
		path = "spec.schedule"
	}
	if len(schedules) == 0 {
		r.add("spec.schedules", "a CronWorkflow needs at least one schedule")
	}
	for i, sch := range schedules {
		p := path
		if path == "spec.schedules" {
			p = idx(path, i)
		}
		if _, err := cron.ParseStandard(sch); err != nil {
			r.add(p, "cron schedule %q is malformed: %v", sch, err)
		}
	}
	if s.Timezone != "" {
		if _, err := time.LoadLocation(s.Timezone); err != nil {
			r.add("spec.timezone", "unknown timezone %q: %v", s.Timezone, err)
		}
	}
	switch s.ConcurrencyPolicy {
	case "", "Allow", "Forbid", "Replace":
	default:
		r.add("spec.concurrencyPolicy", "%q is not a valid concurrencyPolicy: use Allow, Forbid or Replace", s.ConcurrencyPolicy)
	}
	if s.StartingDeadlineSeconds != nil && *s.StartingDeadlineSeconds < 0 {
		r.add("spec.startingDeadlineSeconds", "startingDeadlineSeconds must not be negative")
	}
	if n := s.SuccessfulJobsHistoryLimit; n != nil && *n < 0 {
		r.add("spec.successfulJobsHistoryLimit", "must not be negative")
	}
	if n := s.FailedJobsHistoryLimit; n != nil && *n < 0 {
		r.add("spec.failedJobsHistoryLimit", "must not be negative")
	}
	if s.StopStrategy != nil {
		if strings.TrimSpace(s.StopStrategy.Expression) == "" {
			r.add("spec.stopStrategy.expression", "a stopStrategy needs an expression")
		} else {
			checkExprSyntax(r, "spec.stopStrategy.expression", s.StopStrategy.Expression)
		}
	}
	newSpecValidator(r, cat, cronWorkflowMeta(cw), &s.WorkflowSpec, "spec.workflowSpec", kindWorkflow).run()
}

// cronWorkflowMeta is the metadata the created workflows get: the
// CronWorkflow's own plus spec.workflowMetadata.
func cronWorkflowMeta(cw *v1alpha1.CronWorkflow) (m metav1.ObjectMeta) {
	m = *cw.ObjectMeta.DeepCopy()
	if wm := cw.Spec.WorkflowMetadata; wm != nil {
		m.Labels = mergeStringMaps(m.Labels, wm.Labels)
		m.Annotations = mergeStringMaps(m.Annotations, wm.Annotations)
	}
	return m
}

func mergeStringMaps(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
