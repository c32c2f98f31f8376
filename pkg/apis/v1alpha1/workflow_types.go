package v1alpha1

import (
	apiv1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Workflow is one run of a workflow: the spec to execute and the status the
// controller records while executing it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=wf
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.phase",description="Phase of the workflow"
// +kubebuilder:printcolumn:name="Age",type="date",format="date-time",JSONPath=".status.startedAt",description="When the workflow started"
// +kubebuilder:printcolumn:name="Message",type="string",JSONPath=".status.message",description="Why the workflow is in its phase"
type Workflow struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WorkflowSpec   `json:"spec"`
	Status WorkflowStatus `json:"status,omitempty"`
}

// ExecSpec is the spec the workflow runs. One that references a
// (Cluster)WorkflowTemplate runs the merged spec kept in
// status.storedWorkflowTemplateSpec once the controller has stored it; any
// other workflow runs its own spec.
func (wf *Workflow) ExecSpec() *WorkflowSpec {
	if wf.Spec.WorkflowTemplateRef != nil && wf.Status.StoredWorkflowSpec != nil {
		return wf.Status.StoredWorkflowSpec
	}
	return &wf.Spec
}

// WorkflowList is a list of Workflows.
//
// +kubebuilder:object:root=true
type WorkflowList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Workflow `json:"items"`
}

