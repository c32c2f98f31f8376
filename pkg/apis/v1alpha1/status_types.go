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
	Type    ConditionType          `json:"type,omitempty" protobuf:"bytes,1,opt,name=type"`
	Status  metav1.ConditionStatus `json:"status,omitempty" protobuf:"bytes,2,opt,name=status"`
	Message string                 `json:"message,omitempty" protobuf:"bytes,3,opt,name=message"`
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
	Phase WorkflowPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase"`
	// StartedAt is when the workflow started.
	StartedAt metav1.Time `json:"startedAt,omitempty" protobuf:"bytes,2,opt,name=startedAt"`
	// FinishedAt is when the workflow ended.
	FinishedAt metav1.Time `json:"finishedAt,omitempty" protobuf:"bytes,3,opt,name=finishedAt"`
	// EstimatedDuration is the expected run time in seconds.
	EstimatedDuration EstimatedDuration `json:"estimatedDuration,omitempty" protobuf:"varint,16,opt,name=estimatedDuration"`
	// Progress counts completed pods ("N/M").
	Progress Progress `json:"progress,omitempty" protobuf:"bytes,17,opt,name=progress"`
	// Message says why the workflow is in its phase.
	Message string `json:"message,omitempty" protobuf:"bytes,4,opt,name=message"`
	// CompressedNodes holds Nodes compressed and base64-encoded.
	CompressedNodes string `json:"compressedNodes,omitempty" protobuf:"bytes,5,opt,name=compressedNodes"`
	// Nodes maps node IDs to node statuses.
	Nodes Nodes `json:"nodes,omitempty" protobuf:"bytes,6,rep,name=nodes" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// OffloadNodeStatusVersion is set when Nodes are stored elsewhere.
	OffloadNodeStatusVersion string `json:"offloadNodeStatusVersion,omitempty" protobuf:"bytes,10,opt,name=offloadNodeStatusVersion"`
	// StoredTemplates caches the templates resolved from template references.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	StoredTemplates map[string]Template `json:"storedTemplates,omitempty" protobuf:"bytes,9,rep,name=storedTemplates" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// PersistentVolumeClaims are the PVCs created for VolumeClaimTemplates.
	PersistentVolumeClaims []apiv1.Volume `json:"persistentVolumeClaims,omitempty" protobuf:"bytes,7,rep,name=persistentVolumeClaims"`
	// Outputs are the workflow's global outputs.
	Outputs *Outputs `json:"outputs,omitempty" protobuf:"bytes,8,opt,name=outputs"`
	// Conditions are the workflow's conditions.
	Conditions Conditions `json:"conditions,omitempty" protobuf:"bytes,13,rep,name=conditions"`
	// ResourcesDuration is the workflow's total resource usage.
	ResourcesDuration ResourcesDuration `json:"resourcesDuration,omitempty" protobuf:"bytes,12,rep,name=resourcesDuration" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
	// StoredWorkflowSpec caches the spec of the referenced workflow template.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	StoredWorkflowSpec *WorkflowSpec `json:"storedWorkflowTemplateSpec,omitempty" protobuf:"bytes,14,opt,name=storedWorkflowTemplateSpec"`
	// Synchronization records the locks held and waited for.
	Synchronization *SynchronizationStatus `json:"synchronization,omitempty" protobuf:"bytes,15,opt,name=synchronization"`
	// ArtifactRepositoryRef is the artifact repository that was resolved.
	ArtifactRepositoryRef *ArtifactRepositoryRefStatus `json:"artifactRepositoryRef,omitempty" protobuf:"bytes,18,opt,name=artifactRepositoryRef"`
	// ArtifactGCStatus records the progress of artifact GC.
	ArtifactGCStatus *ArtGCStatus `json:"artifactGCStatus,omitempty" protobuf:"bytes,19,opt,name=artifactGCStatus"`
	// TaskResultsCompletionStatus maps node IDs to whether their results
	// were all received.
	TaskResultsCompletionStatus map[string]bool `json:"taskResultsCompletionStatus,omitempty" protobuf:"bytes,20,rep,name=taskResultsCompletionStatus" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
}

