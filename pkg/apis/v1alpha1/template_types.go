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
	Name string `json:"name,omitempty"`
	// Inputs are the parameters and artifacts the template takes.
	Inputs Inputs `json:"inputs,omitempty"`
	// Outputs are the parameters and artifacts the template produces.
	Outputs Outputs `json:"outputs,omitempty"`

	// Container runs one container.
	Container *apiv1.Container `json:"container,omitempty"`
	// Script runs a container whose source is staged as a file.
	Script *ScriptTemplate `json:"script,omitempty"`
	// Resource acts on a Kubernetes object.
	Resource *ResourceTemplate `json:"resource,omitempty"`
	// Suspend waits for a duration or for a resume.
	Suspend *SuspendTemplate `json:"suspend,omitempty"`
	// HTTP makes an HTTP request.
	HTTP *HTTP `json:"http,omitempty"`
	// Plugin hands the work to an executor plugin.
	Plugin *Plugin `json:"plugin,omitempty"`
	// ContainerSet runs several containers in one pod.
	ContainerSet *ContainerSetTemplate `json:"containerSet,omitempty"`
	// Steps are groups of steps: groups run in sequence, steps within a group
	// in parallel.
	Steps []ParallelSteps `json:"steps,omitempty"`
	// DAG runs tasks as a dependency graph.
	DAG *DAGTemplate `json:"dag,omitempty"`
	// Data lists and transforms data.
	Data *Data `json:"data,omitempty"`

	// Metadata is added to the template's pod.
	Metadata Metadata `json:"metadata,omitempty"`
	// Annotations are extra annotations on the template's node.
	Annotations map[string]string `json:"annotations,omitempty"`
	// Daemon keeps the pod running for the rest of the enclosing steps or DAG
	// once it is ready.
	Daemon *bool `json:"daemon,omitempty"`
	// Volumes are volumes the template's containers may mount.
	Volumes []apiv1.Volume `json:"volumes,omitempty"`
	// InitContainers run before the main container.
	InitContainers []UserContainer `json:"initContainers,omitempty"`
	// Sidecars run alongside the main container and are killed when it ends.
	Sidecars []UserContainer `json:"sidecars,omitempty"`
	// ArchiveLocation overrides where the template's artifacts and logs go.
	ArchiveLocation *ArtifactLocation `json:"archiveLocation,omitempty"`
	// NodeSelector overrides the workflow's node selector.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Affinity overrides the workflow's affinity.
	Affinity *apiv1.Affinity `json:"affinity,omitempty"`
	// Tolerations apply to the template's pod.
	Tolerations []apiv1.Toleration `json:"tolerations,omitempty"`
	// SchedulerName overrides the workflow's scheduler.
	SchedulerName string `json:"schedulerName,omitempty"`
	// PriorityClassName is the pod's priority class.
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// ServiceAccountName is the pod's service account.
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// AutomountServiceAccountToken controls whether the token is mounted.
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`
	// Executor configures the executor containers of the pod.
	Executor *ExecutorConfig `json:"executor,omitempty"`
	// HostAliases are added to the pod's /etc/hosts.
	HostAliases []apiv1.HostAlias `json:"hostAliases,omitempty"`
	// SecurityContext is the pod's security context.
	SecurityContext *apiv1.PodSecurityContext `json:"securityContext,omitempty"`
	// PodSpecPatch is a JSON or YAML strategic merge patch for the pod spec.
	PodSpecPatch string `json:"podSpecPatch,omitempty"`
	// PodResources are pod-level resource requests and limits.
	PodResources *apiv1.ResourceRequirements `json:"podResources,omitempty"`
	// ResourceClaims are dynamic resource allocation claims for the pod.
	ResourceClaims []apiv1.PodResourceClaim `json:"resourceClaims,omitempty"`

	// RetryStrategy retries the template when it fails.
	RetryStrategy *RetryStrategy `json:"retryStrategy,omitempty"`
	// ActiveDeadlineSeconds is the pod's deadline, counted from its start.
	ActiveDeadlineSeconds *intstr.IntOrString `json:"activeDeadlineSeconds,omitempty"`
	// Timeout is the node's deadline as a duration ("30s"), counted from the
	// node's creation; it applies to every template type.
	Timeout string `json:"timeout,omitempty"`
	// PendingTimeout is the longest the node may stay Pending (a duration).
	PendingTimeout string `json:"pendingTimeout,omitempty"`
	// Parallelism caps how many children of this steps/dag template run at
	// once. braid accepts an integer or a string holding one.
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty"`
	// FailFast stops scheduling children after the first failure.
	FailFast *bool `json:"failFast,omitempty"`
	// Synchronization holds the locks this template must acquire.
	Synchronization *Synchronization `json:"synchronization,omitempty"`
	// Memoize caches the template's outputs.
	Memoize *Memoize `json:"memoize,omitempty"`
	// Metrics are custom Prometheus metrics emitted for the node.
	Metrics *Metrics `json:"metrics,omitempty"`
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
	Parameters []Parameter `json:"parameters,omitempty"`
	Artifacts  Artifacts   `json:"artifacts,omitempty"`
}

