package v1alpha1

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Template is one unit of work. Exactly one of its type fields is set:
// container, script, resource, suspend, http, plugin, containerSet, steps,
// dag or data. The other fields apply to whichever type it is.
type Template struct {
	// Name identifies the template within its workflow or template object.
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Inputs are the parameters and artifacts the template takes.
	Inputs Inputs `json:"inputs,omitempty" protobuf:"bytes,5,opt,name=inputs"`
	// Outputs are the parameters and artifacts the template produces.
	Outputs Outputs `json:"outputs,omitempty" protobuf:"bytes,6,opt,name=outputs"`

	// Container runs one container.
	Container *apiv1.Container `json:"container,omitempty" protobuf:"bytes,12,opt,name=container"`
	// Script runs a container whose source is staged as a file.
	Script *ScriptTemplate `json:"script,omitempty" protobuf:"bytes,13,opt,name=script"`
	// Resource acts on a Kubernetes object.
	Resource *ResourceTemplate `json:"resource,omitempty" protobuf:"bytes,14,opt,name=resource"`
	// Suspend waits for a duration or for a resume.
	Suspend *SuspendTemplate `json:"suspend,omitempty" protobuf:"bytes,16,opt,name=suspend"`
	// HTTP makes an HTTP request.
	HTTP *HTTP `json:"http,omitempty" protobuf:"bytes,42,opt,name=http"`
	// Plugin hands the work to an executor plugin.
	Plugin *Plugin `json:"plugin,omitempty" protobuf:"bytes,43,opt,name=plugin"`
	// ContainerSet runs several containers in one pod.
	ContainerSet *ContainerSetTemplate `json:"containerSet,omitempty" protobuf:"bytes,40,opt,name=containerSet"`
	// Steps are groups of steps: groups run in sequence, steps within a group
	// in parallel.
	Steps []ParallelSteps `json:"steps,omitempty" protobuf:"bytes,11,rep,name=steps"`
	// DAG runs tasks as a dependency graph.
	DAG *DAGTemplate `json:"dag,omitempty" protobuf:"bytes,15,opt,name=dag"`
	// Data lists and transforms data.
	Data *Data `json:"data,omitempty" protobuf:"bytes,39,opt,name=data"`

	// Metadata is added to the template's pod.
	Metadata Metadata `json:"metadata,omitempty" protobuf:"bytes,9,opt,name=metadata"`
	// Annotations are extra annotations on the template's node.
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,44,rep,name=annotations" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// Daemon keeps the pod running for the rest of the enclosing steps or DAG
	// once it is ready.
	Daemon *bool `json:"daemon,omitempty" protobuf:"varint,10,opt,name=daemon"`
	// Volumes are volumes the template's containers may mount.
	Volumes []apiv1.Volume `json:"volumes,omitempty" protobuf:"bytes,17,rep,name=volumes"`
	// InitContainers run before the main container.
	InitContainers []UserContainer `json:"initContainers,omitempty" protobuf:"bytes,18,rep,name=initContainers"`
	// Sidecars run alongside the main container and are killed when it ends.
	Sidecars []UserContainer `json:"sidecars,omitempty" protobuf:"bytes,19,rep,name=sidecars"`
	// ArchiveLocation overrides where the template's artifacts and logs go.
	ArchiveLocation *ArtifactLocation `json:"archiveLocation,omitempty" protobuf:"bytes,20,opt,name=archiveLocation"`
	// NodeSelector overrides the workflow's node selector.
	NodeSelector map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,7,rep,name=nodeSelector" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// Affinity overrides the workflow's affinity.
	Affinity *apiv1.Affinity `json:"affinity,omitempty" protobuf:"bytes,8,opt,name=affinity"`
	// Tolerations apply to the template's pod.
	Tolerations []apiv1.Toleration `json:"tolerations,omitempty" protobuf:"bytes,24,rep,name=tolerations"`
	// SchedulerName overrides the workflow's scheduler.
	SchedulerName string `json:"schedulerName,omitempty" protobuf:"bytes,25,opt,name=schedulerName"`
	// PriorityClassName is the pod's priority class.
	PriorityClassName string `json:"priorityClassName,omitempty" protobuf:"bytes,26,opt,name=priorityClassName"`
	// ServiceAccountName is the pod's service account.
	ServiceAccountName string `json:"serviceAccountName,omitempty" protobuf:"bytes,28,opt,name=serviceAccountName"`
	// AutomountServiceAccountToken controls whether the token is mounted.
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty" protobuf:"varint,32,opt,name=automountServiceAccountToken"`
	// Executor configures the executor containers of the pod.
	Executor *ExecutorConfig `json:"executor,omitempty" protobuf:"bytes,33,opt,name=executor"`
	// HostAliases are added to the pod's /etc/hosts.
	HostAliases []apiv1.HostAlias `json:"hostAliases,omitempty" protobuf:"bytes,29,rep,name=hostAliases"`
	// SecurityContext is the pod's security context.
	SecurityContext *apiv1.PodSecurityContext `json:"securityContext,omitempty" protobuf:"bytes,30,opt,name=securityContext"`
	// PodSpecPatch is a JSON or YAML strategic merge patch for the pod spec.
	PodSpecPatch string `json:"podSpecPatch,omitempty" protobuf:"bytes,31,opt,name=podSpecPatch"`
	// PodResources are pod-level resource requests and limits.
	PodResources *apiv1.ResourceRequirements `json:"podResources,omitempty" protobuf:"bytes,45,opt,name=podResources"`
	// ResourceClaims are dynamic resource allocation claims for the pod.
	ResourceClaims []apiv1.PodResourceClaim `json:"resourceClaims,omitempty" protobuf:"bytes,46,rep,name=resourceClaims"`

	// RetryStrategy retries the template when it fails.
	RetryStrategy *RetryStrategy `json:"retryStrategy,omitempty" protobuf:"bytes,22,opt,name=retryStrategy"`
	// ActiveDeadlineSeconds is the pod's deadline, counted from its start.
	ActiveDeadlineSeconds *intstr.IntOrString `json:"activeDeadlineSeconds,omitempty" protobuf:"bytes,21,opt,name=activeDeadlineSeconds"`
	// Timeout is the node's deadline as a duration ("30s"), counted from the
	// node's creation; it applies to every template type.
	Timeout string `json:"timeout,omitempty" protobuf:"bytes,38,opt,name=timeout"`
	// PendingTimeout is the longest the node may stay Pending (a duration).
	PendingTimeout string `json:"pendingTimeout,omitempty" protobuf:"bytes,47,opt,name=pendingTimeout"`
	// Parallelism caps how many children of this steps/dag template run at
	// once. braid accepts an integer or a string holding one.
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty" protobuf:"varint,23,opt,name=parallelism"`
	// FailFast stops scheduling children after the first failure.
	FailFast *bool `json:"failFast,omitempty" protobuf:"varint,41,opt,name=failFast"`
	// Synchronization holds the locks this template must acquire.
	Synchronization *Synchronization `json:"synchronization,omitempty" protobuf:"bytes,36,opt,name=synchronization"`
	// Memoize caches the template's outputs.
	Memoize *Memoize `json:"memoize,omitempty" protobuf:"bytes,37,opt,name=memoize"`
	// Metrics are custom Prometheus metrics emitted for the node.
	Metrics *Metrics `json:"metrics,omitempty" protobuf:"bytes,35,opt,name=metrics"`
}

