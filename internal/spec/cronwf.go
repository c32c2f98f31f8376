package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The label and annotation a CronWorkflow puts on each workflow it creates.
const (
	// LabelCronWorkflow names the CronWorkflow that created a workflow.
	LabelCronWorkflow = "workflows.argoproj.io/cron-workflow"
	// AnnotationScheduledTime is the scheduled time of the run (RFC 3339);
	// it is what {{workflow.scheduledTime}} gives.
	AnnotationScheduledTime = "workflows.argoproj.io/scheduled-time"
)

// cronPropagatedLabels are the labels of a CronWorkflow that its workflows
// inherit (who created it), as Argo does.
func cronPropagatedLabels() [3]string {
	return [...]string{
		"workflows.argoproj.io/creator",
		"workflows.argoproj.io/creator-email",
		"workflows.argoproj.io/creator-preferred-username",
	}
}

// CronRunName is the name of the workflow a CronWorkflow creates for a
// scheduled time: the cron's name and the time in Unix seconds.
func CronRunName(cronName string, scheduled time.Time) string {
	return cronName + "-" + strconv.FormatInt(scheduled.Unix(), 10)
}

// WorkflowFromCron builds the workflow cw creates for the scheduled time:
// named CronRunName, in cw's namespace, with the cron-workflow label, the
// scheduled-time annotation, the creator labels of cw and the labels and
// annotations of spec.workflowMetadata, cw as its controlling owner (so
// that deleting cw deletes it), and a copy of spec.workflowSpec.
// A workflowTemplateRef is left for the caller to resolve.
func WorkflowFromCron(cw *v1alpha1.CronWorkflow, scheduled time.Time) *v1alpha1.Workflow {
	wf := &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{
		Name:        CronRunName(cw.Name, scheduled),
		Namespace:   cw.Namespace,
		Labels:      map[string]string{},
		Annotations: map[string]string{},
	}}
	wf.APIVersion, wf.Kind = v1alpha1.APIVersion, "Workflow"
	for _, k := range cronPropagatedLabels() {
		if v, ok := cw.Labels[k]; ok {
			wf.Labels[k] = v
		}
	}
	if m := cw.Spec.WorkflowMetadata; m != nil {
		for k, v := range m.Labels {
			wf.Labels[k] = v
		}
		for k, v := range m.Annotations {
			wf.Annotations[k] = v
		}
	}
	wf.Labels[LabelCronWorkflow] = cw.Name
	wf.Annotations[AnnotationScheduledTime] = scheduled.Format(time.RFC3339)
	if cw.UID != "" {
		wf.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cw, v1alpha1.SchemeGroupVersion.WithKind("CronWorkflow"))}
	}
	wf.Spec = *cw.Spec.WorkflowSpec.DeepCopy()
	return wf
}

// CronSchedules returns the schedules of s, the legacy schedule first.
func CronSchedules(s *v1alpha1.CronWorkflowSpec) []string {
	if s.Schedule != "" {
		return append([]string{s.Schedule}, s.Schedules...)
	}
	return s.Schedules
}

// ParseCronSchedules parses the schedules of s in its timezone (local when
// it has none; a schedule's own CRON_TZ= or TZ= prefix wins). An invalid
// timezone or expression is an error that names it.
func ParseCronSchedules(s *v1alpha1.CronWorkflowSpec, local *time.Location) ([]cron.Schedule, error) {
	loc := local
	if s.Timezone != "" {
		l, err := time.LoadLocation(s.Timezone)
		if err != nil {
			return nil, fmt.Errorf("invalid timezone %q: %w", s.Timezone, err)
		}
		loc = l
	}
	texts := CronSchedules(s)
	if len(texts) == 0 {
		return nil, errors.New("no schedule: set spec.schedules")
	}
	out := make([]cron.Schedule, 0, len(texts))
	for _, text := range texts {
		sched, err := cron.ParseStandard(text)
		if err != nil {
			return nil, fmt.Errorf("invalid cron schedule %q: %w", text, err)
		}
		own := strings.HasPrefix(text, "CRON_TZ=") || strings.HasPrefix(text, "TZ=")
		if spec, ok := sched.(*cron.SpecSchedule); ok && !own {
			spec.Location = loc
		}
		out = append(out, sched)
	}
	return out, nil
}