// WorkflowSpec is what a Workflow runs. WorkflowTemplate,
// ClusterWorkflowTemplate and CronWorkflow (workflowSpec) use it too.
type WorkflowSpec struct {
	// Templates are the templates the workflow can call by name.
	Templates []Template `json:"templates,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	// Entrypoint names the template the workflow starts with.
	Entrypoint string `json:"entrypoint,omitempty"`
	// Arguments are the workflow's global parameters and artifacts
	// ({{workflow.parameters.NAME}}).
	Arguments Arguments `json:"arguments,omitempty"`
	// ServiceAccountName is the service account every pod runs as.
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// AutomountServiceAccountToken controls whether the token is mounted into pods.
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`
	// Executor configures the executor containers.
	Executor *ExecutorConfig `json:"executor,omitempty"`
	// Volumes are volumes any template may mount.
	Volumes []apiv1.Volume `json:"volumes,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	// VolumeClaimTemplates are PVCs created when the workflow starts and
	// deleted according to VolumeClaimGC.
	VolumeClaimTemplates []apiv1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`
	// Parallelism caps how many pods of this workflow run at once. braid
	// accepts an integer or a string holding one.
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty"`
	// ArtifactRepositoryRef selects the artifact repository from a ConfigMap.
	ArtifactRepositoryRef *ArtifactRepositoryRef `json:"artifactRepositoryRef,omitempty"`
	// Suspend, when true, stops new steps from starting until resumed.
	Suspend *bool `json:"suspend,omitempty"`
	// NodeSelector applies to every pod unless a template sets its own.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Affinity applies to every pod unless a template sets its own.
	Affinity *apiv1.Affinity `json:"affinity,omitempty"`
	// Tolerations apply to every pod.
	Tolerations []apiv1.Toleration `json:"tolerations,omitempty"`
	// ImagePullSecrets are added to every pod.
	ImagePullSecrets []apiv1.LocalObjectReference `json:"imagePullSecrets,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	// HostNetwork requests host networking for every pod.
	HostNetwork *bool `json:"hostNetwork,omitempty"`
	// DNSPolicy is the pods' DNS policy.
	DNSPolicy *apiv1.DNSPolicy `json:"dnsPolicy,omitempty"`
	// DNSConfig is extra DNS configuration for the pods.
	DNSConfig *apiv1.PodDNSConfig `json:"dnsConfig,omitempty"`
	// OnExit names a template run when the workflow ends, whatever its outcome.
	OnExit string `json:"onExit,omitempty"`
	// Hooks are workflow-level lifecycle hooks ("exit" or expression hooks).
	Hooks LifecycleHooks `json:"hooks,omitempty"`
	// TTLStrategy deletes the Workflow some time after it completes.
	TTLStrategy *TTLStrategy `json:"ttlStrategy,omitempty"`
	// ActiveDeadlineSeconds is the longest the workflow may run, counted from
	// its start; 0 terminates a running workflow.
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// Priority orders queued workflows when the controller limits parallelism.
	Priority *int32 `json:"priority,omitempty"`
	// SchedulerName is the pods' scheduler unless a template sets its own.
	SchedulerName string `json:"schedulerName,omitempty"`
	// PodGC says when to delete completed pods.
	PodGC *PodGC `json:"podGC,omitempty"`
	// PodPriorityClassName is the pods' priority class.
	PodPriorityClassName string `json:"podPriorityClassName,omitempty"`
	// HostAliases are added to every pod's /etc/hosts.
	HostAliases []apiv1.HostAlias `json:"hostAliases,omitempty" patchStrategy:"merge" patchMergeKey:"ip"`
	// SecurityContext is the pods' security context.
	SecurityContext *apiv1.PodSecurityContext `json:"securityContext,omitempty"`
	// PodSpecPatch is a JSON or YAML strategic merge patch applied to every pod spec.
	PodSpecPatch string `json:"podSpecPatch,omitempty"`
	// PodDisruptionBudget creates a PDB for the workflow's pods.
	PodDisruptionBudget *policyv1.PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`
	// Metrics are custom Prometheus metrics emitted for the workflow.
	Metrics *Metrics `json:"metrics,omitempty"`
	// Shutdown stops (Stop) or terminates (Terminate) a running workflow.
	Shutdown ShutdownStrategy `json:"shutdown,omitempty"`
	// WorkflowTemplateRef runs a stored (Cluster)WorkflowTemplate as this workflow.
	WorkflowTemplateRef *WorkflowTemplateRef `json:"workflowTemplateRef,omitempty"`
	// Synchronization holds the locks the whole workflow must acquire.
	Synchronization *Synchronization `json:"synchronization,omitempty"`
	// VolumeClaimGC says when to delete the PVCs of VolumeClaimTemplates.
	VolumeClaimGC *VolumeClaimGC `json:"volumeClaimGC,omitempty"`
	// RetryStrategy is the default retry strategy of every template.
	RetryStrategy *RetryStrategy `json:"retryStrategy,omitempty"`
	// PodMetadata is added to every pod.
	PodMetadata *Metadata `json:"podMetadata,omitempty"`
	// TemplateDefaults is merged into every template.
	TemplateDefaults *Template `json:"templateDefaults,omitempty"`
	// ArchiveLogs saves the main container's logs as an artifact.
	ArchiveLogs *bool `json:"archiveLogs,omitempty"`
	// WorkflowMetadata is added to the Workflow object itself (used by
	// templates and cron workflows).
	WorkflowMetadata *WorkflowMetadata `json:"workflowMetadata,omitempty"`
	// ArtifactGC says when output artifacts are deleted.
	ArtifactGC *WorkflowLevelArtifactGC `json:"artifactGC,omitempty"`
	// ExecutorPlugins are executor plugins declared by this workflow.
	ExecutorPlugins []ExecutorPlugin `json:"executorPlugins,omitempty"`
	// PodResources are pod-level resource requests and limits.
	PodResources *apiv1.ResourceRequirements `json:"podResources,omitempty"`
	// ResourceClaims are dynamic resource allocation claims for every pod.
	ResourceClaims []apiv1.PodResourceClaim `json:"resourceClaims,omitempty"`
}

// ShutdownStrategy says how a running workflow is brought down.
type ShutdownStrategy string

// Shutdown strategies.
const (
	// ShutdownTerminate stops everything now; exit handlers do not run.
	ShutdownTerminate ShutdownStrategy = "Terminate"
	// ShutdownStop starts nothing new but still runs exit handlers.
	ShutdownStop ShutdownStrategy = "Stop"
)

// WorkflowTemplateRef points at a WorkflowTemplate, or with ClusterScope at a
// ClusterWorkflowTemplate.
type WorkflowTemplateRef struct {
	// Name is the template object's name.
	Name string `json:"name,omitempty"`
	// ClusterScope selects a ClusterWorkflowTemplate.
	ClusterScope bool `json:"clusterScope,omitempty"`
}

