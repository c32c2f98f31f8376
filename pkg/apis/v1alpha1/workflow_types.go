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
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec   WorkflowSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status WorkflowStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
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
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []Workflow `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// WorkflowSpec is what a Workflow runs. WorkflowTemplate,
// ClusterWorkflowTemplate and CronWorkflow (workflowSpec) use it too.
type WorkflowSpec struct {
	// Templates are the templates the workflow can call by name.
	Templates []Template `json:"templates,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,1,rep,name=templates"`
	// Entrypoint names the template the workflow starts with.
	Entrypoint string `json:"entrypoint,omitempty" protobuf:"bytes,2,opt,name=entrypoint"`
	// Arguments are the workflow's global parameters and artifacts
	// ({{workflow.parameters.NAME}}).
	Arguments Arguments `json:"arguments,omitempty" protobuf:"bytes,3,opt,name=arguments"`
	// ServiceAccountName is the service account every pod runs as.
	ServiceAccountName string `json:"serviceAccountName,omitempty" protobuf:"bytes,4,opt,name=serviceAccountName"`
	// AutomountServiceAccountToken controls whether the token is mounted into pods.
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty" protobuf:"varint,28,opt,name=automountServiceAccountToken"`
	// Executor configures the executor containers.
	Executor *ExecutorConfig `json:"executor,omitempty" protobuf:"bytes,29,opt,name=executor"`
	// Volumes are volumes any template may mount.
	Volumes []apiv1.Volume `json:"volumes,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,5,rep,name=volumes"`
	// VolumeClaimTemplates are PVCs created when the workflow starts and
	// deleted according to VolumeClaimGC.
	VolumeClaimTemplates []apiv1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty" protobuf:"bytes,6,rep,name=volumeClaimTemplates"`
	// Parallelism caps how many pods of this workflow run at once. braid
	// accepts an integer or a string holding one.
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty" protobuf:"varint,7,opt,name=parallelism"`
	// ArtifactRepositoryRef selects the artifact repository from a ConfigMap.
	ArtifactRepositoryRef *ArtifactRepositoryRef `json:"artifactRepositoryRef,omitempty" protobuf:"bytes,8,opt,name=artifactRepositoryRef"`
	// Suspend, when true, stops new steps from starting until resumed.
	Suspend *bool `json:"suspend,omitempty" protobuf:"varint,9,opt,name=suspend"`
	// NodeSelector applies to every pod unless a template sets its own.
	NodeSelector map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,10,rep,name=nodeSelector" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// Affinity applies to every pod unless a template sets its own.
	Affinity *apiv1.Affinity `json:"affinity,omitempty" protobuf:"bytes,11,opt,name=affinity"`
	// Tolerations apply to every pod.
	Tolerations []apiv1.Toleration `json:"tolerations,omitempty" protobuf:"bytes,12,rep,name=tolerations"`
	// ImagePullSecrets are added to every pod.
	ImagePullSecrets []apiv1.LocalObjectReference `json:"imagePullSecrets,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,13,rep,name=imagePullSecrets"`
	// HostNetwork requests host networking for every pod.
	HostNetwork *bool `json:"hostNetwork,omitempty" protobuf:"varint,14,opt,name=hostNetwork"`
	// DNSPolicy is the pods' DNS policy.
	DNSPolicy *apiv1.DNSPolicy `json:"dnsPolicy,omitempty" protobuf:"bytes,15,opt,name=dnsPolicy"`
	// DNSConfig is extra DNS configuration for the pods.
	DNSConfig *apiv1.PodDNSConfig `json:"dnsConfig,omitempty" protobuf:"bytes,16,opt,name=dnsConfig"`
	// OnExit names a template run when the workflow ends, whatever its outcome.
	OnExit string `json:"onExit,omitempty" protobuf:"bytes,17,opt,name=onExit"`
	// Hooks are workflow-level lifecycle hooks ("exit" or expression hooks).
	Hooks LifecycleHooks `json:"hooks,omitempty" protobuf:"bytes,41,rep,name=hooks" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// TTLStrategy deletes the Workflow some time after it completes.
	TTLStrategy *TTLStrategy `json:"ttlStrategy,omitempty" protobuf:"bytes,30,opt,name=ttlStrategy"`
	// ActiveDeadlineSeconds is the longest the workflow may run, counted from
	// its start; 0 terminates a running workflow.
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty" protobuf:"varint,19,opt,name=activeDeadlineSeconds"`
	// Priority orders queued workflows when the controller limits parallelism.
	Priority *int32 `json:"priority,omitempty" protobuf:"varint,20,opt,name=priority"`
	// SchedulerName is the pods' scheduler unless a template sets its own.
	SchedulerName string `json:"schedulerName,omitempty" protobuf:"bytes,21,opt,name=schedulerName"`
	// PodGC says when to delete completed pods.
	PodGC *PodGC `json:"podGC,omitempty" protobuf:"bytes,22,opt,name=podGC"`
	// PodPriorityClassName is the pods' priority class.
	PodPriorityClassName string `json:"podPriorityClassName,omitempty" protobuf:"bytes,23,opt,name=podPriorityClassName"`
	// HostAliases are added to every pod's /etc/hosts.
	HostAliases []apiv1.HostAlias `json:"hostAliases,omitempty" patchStrategy:"merge" patchMergeKey:"ip" protobuf:"bytes,25,rep,name=hostAliases"`
	// SecurityContext is the pods' security context.
	SecurityContext *apiv1.PodSecurityContext `json:"securityContext,omitempty" protobuf:"bytes,26,opt,name=securityContext"`
	// PodSpecPatch is a JSON or YAML strategic merge patch applied to every pod spec.
	PodSpecPatch string `json:"podSpecPatch,omitempty" protobuf:"bytes,27,opt,name=podSpecPatch"`
	// PodDisruptionBudget creates a PDB for the workflow's pods.
	PodDisruptionBudget *policyv1.PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty" protobuf:"bytes,31,opt,name=podDisruptionBudget"`
	// Metrics are custom Prometheus metrics emitted for the workflow.
	Metrics *Metrics `json:"metrics,omitempty" protobuf:"bytes,32,opt,name=metrics"`
	// Shutdown stops (Stop) or terminates (Terminate) a running workflow.
	Shutdown ShutdownStrategy `json:"shutdown,omitempty" protobuf:"bytes,33,opt,name=shutdown"`
	// WorkflowTemplateRef runs a stored (Cluster)WorkflowTemplate as this workflow.
	WorkflowTemplateRef *WorkflowTemplateRef `json:"workflowTemplateRef,omitempty" protobuf:"bytes,34,opt,name=workflowTemplateRef"`
	// Synchronization holds the locks the whole workflow must acquire.
	Synchronization *Synchronization `json:"synchronization,omitempty" protobuf:"bytes,35,opt,name=synchronization"`
	// VolumeClaimGC says when to delete the PVCs of VolumeClaimTemplates.
	VolumeClaimGC *VolumeClaimGC `json:"volumeClaimGC,omitempty" protobuf:"bytes,36,opt,name=volumeClaimGC"`
	// RetryStrategy is the default retry strategy of every template.
	RetryStrategy *RetryStrategy `json:"retryStrategy,omitempty" protobuf:"bytes,37,opt,name=retryStrategy"`
	// PodMetadata is added to every pod.
	PodMetadata *Metadata `json:"podMetadata,omitempty" protobuf:"bytes,38,opt,name=podMetadata"`
	// TemplateDefaults is merged into every template.
	TemplateDefaults *Template `json:"templateDefaults,omitempty" protobuf:"bytes,39,opt,name=templateDefaults"`
	// ArchiveLogs saves the main container's logs as an artifact.
	ArchiveLogs *bool `json:"archiveLogs,omitempty" protobuf:"varint,40,opt,name=archiveLogs"`
	// WorkflowMetadata is added to the Workflow object itself (used by
	// templates and cron workflows).
	WorkflowMetadata *WorkflowMetadata `json:"workflowMetadata,omitempty" protobuf:"bytes,42,opt,name=workflowMetadata"`
	// ArtifactGC says when output artifacts are deleted.
	ArtifactGC *WorkflowLevelArtifactGC `json:"artifactGC,omitempty" protobuf:"bytes,43,opt,name=artifactGC"`
	// ExecutorPlugins are executor plugins declared by this workflow.
	ExecutorPlugins []ExecutorPlugin `json:"executorPlugins,omitempty" protobuf:"bytes,44,rep,name=executorPlugins"`
	// PodResources are pod-level resource requests and limits.
	PodResources *apiv1.ResourceRequirements `json:"podResources,omitempty" protobuf:"bytes,45,opt,name=podResources"`
	// ResourceClaims are dynamic resource allocation claims for every pod.
	ResourceClaims []apiv1.PodResourceClaim `json:"resourceClaims,omitempty" protobuf:"bytes,46,rep,name=resourceClaims"`
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
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// ClusterScope selects a ClusterWorkflowTemplate.
	ClusterScope bool `json:"clusterScope,omitempty" protobuf:"varint,2,opt,name=clusterScope"`
}

