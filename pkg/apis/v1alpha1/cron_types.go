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
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec   CronWorkflowSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status CronWorkflowStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// CronWorkflowList is a list of CronWorkflows.
//
// +kubebuilder:object:root=true
type CronWorkflowList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []CronWorkflow `json:"items" protobuf:"bytes,2,rep,name=items"`
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
	WorkflowSpec WorkflowSpec `json:"workflowSpec" protobuf:"bytes,1,opt,name=workflowSpec"`
	// Schedule is the legacy single cron expression; prefer Schedules.
	Schedule string `json:"schedule,omitempty" protobuf:"bytes,2,opt,name=schedule"`
	// Schedules are cron expressions; a run is due at each of their times.
	Schedules []string `json:"schedules,omitempty" protobuf:"bytes,11,rep,name=schedules"`
	// ConcurrencyPolicy is Allow (default), Forbid or Replace.
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty" protobuf:"bytes,3,opt,name=concurrencyPolicy"`
	// Suspend stops new runs from being submitted.
	Suspend *bool `json:"suspend,omitempty" protobuf:"varint,4,opt,name=suspend"`
	// StartingDeadlineSeconds is how late a missed run may still start.
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty" protobuf:"varint,5,opt,name=startingDeadlineSeconds"`
	// SuccessfulJobsHistoryLimit is how many succeeded Workflows to keep.
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty" protobuf:"varint,6,opt,name=successfulJobsHistoryLimit"`
	// FailedJobsHistoryLimit is how many failed Workflows to keep.
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty" protobuf:"varint,7,opt,name=failedJobsHistoryLimit"`
	// Timezone is the IANA time zone of the schedules (default: the machine's).
	Timezone string `json:"timezone,omitempty" protobuf:"bytes,8,opt,name=timezone"`
	// WorkflowMetadata is added to each submitted Workflow.
	WorkflowMetadata *metav1.ObjectMeta `json:"workflowMetadata,omitempty" protobuf:"bytes,9,opt,name=workflowMeta"`
	// StopStrategy stops scheduling once its condition holds.
	StopStrategy *StopStrategy `json:"stopStrategy,omitempty" protobuf:"bytes,10,opt,name=stopStrategy"`
	// When is a condition checked before each run; false skips the run.
	When string `json:"when,omitempty" protobuf:"bytes,12,opt,name=when"`
}

// StopStrategy stops a CronWorkflow once an expression holds.
type StopStrategy struct {
	// Expression is an expr-lang expression over cronworkflow.*.
	Expression string `json:"expression" protobuf:"bytes,1,opt,name=expression"`
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
	Active []apiv1.ObjectReference `json:"active,omitempty" protobuf:"bytes,1,rep,name=active"`
	// LastScheduledTime is when a Workflow was last submitted.
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty" protobuf:"bytes,2,opt,name=lastScheduledTime"`
	// Conditions are the cron workflow's conditions.
	Conditions Conditions `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
	// Succeeded counts Workflows that succeeded.
	Succeeded int64 `json:"succeeded,omitempty" protobuf:"varint,4,opt,name=succeeded"`
	// Failed counts Workflows that failed or errored.
	Failed int64 `json:"failed,omitempty" protobuf:"varint,5,opt,name=failed"`
	// Phase is Active or Stopped.
	Phase CronWorkflowPhase `json:"phase,omitempty" protobuf:"bytes,6,opt,name=phase"`
}