// NodeStatus is the status of one node of the workflow's tree.
type NodeStatus struct {
	// ID is the node's ID (see NodeID).
	ID string `json:"id" protobuf:"bytes,1,opt,name=id"`
	// Name is the node's unique tree-path name.
	Name string `json:"name" protobuf:"bytes,2,opt,name=name"`
	// DisplayName is the short name shown to users.
	DisplayName string `json:"displayName,omitempty" protobuf:"bytes,3,opt,name=displayName"`
	// Type is the node's type.
	Type NodeType `json:"type" protobuf:"bytes,4,opt,name=type"`
	// TemplateName is the template the node runs.
	TemplateName string `json:"templateName,omitempty" protobuf:"bytes,5,opt,name=templateName"`
	// TemplateRef is the referenced template the node runs.
	TemplateRef *TemplateRef `json:"templateRef,omitempty" protobuf:"bytes,6,opt,name=templateRef"`
	// TemplateScope is the scope the template was resolved in.
	TemplateScope string `json:"templateScope,omitempty" protobuf:"bytes,20,opt,name=templateScope"`
	// Phase summarises where the node is.
	Phase NodePhase `json:"phase,omitempty" protobuf:"bytes,7,opt,name=phase"`
	// BoundaryID is the ID of the nearest enclosing steps or DAG node.
	BoundaryID string `json:"boundaryID,omitempty" protobuf:"bytes,8,opt,name=boundaryID"`
	// Message says why the node is in its phase.
	Message string `json:"message,omitempty" protobuf:"bytes,9,opt,name=message"`
	// StartedAt is when the node started.
	StartedAt metav1.Time `json:"startedAt,omitempty" protobuf:"bytes,10,opt,name=startedAt"`
	// FinishedAt is when the node ended.
	FinishedAt metav1.Time `json:"finishedAt,omitempty" protobuf:"bytes,11,opt,name=finishedAt"`
	// EstimatedDuration is the expected run time in seconds.
	EstimatedDuration EstimatedDuration `json:"estimatedDuration,omitempty" protobuf:"varint,24,opt,name=estimatedDuration"`
	// Progress counts completed pods below this node ("N/M").
	Progress Progress `json:"progress,omitempty" protobuf:"bytes,26,opt,name=progress"`
	// ResourcesDuration is the node's resource usage.
	ResourcesDuration ResourcesDuration `json:"resourcesDuration,omitempty" protobuf:"bytes,21,rep,name=resourcesDuration" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
	// PodIP is the IP of a daemoned pod.
	PodIP string `json:"podIP,omitempty" protobuf:"bytes,12,opt,name=podIP"`
	// Daemoned is true while the node is a running daemon.
	Daemoned *bool `json:"daemoned,omitempty" protobuf:"varint,13,opt,name=daemoned"`
	// NodeFlag marks hook and retry nodes.
	NodeFlag *NodeFlag `json:"nodeFlag,omitempty" protobuf:"bytes,27,opt,name=nodeFlag"`
	// Inputs are the node's resolved inputs.
	Inputs *Inputs `json:"inputs,omitempty" protobuf:"bytes,14,opt,name=inputs"`
	// Outputs are the node's outputs.
	Outputs *Outputs `json:"outputs,omitempty" protobuf:"bytes,15,opt,name=outputs"`
	// Children are the IDs of the node's children.
	Children []string `json:"children,omitempty" protobuf:"bytes,16,rep,name=children"`
	// OutboundNodes are the IDs of the last nodes of this node's subtree,
	// which the next step or task hangs from.
	OutboundNodes []string `json:"outboundNodes,omitempty" protobuf:"bytes,17,rep,name=outboundNodes"`
	// HostNodeName is the Kubernetes node the pod ran on.
	HostNodeName string `json:"hostNodeName,omitempty" protobuf:"bytes,22,opt,name=hostNodeName"`
	// MemoizationStatus records a memoization lookup.
	MemoizationStatus *MemoizationStatus `json:"memoizationStatus,omitempty" protobuf:"bytes,23,opt,name=memoizationStatus"`
	// SynchronizationStatus records the lock the node waits for.
	SynchronizationStatus *NodeSynchronizationStatus `json:"synchronizationStatus,omitempty" protobuf:"bytes,25,opt,name=synchronizationStatus"`
	// TaskResultSynced is true once the node's reported result was merged.
	TaskResultSynced *bool `json:"taskResultSynced,omitempty" protobuf:"varint,28,opt,name=taskResultSynced"`
	// FailedPodRestarts counts pod restarts after infrastructure failures.
	FailedPodRestarts int32 `json:"failedPodRestarts,omitempty" protobuf:"varint,29,opt,name=failedPodRestarts"`
	// RestartingPodUID is the UID of the pod being replaced after such a failure.
	RestartingPodUID string `json:"restartingPodUID,omitempty" protobuf:"bytes,30,opt,name=restartingPodUID"`
}

// NodeFlag marks nodes created for hooks and retries.
type NodeFlag struct {
	// Hooked marks a lifecycle hook node.
	Hooked bool `json:"hooked,omitempty" protobuf:"varint,1,opt,name=hooked"`
	// Retried marks a retry attempt node.
	Retried bool `json:"retried,omitempty" protobuf:"varint,2,opt,name=retried"`
}

// MemoizationStatus records a memoization lookup.
type MemoizationStatus struct {
	// Hit is true when a cached result was used.
	Hit bool `json:"hit" protobuf:"varint,1,opt,name=hit"`
	// Key is the cache key.
	Key string `json:"key" protobuf:"bytes,2,opt,name=key"`
	// CacheName is the cache's ConfigMap.
	CacheName string `json:"cacheName" protobuf:"bytes,3,opt,name=cacheName"`
}

// NodeSynchronizationStatus records the lock a node waits for.
type NodeSynchronizationStatus struct {
	Waiting string `json:"waiting,omitempty" protobuf:"bytes,1,opt,name=waiting"`
}

// SynchronizationStatus records the semaphores and mutexes of a workflow.
type SynchronizationStatus struct {
	Semaphore *SemaphoreStatus `json:"semaphore,omitempty" protobuf:"bytes,1,opt,name=semaphore"`
	Mutex     *MutexStatus     `json:"mutex,omitempty" protobuf:"bytes,2,opt,name=mutex"`
}

// SemaphoreStatus lists who holds and who waits for semaphores.
type SemaphoreStatus struct {
	Holding []SemaphoreHolding `json:"holding,omitempty" protobuf:"bytes,1,rep,name=holding"`
	Waiting []SemaphoreHolding `json:"waiting,omitempty" protobuf:"bytes,2,rep,name=waiting"`
}

// SemaphoreHolding lists the holders (or waiters) of one semaphore.
type SemaphoreHolding struct {
	Semaphore string   `json:"semaphore,omitempty" protobuf:"bytes,1,opt,name=semaphore"`
	Holders   []string `json:"holders,omitempty" protobuf:"bytes,2,rep,name=holders"`
}

// MutexStatus lists who holds and who waits for mutexes.
type MutexStatus struct {
	Holding []MutexHolding `json:"holding,omitempty" protobuf:"bytes,1,rep,name=holding"`
	Waiting []MutexHolding `json:"waiting,omitempty" protobuf:"bytes,2,rep,name=waiting"`
}

// MutexHolding is the holder (or a waiter) of one mutex.
type MutexHolding struct {
	Mutex  string `json:"mutex,omitempty" protobuf:"bytes,1,opt,name=mutex"`
	Holder string `json:"holder,omitempty" protobuf:"bytes,2,opt,name=holder"`
}

// ArtifactRepositoryRefStatus is the artifact repository a workflow resolved.
type ArtifactRepositoryRefStatus struct {
	ArtifactRepositoryRef `json:",inline" protobuf:"bytes,1,opt,name=artifactRepositoryRef"`
	// Namespace of the ConfigMap.
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,2,opt,name=namespace"`
	// Default is true when the controller's default repository was used.
	Default bool `json:"default,omitempty" protobuf:"varint,3,opt,name=default"`
	// ArtifactRepository is the resolved repository.
	ArtifactRepository *ArtifactRepository `json:"artifactRepository,omitempty" protobuf:"bytes,4,opt,name=artifactRepository"`
}

// ArtGCStatus records the progress of artifact GC.
type ArtGCStatus struct {
	// StrategiesProcessed marks the strategies whose GC has started.
	StrategiesProcessed map[ArtifactGCStrategy]bool `json:"strategiesProcessed,omitempty" protobuf:"bytes,1,rep,name=strategiesProcessed" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
	// PodsRecouped marks GC pods whose results were read.
	PodsRecouped map[string]bool `json:"podsRecouped,omitempty" protobuf:"bytes,2,rep,name=podsRecouped" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
	// NotSpecified is true when no artifact asked for GC.
	NotSpecified bool `json:"notSpecified,omitempty" protobuf:"varint,3,opt,name=notSpecified"`
}
