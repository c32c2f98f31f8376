package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// SubmitOpts says how SubmitWorkflow builds a Workflow from a
// WorkflowTemplate, ClusterWorkflowTemplate or CronWorkflow.
type SubmitOpts struct {
	// Name overrides metadata.name.
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// GenerateName overrides metadata.generateName.
	GenerateName string `json:"generateName,omitempty" protobuf:"bytes,2,opt,name=generateName"`
	// Entrypoint overrides spec.entrypoint.
	Entrypoint string `json:"entryPoint,omitempty" protobuf:"bytes,4,opt,name=entrypoint"`
	// Parameters are "name=value" each.
	Parameters []string `json:"parameters,omitempty" protobuf:"bytes,5,rep,name=parameters"`
	// ServiceAccount overrides spec.serviceAccountName.
	ServiceAccount string `json:"serviceAccount,omitempty" protobuf:"bytes,7,opt,name=serviceAccount"`
	// DryRun returns the Workflow without creating it.
	DryRun bool `json:"dryRun,omitempty" protobuf:"varint,8,opt,name=dryRun"`
	// ServerDryRun validates on the server without creating.
	ServerDryRun bool `json:"serverDryRun,omitempty" protobuf:"varint,9,opt,name=serverDryRun"`
	// Labels are added to the Workflow: "a=b,c=d".
	Labels string `json:"labels,omitempty" protobuf:"bytes,10,opt,name=labels"`
	// OwnerReference is added to the Workflow's owners.
	OwnerReference *metav1.OwnerReference `json:"ownerReference,omitempty" protobuf:"bytes,11,opt,name=ownerReference"`
	// Annotations are added to the Workflow: "a=b,c=d".
	Annotations string `json:"annotations,omitempty" protobuf:"bytes,12,opt,name=annotations"`
	// PodPriorityClassName overrides spec.podPriorityClassName.
	PodPriorityClassName string `json:"podPriorityClassName,omitempty" protobuf:"bytes,13,opt,name=podPriorityClassName"`
	// Priority overrides spec.priority.
	Priority *int32 `json:"priority,omitempty" protobuf:"varint,14,opt,name=priority"`
}

// Version is the server's build information.
type Version struct {
	Version      string `json:"version" protobuf:"bytes,1,opt,name=version"`
	BuildDate    string `json:"buildDate" protobuf:"bytes,2,opt,name=buildDate"`
	GitCommit    string `json:"gitCommit" protobuf:"bytes,3,opt,name=gitCommit"`
	GitTag       string `json:"gitTag" protobuf:"bytes,4,opt,name=gitTag"`
	GitTreeState string `json:"gitTreeState" protobuf:"bytes,5,opt,name=gitTreeState"`
	GoVersion    string `json:"goVersion" protobuf:"bytes,6,opt,name=goVersion"`
	Compiler     string `json:"compiler" protobuf:"bytes,7,opt,name=compiler"`
	Platform     string `json:"platform" protobuf:"bytes,8,opt,name=platform"`
}