// TemplateType names the kind of work a template does.
type TemplateType string

// Template types, one per type field of Template.
const (
	TemplateTypeContainer    TemplateType = "Container"
	TemplateTypeScript       TemplateType = "Script"
	TemplateTypeResource     TemplateType = "Resource"
	TemplateTypeSuspend      TemplateType = "Suspend"
	TemplateTypeHTTP         TemplateType = "HTTP"
	TemplateTypePlugin       TemplateType = "Plugin"
	TemplateTypeContainerSet TemplateType = "ContainerSet"
	TemplateTypeSteps        TemplateType = "Steps"
	TemplateTypeDAG          TemplateType = "DAG"
	TemplateTypeData         TemplateType = "Data"
	TemplateTypeUnknown      TemplateType = "Unknown"
)

// Types lists the type fields that are set, in the order of the constants
// above. A valid template has exactly one; a validator reports none or more.
func (t *Template) Types() []TemplateType {
	if t == nil {
		return nil
	}
	var out []TemplateType
	add := func(set bool, typ TemplateType) {
		if set {
			out = append(out, typ)
		}
	}
	add(t.Container != nil, TemplateTypeContainer)
	add(t.Script != nil, TemplateTypeScript)
	add(t.Resource != nil, TemplateTypeResource)
	add(t.Suspend != nil, TemplateTypeSuspend)
	add(t.HTTP != nil, TemplateTypeHTTP)
	add(t.Plugin != nil, TemplateTypePlugin)
	add(t.ContainerSet != nil, TemplateTypeContainerSet)
	add(t.Steps != nil, TemplateTypeSteps)
	add(t.DAG != nil, TemplateTypeDAG)
	add(t.Data != nil, TemplateTypeData)
	return out
}