// Outputs are what a template produces.
type Outputs struct {
	Parameters []Parameter `json:"parameters,omitempty"`
	Artifacts  Artifacts   `json:"artifacts,omitempty"`
	// Result is the captured stdout (or HTTP response body).
	Result *string `json:"result,omitempty"`
	// ExitCode is the main container's exit code.
	ExitCode *string `json:"exitCode,omitempty"`
}

// Arguments bind values to a template's inputs (or to a workflow's globals).
type Arguments struct {
	Parameters []Parameter `json:"parameters,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Artifacts  Artifacts   `json:"artifacts,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}

// Parameter is a named string value: an input, an output or an argument.
type Parameter struct {
	// Name identifies the parameter.
	Name string `json:"name"`
	// Default is used when no value is supplied.
	Default *AnyString `json:"default,omitempty"`
	// Value is the literal value.
	Value *AnyString `json:"value,omitempty"`
	// ValueFrom says where the value comes from instead.
	ValueFrom *ValueFrom `json:"valueFrom,omitempty"`
	// GlobalName also exports an output as a workflow output parameter.
	GlobalName string `json:"globalName,omitempty"`
	// Enum lists the allowed values (shown by the UI and CLI).
	Enum []AnyString `json:"enum,omitempty"`
	// Description is help text for the parameter.
	Description *AnyString `json:"description,omitempty"`
}

// ValueFrom says where a parameter's value comes from.
type ValueFrom struct {
	// Path is a file in the container to read the value from.
	Path string `json:"path,omitempty"`
	// JSONPath extracts the value from a resource template's object.
	JSONPath string `json:"jsonPath,omitempty"`
	// JQFilter extracts the value from a resource template's object with jq.
	JQFilter string `json:"jqFilter,omitempty"`
	// Event is an expression over the event (WorkflowEventBinding only).
	Event string `json:"event,omitempty"`
	// Parameter lifts a child's output ({{steps.x.outputs.parameters.y}}).
	Parameter string `json:"parameter,omitempty"`
	// Supplied marks a value supplied later (resume or node set).
	Supplied *SuppliedValueFrom `json:"supplied,omitempty"`
	// ConfigMapKeyRef reads the value from a ConfigMap key.
	ConfigMapKeyRef *apiv1.ConfigMapKeySelector `json:"configMapKeyRef,omitempty"`
	// Default is used when the value cannot be obtained.
	Default *AnyString `json:"default,omitempty"`
	// Expression computes the value with expr-lang.
	Expression string `json:"expression,omitempty"`
}

// SuppliedValueFrom marks a value that a user supplies later.
type SuppliedValueFrom struct{}

// ScriptTemplate is a container plus a script source that is staged as a
// file and passed to the command.
type ScriptTemplate struct {
	apiv1.Container `json:",inline"`
	// Source is the script text.
	Source string `json:"source"`
}

// UserContainer is an init or sidecar container.
type UserContainer struct {
	apiv1.Container `json:",inline"`
	// MirrorVolumeMounts gives the container the main container's volume mounts.
	MirrorVolumeMounts *bool `json:"mirrorVolumeMounts,omitempty"`
}

// ResourceTemplate performs an action on a Kubernetes object.
type ResourceTemplate struct {
	// Action is get, create, apply, delete, replace or patch.
	Action string `json:"action"`
	// MergeStrategy is the patch type: strategic, merge or json.
	MergeStrategy string `json:"mergeStrategy,omitempty"`
	// Manifest is the object as YAML or JSON.
	Manifest string `json:"manifest,omitempty"`
	// ManifestFrom reads the manifest from an artifact instead.
	ManifestFrom *ManifestFrom `json:"manifestFrom,omitempty"`
	// SetOwnerReference makes the Workflow the object's owner.
	SetOwnerReference bool `json:"setOwnerReference,omitempty"`
	// SuccessCondition is a label-selector-style condition for success.
	SuccessCondition string `json:"successCondition,omitempty"`
	// FailureCondition is a label-selector-style condition for failure.
	FailureCondition string `json:"failureCondition,omitempty"`
	// Flags are extra kubectl flags.
	Flags []string `json:"flags,omitempty"`
}

// ManifestFrom names the artifact that holds a resource manifest.
type ManifestFrom struct {
	Artifact *Artifact `json:"artifact,omitempty"`
}

// SuspendTemplate waits. An empty one waits for a resume.
type SuspendTemplate struct {
	// Duration resumes automatically after this long (seconds or a Go duration).
	Duration string `json:"duration,omitempty"`
}

// ContainerSetTemplate runs several containers, ordered by their
// dependencies, in one pod.
type ContainerSetTemplate struct {
	Containers   []ContainerNode     `json:"containers,omitempty"`
	VolumeMounts []apiv1.VolumeMount `json:"volumeMounts,omitempty"`
	// RetryStrategy retries containers inside the pod.
	RetryStrategy *ContainerSetRetryStrategy `json:"retryStrategy,omitempty"`
}

// ContainerNode is one container of a container set.
type ContainerNode struct {
	apiv1.Container `json:",inline"`
	// Dependencies name containers that must succeed first.
	Dependencies []string `json:"dependencies,omitempty"`
}

// ContainerSetRetryStrategy retries a container set's containers in place.
type ContainerSetRetryStrategy struct {
	// Duration is the wait between attempts (a Go duration).
	Duration string `json:"duration,omitempty"`
	// Retries is the number of retries.
	Retries *intstr.IntOrString `json:"retries,omitempty"`
}

// Data is a data template: a source and a list of transformations.
type Data struct {
	Source         DataSource     `json:"source"`
	Transformation Transformation `json:"transformation,omitempty"`
}

// DataSource is where a data template's data comes from.
type DataSource struct {
	// ArtifactPaths lists the files of an artifact.
	ArtifactPaths *ArtifactPaths `json:"artifactPaths,omitempty"`
}

// ArtifactPaths is an artifact used as a source of file paths.
type ArtifactPaths struct {
	Artifact `json:",inline"`
}

// Transformation is an ordered list of transformation steps.
type Transformation []TransformationStep

// TransformationStep is one expression applied to the data.
type TransformationStep struct {
	Expression string `json:"expression"`
}

// HTTP is an HTTP request template.
type HTTP struct {
	// Method is the HTTP method (default GET).
	Method string `json:"method,omitempty"`
	// URL is the request URL.
	URL string `json:"url"`
	// Headers are the request headers.
	Headers HTTPHeaders `json:"headers,omitempty"`
	// TimeoutSeconds bounds the request.
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
	// SuccessCondition is an expression over request and response.
	SuccessCondition string `json:"successCondition,omitempty"`
	// Body is the request body.
	Body string `json:"body,omitempty"`
	// BodyFrom gives the body as bytes instead.
	BodyFrom *HTTPBodySource `json:"bodyFrom,omitempty"`
	// InsecureSkipVerify skips TLS verification.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// HTTPHeaders is a list of request headers.
type HTTPHeaders []HTTPHeader

// HTTPHeader is one request header, given literally or from a secret.
type HTTPHeader struct {
	Name      string            `json:"name"`
	Value     string            `json:"value,omitempty"`
	ValueFrom *HTTPHeaderSource `json:"valueFrom,omitempty"`
}

// HTTPHeaderSource reads a header value from a secret.
type HTTPHeaderSource struct {
	SecretKeyRef *apiv1.SecretKeySelector `json:"secretKeyRef,omitempty"`
}

// HTTPBodySource is a request body given as bytes.
type HTTPBodySource struct {
	Bytes []byte `json:"bytes,omitempty"`
}