// ExecutorConfig configures the executor containers of a pod.
type ExecutorConfig struct {
	// ServiceAccountName is the executor's service account.
	ServiceAccountName string `json:"serviceAccountName,omitempty" protobuf:"bytes,1,opt,name=serviceAccountName"`
}

// ExecutorPlugin declares an executor plugin sidecar for plugin templates.
type ExecutorPlugin struct {
	// Metadata names the plugin.
	Metadata metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec describes the plugin's sidecar.
	Spec ExecutorPluginSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// ExecutorPluginSpec describes how an executor plugin runs.
type ExecutorPluginSpec struct {
	// Sidecar is the container serving the plugin API.
	Sidecar ExecutorPluginSidecar `json:"sidecar" protobuf:"bytes,1,opt,name=sidecar"`
}

// ExecutorPluginSidecar is the sidecar container of an executor plugin.
type ExecutorPluginSidecar struct {
	// AutomountServiceAccountToken mounts the service account token into the sidecar.
	AutomountServiceAccountToken bool `json:"automountServiceAccountToken,omitempty" protobuf:"varint,1,opt,name=automountServiceAccountToken"`
	// Container is the sidecar container.
	Container apiv1.Container `json:"container" protobuf:"bytes,2,opt,name=container"`
}

// TTLStrategy deletes a completed Workflow after some seconds.
type TTLStrategy struct {
	// SecondsAfterCompletion applies whatever the outcome.
	SecondsAfterCompletion *int32 `json:"secondsAfterCompletion,omitempty" protobuf:"varint,1,opt,name=secondsAfterCompletion"`
	// SecondsAfterSuccess applies when the workflow Succeeded.
	SecondsAfterSuccess *int32 `json:"secondsAfterSuccess,omitempty" protobuf:"varint,2,opt,name=secondsAfterSuccess"`
	// SecondsAfterFailure applies when the workflow Failed or Errored.
	SecondsAfterFailure *int32 `json:"secondsAfterFailure,omitempty" protobuf:"varint,3,opt,name=secondsAfterFailure"`
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
	Strategy PodGCStrategy `json:"strategy,omitempty" protobuf:"bytes,1,opt,name=strategy"`
	// LabelSelector limits deletion to the pods it selects.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty" protobuf:"bytes,2,opt,name=labelSelector"`
	// DeleteDelayDuration delays each deletion (a Go duration string).
	DeleteDelayDuration string `json:"deleteDelayDuration,omitempty" protobuf:"bytes,3,opt,name=deleteDelayDuration"`
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
	Strategy VolumeClaimGCStrategy `json:"strategy,omitempty" protobuf:"bytes,1,opt,name=strategy"`
}

// Metadata is a set of labels and annotations to add to a pod.
type Metadata struct {
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,1,rep,name=annotations" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Labels      map[string]string `json:"labels,omitempty" protobuf:"bytes,2,rep,name=labels" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
}

// WorkflowMetadata is metadata added to the Workflow object; LabelsFrom
// computes label values from expressions.
type WorkflowMetadata struct {
	Labels      map[string]string         `json:"labels,omitempty" protobuf:"bytes,1,rep,name=labels" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Annotations map[string]string         `json:"annotations,omitempty" protobuf:"bytes,2,rep,name=annotations" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	LabelsFrom  map[string]LabelValueFrom `json:"labelsFrom,omitempty" protobuf:"bytes,3,rep,name=labelsFrom" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
}

// LabelValueFrom computes a label value with an expression.
type LabelValueFrom struct {
	// Expression is an expr-lang expression evaluated against the workflow.
	Expression string `json:"expression" protobuf:"bytes,1,opt,name=expression"`
}
