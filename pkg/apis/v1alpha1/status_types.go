package v1alpha1

import (
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkflowPhase is the phase of a whole workflow.
type WorkflowPhase string

// Workflow phases. The empty phase means not yet started.
const (
	WorkflowUnknown   WorkflowPhase = ""
	WorkflowPending   WorkflowPhase = "Pending"
	WorkflowRunning   WorkflowPhase = "Running"
	WorkflowSucceeded WorkflowPhase = "Succeeded"
	WorkflowFailed    WorkflowPhase = "Failed"
	WorkflowError     WorkflowPhase = "Error"
)

// Completed reports whether the workflow has ended (Succeeded, Failed or Error).
func (p WorkflowPhase) Completed() bool {
	switch p {
	case WorkflowSucceeded, WorkflowFailed, WorkflowError:
		return true
	}
	return false
}

// NodePhase is the phase of one node.
type NodePhase string

// Node phases.
const (
	NodePending   NodePhase = "Pending"
	NodeRunning   NodePhase = "Running"
	NodeSucceeded NodePhase = "Succeeded"
	NodeSkipped   NodePhase = "Skipped"
	NodeFailed    NodePhase = "Failed"
	NodeError     NodePhase = "Error"
	// NodeOmitted is a DAG task whose depends expression was false.
	NodeOmitted NodePhase = "Omitted"
)

// FailedOrError reports whether the phase is Failed or Error.
func (p NodePhase) FailedOrError() bool {
	return p == NodeFailed || p == NodeError
}

// Completed reports whether the node ran to an end: Succeeded, Failed or
// Error. Skipped and Omitted nodes did not run, so they are not Completed.
func (p NodePhase) Completed() bool {
	return p == NodeSucceeded || p.FailedOrError()
}

// Fulfilled reports whether the node needs no more work: it Completed, or it
// was Skipped or Omitted.
func (p NodePhase) Fulfilled() bool {
	return p.Completed() || p == NodeSkipped || p == NodeOmitted
}

// NodeType is the kind of a node in the status tree.
type NodeType string

// Node types.
const (
	NodeTypePod       NodeType = "Pod"
	NodeTypeContainer NodeType = "Container"
	NodeTypeSteps     NodeType = "Steps"
	NodeTypeStepGroup NodeType = "StepGroup"
	NodeTypeDAG       NodeType = "DAG"
	NodeTypeTaskGroup NodeType = "TaskGroup"
	NodeTypeRetry     NodeType = "Retry"
	NodeTypeSkipped   NodeType = "Skipped"
	NodeTypeSuspend   NodeType = "Suspend"
	NodeTypeHTTP      NodeType = "HTTP"
	NodeTypePlugin    NodeType = "Plugin"
)

// ConditionType is the type of a workflow or cron workflow condition.
type ConditionType string

// Condition types.
const (
	ConditionTypeCompleted       ConditionType = "Completed"
	ConditionTypePodRunning      ConditionType = "PodRunning"
	ConditionTypeSpecWarning     ConditionType = "SpecWarning"
	ConditionTypeSpecError       ConditionType = "SpecError"
	ConditionTypeMetricsError    ConditionType = "MetricsError"
	ConditionTypeArtifactGCError ConditionType = "ArtifactGCError"
	// ConditionTypeSubmissionError is set on a CronWorkflow that failed to
	// submit a workflow.
	ConditionTypeSubmissionError ConditionType = "SubmissionError"
)

// Condition is one condition of a workflow or cron workflow.
type Condition struct {
	Type    ConditionType          `json:"type,omitempty"`
	Status  metav1.ConditionStatus `json:"status,omitempty"`
	Message string                 `json:"message,omitempty"`
}

// Conditions is a list of conditions.
type Conditions []Condition

// Progress is "N/M": N of M pods completed.
type Progress string

// EstimatedDuration is a duration estimate in seconds.
type EstimatedDuration int

// ResourceDuration is a number of resource-seconds.
type ResourceDuration int64

// ResourcesDuration maps a resource name (cpu, memory, ...) to its usage.
type ResourcesDuration map[apiv1.ResourceName]ResourceDuration

// Nodes maps node IDs to node statuses.
type Nodes map[string]NodeStatus

// WorkflowStatus is what the controller records about a workflow's run.
type WorkflowStatus struct {
	// Phase summarises where the workflow is.
	Phase WorkflowPhase `json:"phase,omitempty"`
	// StartedAt is when the workflow started.
	StartedAt metav1.Time `json:"startedAt,omitempty"`
	// FinishedAt is when the workflow ended.
	FinishedAt metav1.Time `json:"finishedAt,omitempty"`
	// EstimatedDuration is the expected run time in seconds.
	EstimatedDuration EstimatedDuration `json:"estimatedDuration,omitempty"`
	// Progress counts completed pods ("N/M").
	Progress Progress `json:"progress,omitempty"`
	// Message says why the workflow is in its phase.
	Message string `json:"message,omitempty"`
	// CompressedNodes holds Nodes compressed and base64-encoded.
	CompressedNodes string `json:"compressedNodes,omitempty"`
	// Nodes maps node IDs to node statuses.
	Nodes Nodes `json:"nodes,omitempty"`
	// OffloadNodeStatusVersion is set when Nodes are stored elsewhere.
	OffloadNodeStatusVersion string `json:"offloadNodeStatusVersion,omitempty"`
	// StoredTemplates caches the templates resolved from template references.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	StoredTemplates map[string]Template `json:"storedTemplates,omitempty"`
	// PersistentVolumeClaims are the PVCs created for VolumeClaimTemplates.
	PersistentVolumeClaims []apiv1.Volume `json:"persistentVolumeClaims,omitempty"`
	// Outputs are the workflow's global outputs.
	Outputs *Outputs `json:"outputs,omitempty"`
	// Conditions are the workflow's conditions.
	Conditions Conditions `json:"conditions,omitempty"`
	// ResourcesDuration is the workflow's total resource usage.
	ResourcesDuration ResourcesDuration `json:"resourcesDuration,omitempty"`
	// StoredWorkflowSpec caches the spec of the referenced workflow template.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	StoredWorkflowSpec *WorkflowSpec `json:"storedWorkflowTemplateSpec,omitempty"`
	// Synchronization records the locks held and waited for.
	Synchronization *SynchronizationStatus `json:"synchronization,omitempty"`
	// ArtifactRepositoryRef is the artifact repository that was resolved.
	ArtifactRepositoryRef *ArtifactRepositoryRefStatus `json:"artifactRepositoryRef,omitempty"`
	// ArtifactGCStatus records the progress of artifact GC.
	ArtifactGCStatus *ArtGCStatus `json:"artifactGCStatus,omitempty"`
	// TaskResultsCompletionStatus maps node IDs to whether their results
	// were all received.
	TaskResultsCompletionStatus map[string]bool `json:"taskResultsCompletionStatus,omitempty"`
}

// NodeStatus is the status of one node of the workflow's tree.
type NodeStatus struct {
	// ID is the node's ID (see NodeID).
	ID string `json:"id"`
	// Name is the node's unique tree-path name.
	Name string `json:"name"`
	// DisplayName is the short name shown to users.
	DisplayName string `json:"displayName,omitempty"`
	// Type is the node's type.
	Type NodeType `json:"type"`
	// TemplateName is the template the node runs.
	TemplateName string `json:"templateName,omitempty"`
	// TemplateRef is the referenced template the node runs.
	TemplateRef *TemplateRef `json:"templateRef,omitempty"`
	// TemplateScope is the scope the template was resolved in.
	TemplateScope string `json:"templateScope,omitempty"`
	// Phase summarises where the node is.
	Phase NodePhase `json:"phase,omitempty"`
	// BoundaryID is the ID of the nearest enclosing steps or DAG node.
	BoundaryID string `json:"boundaryID,omitempty"`
	// Message says why the node is in its phase.
	Message string `json:"message,omitempty"`
	// StartedAt is when the node started.
	StartedAt metav1.Time `json:"startedAt,omitempty"`
	// FinishedAt is when the node ended.
	FinishedAt metav1.Time `json:"finishedAt,omitempty"`
	// EstimatedDuration is the expected run time in seconds.
	EstimatedDuration EstimatedDuration `json:"estimatedDuration,omitempty"`
	// Progress counts completed pods below this node ("N/M").
	Progress Progress `json:"progress,omitempty"`
	// ResourcesDuration is the node's resource usage.
	ResourcesDuration ResourcesDuration `json:"resourcesDuration,omitempty"`
	// PodIP is the IP of a daemoned pod.
	PodIP string `json:"podIP,omitempty"`
	// Daemoned is true while the node is a running daemon.
	Daemoned *bool `json:"daemoned,omitempty"`
	// NodeFlag marks hook and retry nodes.
	NodeFlag *NodeFlag `json:"nodeFlag,omitempty"`
	// Inputs are the node's resolved inputs.
	Inputs *Inputs `json:"inputs,omitempty"`
	// Outputs are the node's outputs.
	Outputs *Outputs `json:"outputs,omitempty"`
	// Children are the IDs of the node's children.
	Children []string `json:"children,omitempty"`
	// OutboundNodes are the IDs of the last nodes of this node's subtree,
	// which the next step or task hangs from.
	OutboundNodes []string `json:"outboundNodes,omitempty"`
	// HostNodeName is the Kubernetes node the pod ran on.
	HostNodeName string `json:"hostNodeName,omitempty"`
	// MemoizationStatus records a memoization lookup.
	MemoizationStatus *MemoizationStatus `json:"memoizationStatus,omitempty"`
	// SynchronizationStatus records the lock the node waits for.
	SynchronizationStatus *NodeSynchronizationStatus `json:"synchronizationStatus,omitempty"`
	// TaskResultSynced is true once the node's reported result was merged.
	TaskResultSynced *bool `json:"taskResultSynced,omitempty"`
	// FailedPodRestarts counts pod restarts after infrastructure failures.
	FailedPodRestarts int32 `json:"failedPodRestarts,omitempty"`
	// RestartingPodUID is the UID of the pod being replaced after such a failure.
	RestartingPodUID string `json:"restartingPodUID,omitempty"`
}

// NodeFlag marks nodes created for hooks and retries.
type NodeFlag struct {
	// Hooked marks a lifecycle hook node.
	Hooked bool `json:"hooked,omitempty"`
	// Retried marks a retry attempt node.
	Retried bool `json:"retried,omitempty"`
}

// MemoizationStatus records a memoization lookup.
type MemoizationStatus struct {
	// Hit is true when a cached result was used.
	Hit bool `json:"hit"`
	// Key is the cache key.
	Key string `json:"key"`
	// CacheName is the cache's ConfigMap.
	CacheName string `json:"cacheName"`
}

// NodeSynchronizationStatus records the lock a node waits for.
type NodeSynchronizationStatus struct {
	Waiting string `json:"waiting,omitempty"`
}

// SynchronizationStatus records the semaphores and mutexes of a workflow.
type SynchronizationStatus struct {
	Semaphore *SemaphoreStatus `json:"semaphore,omitempty"`
	Mutex     *MutexStatus     `json:"mutex,omitempty"`
}

// SemaphoreStatus lists who holds and who waits for semaphores.
type SemaphoreStatus struct {
	Holding []SemaphoreHolding `json:"holding,omitempty"`
	Waiting []SemaphoreHolding `json:"waiting,omitempty"`
}

// SemaphoreHolding lists the holders (or waiters) of one semaphore.
type SemaphoreHolding struct {
	Semaphore string   `json:"semaphore,omitempty"`
	Holders   []string `json:"holders,omitempty"`
}

// MutexStatus lists who holds and who waits for mutexes.
type MutexStatus struct {
	Holding []MutexHolding `json:"holding,omitempty"`
	Waiting []MutexHolding `json:"waiting,omitempty"`
}

// MutexHolding is the holder (or a waiter) of one mutex.
type MutexHolding struct {
	Mutex  string `json:"mutex,omitempty"`
	Holder string `json:"holder,omitempty"`
}

// ArtifactRepositoryRefStatus is the artifact repository a workflow resolved.
type ArtifactRepositoryRefStatus struct {
	ArtifactRepositoryRef `json:",inline"`
	// Namespace of the ConfigMap.
	Namespace string `json:"namespace,omitempty"`
	// Default is true when the controller's default repository was used.
	Default bool `json:"default,omitempty"`
	// ArtifactRepository is the resolved repository.
	ArtifactRepository *ArtifactRepository `json:"artifactRepository,omitempty"`
}

// ArtGCStatus records the progress of artifact GC.
type ArtGCStatus struct {
	// StrategiesProcessed marks the strategies whose GC has started.
	StrategiesProcessed map[ArtifactGCStrategy]bool `json:"strategiesProcessed,omitempty"`
	// PodsRecouped marks GC pods whose results were read.
	PodsRecouped map[string]bool `json:"podsRecouped,omitempty"`
	// NotSpecified is true when no artifact asked for GC.
	NotSpecified bool `json:"notSpecified,omitempty"`
}