// ExecutorConfig configures the executor containers of a pod.
type ExecutorConfig struct {
	// ServiceAccountName is the executor's service account.
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// ExecutorPlugin declares an executor plugin sidecar for plugin templates.
type ExecutorPlugin struct {
	// Metadata names the plugin.
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec describes the plugin's sidecar.
	Spec ExecutorPluginSpec `json:"spec"`
}

// ExecutorPluginSpec describes how an executor plugin runs.
type ExecutorPluginSpec struct {
	// Sidecar is the container serving the plugin API.
	Sidecar ExecutorPluginSidecar `json:"sidecar"`
}

// ExecutorPluginSidecar is the sidecar container of an executor plugin.
type ExecutorPluginSidecar struct {
	// AutomountServiceAccountToken mounts the service account token into the sidecar.
	AutomountServiceAccountToken bool `json:"automountServiceAccountToken,omitempty"`
	// Container is the sidecar container.
	Container apiv1.Container `json:"container"`
}

// TTLStrategy deletes a completed Workflow after some seconds.
type TTLStrategy struct {
	// SecondsAfterCompletion applies whatever the outcome.
	SecondsAfterCompletion *int32 `json:"secondsAfterCompletion,omitempty"`
	// SecondsAfterSuccess applies when the workflow Succeeded.
	SecondsAfterSuccess *int32 `json:"secondsAfterSuccess,omitempty"`
	// SecondsAfterFailure applies when the workflow Failed or Errored.
	SecondsAfterFailure *int32 `json:"secondsAfterFailure,omitempty"`
}

// PodGCStrategy says when completed pods are deleted.
type PodGCStrategy string

// Pod GC strategies.
const (
	PodGCNone                 PodGCStrategy = ""
	PodGCOnPodCompletion      PodGCStrategy = "OnPodCompletion"
	PodGCOnPodSuccess         PodGCStrategy = "OnPodSuccess"
	PodGCOnWorkflowCompletion PodGCStrategy = "OnWorkflowCompletion"
	PodGCOnWorkflowSuccess    PodGCStrategy = "OnWorkflowSuccess"
)

// PodGC configures pod garbage collection.
type PodGC struct {
	// Strategy says when pods are deleted.
	Strategy PodGCStrategy `json:"strategy,omitempty"`
	// LabelSelector limits deletion to the pods it selects.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// DeleteDelayDuration delays each deletion (a Go duration string).
	DeleteDelayDuration string `json:"deleteDelayDuration,omitempty"`
}

// VolumeClaimGCStrategy says when the workflow's PVCs are deleted.
type VolumeClaimGCStrategy string

// Volume claim GC strategies.
const (
	VolumeClaimGCOnCompletion VolumeClaimGCStrategy = "OnWorkflowCompletion"
	VolumeClaimGCOnSuccess    VolumeClaimGCStrategy = "OnWorkflowSuccess"
)

// VolumeClaimGC configures deletion of the PVCs made from VolumeClaimTemplates.
type VolumeClaimGC struct {
	// Strategy says when the PVCs are deleted (default OnWorkflowSuccess).
	Strategy VolumeClaimGCStrategy `json:"strategy,omitempty"`
}

// Metadata is a set of labels and annotations to add to a pod.
type Metadata struct {
	Annotations map[string]string `json:"annotations,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// WorkflowMetadata is metadata added to the Workflow object; LabelsFrom
// computes label values from expressions.
type WorkflowMetadata struct {
	Labels      map[string]string         `json:"labels,omitempty"`
	Annotations map[string]string         `json:"annotations,omitempty"`
	LabelsFrom  map[string]LabelValueFrom `json:"labelsFrom,omitempty"`
}

// LabelValueFrom computes a label value with an expression.
type LabelValueFrom struct {
	// Expression is an expr-lang expression evaluated against the workflow.
	Expression string `json:"expression"`
}