// Type returns the template's type, or TemplateTypeUnknown unless exactly
// one type field is set.
func (t *Template) Type() TemplateType {
	types := t.Types()
	if len(types) != 1 {
		return TemplateTypeUnknown
	}
	return types[0]
}

// Inputs are the parameters and artifacts a template takes.
type Inputs struct {
	Parameters []Parameter `json:"parameters,omitempty" protobuf:"bytes,1,rep,name=parameters"`
	Artifacts  Artifacts   `json:"artifacts,omitempty" protobuf:"bytes,2,rep,name=artifacts"`
}

// Outputs are what a template produces.
type Outputs struct {
	Parameters []Parameter `json:"parameters,omitempty" protobuf:"bytes,1,rep,name=parameters"`
	Artifacts  Artifacts   `json:"artifacts,omitempty" protobuf:"bytes,2,rep,name=artifacts"`
	// Result is the captured stdout (or HTTP response body).
	Result *string `json:"result,omitempty" protobuf:"bytes,3,opt,name=result"`
	// ExitCode is the main container's exit code.
	ExitCode *string `json:"exitCode,omitempty" protobuf:"bytes,4,opt,name=exitCode"`
}

// Arguments bind values to a template's inputs (or to a workflow's globals).
type Arguments struct {
	Parameters []Parameter `json:"parameters,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,1,rep,name=parameters"`
	Artifacts  Artifacts   `json:"artifacts,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,2,rep,name=artifacts"`
}

// Parameter is a named string value: an input, an output or an argument.
type Parameter struct {
	// Name identifies the parameter.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Default is used when no value is supplied.
	Default *AnyString `json:"default,omitempty" protobuf:"bytes,2,opt,name=default"`
	// Value is the literal value.
	Value *AnyString `json:"value,omitempty" protobuf:"bytes,3,opt,name=value"`
	// ValueFrom says where the value comes from instead.
	ValueFrom *ValueFrom `json:"valueFrom,omitempty" protobuf:"bytes,4,opt,name=valueFrom"`
	// GlobalName also exports an output as a workflow output parameter.
	GlobalName string `json:"globalName,omitempty" protobuf:"bytes,5,opt,name=globalName"`
	// Enum lists the allowed values (shown by the UI and CLI).
	Enum []AnyString `json:"enum,omitempty" protobuf:"bytes,6,rep,name=enum"`
	// Description is help text for the parameter.
	Description *AnyString `json:"description,omitempty" protobuf:"bytes,7,opt,name=description"`
}

