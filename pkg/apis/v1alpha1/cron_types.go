package v1alpha1

import (
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronWorkflow submits a Workflow on a cron schedule.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=cwf;cronwf
type CronWorkflow struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CronWorkflowSpec   `json:"spec"`
	Status CronWorkflowStatus `json:"status,omitempty"`
}

// CronWorkflowList is a list of CronWorkflows.
//
// +kubebuilder:object:root=true
type CronWorkflowList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []CronWorkflow `json:"items"`
}

// ConcurrencyPolicy says what happens when a run is due while another runs.
type ConcurrencyPolicy string

// Concurrency policies.
const (
	AllowConcurrent   ConcurrencyPolicy = "Allow"
	ForbidConcurrent  ConcurrencyPolicy = "Forbid"
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// CronWorkflowSpec is the schedule and the workflow a CronWorkflow submits.
type CronWorkflowSpec struct {
	// WorkflowSpec is the spec of each submitted Workflow.
	WorkflowSpec WorkflowSpec `json:"workflowSpec"`
	// Schedule is the legacy single cron expression; prefer Schedules.
	Schedule string `json:"schedule,omitempty"`
	// Schedules are cron expressions; a run is due at each of their times.
	Schedules []string `json:"schedules,omitempty"`
	// ConcurrencyPolicy is Allow (default), Forbid or Replace.
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// Suspend stops new runs from being submitted.
	Suspend *bool `json:"suspend,omitempty"`
	// StartingDeadlineSeconds is how late a missed run may still start.
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
	// SuccessfulJobsHistoryLimit is how many succeeded Workflows to keep.
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`
	// FailedJobsHistoryLimit is how many failed Workflows to keep.
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
	// Timezone is the IANA time zone of the schedules (default: the machine's).
	Timezone string `json:"timezone,omitempty"`
	// WorkflowMetadata is added to each submitted Workflow.
	WorkflowMetadata *metav1.ObjectMeta `json:"workflowMetadata,omitempty"`
	// StopStrategy stops scheduling once its condition holds.
	StopStrategy *StopStrategy `json:"stopStrategy,omitempty"`
	// When is a condition checked before each run; false skips the run.
	When string `json:"when,omitempty"`
}

// StopStrategy stops a CronWorkflow once an expression holds.
type StopStrategy struct {
	// Expression is an expr-lang expression over cronworkflow.*.
	Expression string `json:"expression"`
}

// CronWorkflowPhase is the phase of a CronWorkflow.
type CronWorkflowPhase string

// Cron workflow phases.
const (
	ActivePhase  CronWorkflowPhase = "Active"
	StoppedPhase CronWorkflowPhase = "Stopped"
)

// CronWorkflowStatus is what the cron controller records.
type CronWorkflowStatus struct {
	// Active references the Workflows currently running.
	Active []apiv1.ObjectReference `json:"active,omitempty"`
	// LastScheduledTime is when a Workflow was last submitted.
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`
	// Conditions are the cron workflow's conditions.
	Conditions Conditions `json:"conditions,omitempty"`
	// Succeeded counts Workflows that succeeded.
	Succeeded int64 `json:"succeeded,omitempty"`
	// Failed counts Workflows that failed or errored.
	Failed int64 `json:"failed,omitempty"`
	// Phase is Active or Stopped.
	Phase CronWorkflowPhase `json:"phase,omitempty"`
}