// ValueFrom says where a parameter's value comes from.
type ValueFrom struct {
	// Path is a file in the container to read the value from.
	Path string `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
	// JSONPath extracts the value from a resource template's object.
	JSONPath string `json:"jsonPath,omitempty" protobuf:"bytes,2,opt,name=jsonPath"`
	// JQFilter extracts the value from a resource template's object with jq.
	JQFilter string `json:"jqFilter,omitempty" protobuf:"bytes,3,opt,name=jqFilter"`
	// Event is an expression over the event (WorkflowEventBinding only).
	Event string `json:"event,omitempty" protobuf:"bytes,7,opt,name=event"`
	// Parameter lifts a child's output ({{steps.x.outputs.parameters.y}}).
	Parameter string `json:"parameter,omitempty" protobuf:"bytes,4,opt,name=parameter"`
	// Supplied marks a value supplied later (resume or node set).
	Supplied *SuppliedValueFrom `json:"supplied,omitempty" protobuf:"bytes,6,opt,name=supplied"`
	// ConfigMapKeyRef reads the value from a ConfigMap key.
	ConfigMapKeyRef *apiv1.ConfigMapKeySelector `json:"configMapKeyRef,omitempty" protobuf:"bytes,9,opt,name=configMapKeyRef"`
	// Default is used when the value cannot be obtained.
	Default *AnyString `json:"default,omitempty" protobuf:"bytes,5,opt,name=default"`
	// Expression computes the value with expr-lang.
	Expression string `json:"expression,omitempty" protobuf:"bytes,8,opt,name=expression"`
}

// SuppliedValueFrom marks a value that a user supplies later.
type SuppliedValueFrom struct{}

// ScriptTemplate is a container plus a script source that is staged as a
// file and passed to the command.
type ScriptTemplate struct {
	apiv1.Container `json:",inline" protobuf:"bytes,1,opt,name=container"`
	// Source is the script text.
	Source string `json:"source" protobuf:"bytes,2,opt,name=source"`
}

// UserContainer is an init or sidecar container.
type UserContainer struct {
	apiv1.Container `json:",inline" protobuf:"bytes,1,opt,name=container"`
	// MirrorVolumeMounts gives the container the main container's volume mounts.
	MirrorVolumeMounts *bool `json:"mirrorVolumeMounts,omitempty" protobuf:"varint,2,opt,name=mirrorVolumeMounts"`
}

// ResourceTemplate performs an action on a Kubernetes object.
type ResourceTemplate struct {
	// Action is get, create, apply, delete, replace or patch.
	Action string `json:"action" protobuf:"bytes,1,opt,name=action"`
	// MergeStrategy is the patch type: strategic, merge or json.
	MergeStrategy string `json:"mergeStrategy,omitempty" protobuf:"bytes,2,opt,name=mergeStrategy"`
	// Manifest is the object as YAML or JSON.
	Manifest string `json:"manifest,omitempty" protobuf:"bytes,3,opt,name=manifest"`
	// ManifestFrom reads the manifest from an artifact instead.
	ManifestFrom *ManifestFrom `json:"manifestFrom,omitempty" protobuf:"bytes,8,opt,name=manifestFrom"`
	// SetOwnerReference makes the Workflow the object's owner.
	SetOwnerReference bool `json:"setOwnerReference,omitempty" protobuf:"varint,4,opt,name=setOwnerReference"`
	// SuccessCondition is a label-selector-style condition for success.
	SuccessCondition string `json:"successCondition,omitempty" protobuf:"bytes,5,opt,name=successCondition"`
	// FailureCondition is a label-selector-style condition for failure.
	FailureCondition string `json:"failureCondition,omitempty" protobuf:"bytes,6,opt,name=failureCondition"`
	// Flags are extra kubectl flags.
	Flags []string `json:"flags,omitempty" protobuf:"bytes,7,rep,name=flags"`
}

// ManifestFrom names the artifact that holds a resource manifest.
type ManifestFrom struct {
	Artifact *Artifact `json:"artifact,omitempty" protobuf:"bytes,1,opt,name=artifact"`
}

// SuspendTemplate waits. An empty one waits for a resume.
type SuspendTemplate struct {
	// Duration resumes automatically after this long (seconds or a Go duration).
	Duration string `json:"duration,omitempty" protobuf:"bytes,1,opt,name=duration"`
}

// ContainerSetTemplate runs several containers, ordered by their
// dependencies, in one pod.
type ContainerSetTemplate struct {
	Containers   []ContainerNode     `json:"containers,omitempty" protobuf:"bytes,4,rep,name=containers"`
	VolumeMounts []apiv1.VolumeMount `json:"volumeMounts,omitempty" protobuf:"bytes,3,rep,name=volumeMounts"`
	// RetryStrategy retries containers inside the pod.
	RetryStrategy *ContainerSetRetryStrategy `json:"retryStrategy,omitempty" protobuf:"bytes,5,opt,name=retryStrategy"`
}

// ContainerNode is one container of a container set.
type ContainerNode struct {
	apiv1.Container `json:",inline" protobuf:"bytes,1,opt,name=container"`
	// Dependencies name containers that must succeed first.
	Dependencies []string `json:"dependencies,omitempty" protobuf:"bytes,2,rep,name=dependencies"`
}

// ContainerSetRetryStrategy retries a container set's containers in place.
type ContainerSetRetryStrategy struct {
	// Duration is the wait between attempts (a Go duration).
	Duration string `json:"duration,omitempty" protobuf:"bytes,1,opt,name=duration"`
	// Retries is the number of retries.
	Retries *intstr.IntOrString `json:"retries,omitempty" protobuf:"bytes,2,opt,name=retries"`
}

// Data is a data template: a source and a list of transformations.
type Data struct {
	Source         DataSource     `json:"source" protobuf:"bytes,1,opt,name=source"`
	Transformation Transformation `json:"transformation,omitempty" protobuf:"bytes,2,rep,name=transformation"`
}

// DataSource is where a data template's data comes from.
type DataSource struct {
	// ArtifactPaths lists the files of an artifact.
	ArtifactPaths *ArtifactPaths `json:"artifactPaths,omitempty" protobuf:"bytes,1,opt,name=artifactPaths"`
}

// ArtifactPaths is an artifact used as a source of file paths.
type ArtifactPaths struct {
	Artifact `json:",inline" protobuf:"bytes,1,opt,name=artifact"`
}

// Transformation is an ordered list of transformation steps.
type Transformation []TransformationStep

// TransformationStep is one expression applied to the data.
type TransformationStep struct {
	Expression string `json:"expression" protobuf:"bytes,1,opt,name=expression"`
}

// HTTP is an HTTP request template.
type HTTP struct {
	// Method is the HTTP method (default GET).
	Method string `json:"method,omitempty" protobuf:"bytes,1,opt,name=method"`
	// URL is the request URL.
	URL string `json:"url" protobuf:"bytes,2,opt,name=url"`
	// Headers are the request headers.
	Headers HTTPHeaders `json:"headers,omitempty" protobuf:"bytes,3,rep,name=headers"`
	// TimeoutSeconds bounds the request.
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty" protobuf:"varint,4,opt,name=timeoutSeconds"`
	// SuccessCondition is an expression over request and response.
	SuccessCondition string `json:"successCondition,omitempty" protobuf:"bytes,6,opt,name=successCondition"`
	// Body is the request body.
	Body string `json:"body,omitempty" protobuf:"bytes,5,opt,name=body"`
	// BodyFrom gives the body as bytes instead.
	BodyFrom *HTTPBodySource `json:"bodyFrom,omitempty" protobuf:"bytes,8,opt,name=bodyFrom"`
	// InsecureSkipVerify skips TLS verification.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty" protobuf:"varint,7,opt,name=insecureSkipVerify"`
}

// HTTPHeaders is a list of request headers.
type HTTPHeaders []HTTPHeader

// HTTPHeader is one request header, given literally or from a secret.
type HTTPHeader struct {
	Name      string            `json:"name" protobuf:"bytes,1,opt,name=name"`
	Value     string            `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
	ValueFrom *HTTPHeaderSource `json:"valueFrom,omitempty" protobuf:"bytes,3,opt,name=valueFrom"`
}

// HTTPHeaderSource reads a header value from a secret.
type HTTPHeaderSource struct {
	SecretKeyRef *apiv1.SecretKeySelector `json:"secretKeyRef,omitempty" protobuf:"bytes,1,opt,name=secretKeyRef"`
}

// HTTPBodySource is a request body given as bytes.
type HTTPBodySource struct {
	Bytes []byte `json:"bytes,omitempty" protobuf:"bytes,1,opt,name=bytes"`
}
