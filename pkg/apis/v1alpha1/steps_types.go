package v1alpha1

import "k8s.io/apimachinery/pkg/util/intstr"

// ParallelSteps is one group of a steps template: its steps run in parallel.
type ParallelSteps []WorkflowStep

// WorkflowStep is one step of a steps template.
type WorkflowStep struct {
	// Name identifies the step within its template.
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Template names the template to run.
	Template string `json:"template,omitempty" protobuf:"bytes,2,opt,name=template"`
	// Inline is a template defined in place instead of Template.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Inline *Template `json:"inline,omitempty" protobuf:"bytes,13,opt,name=inline"`
	// Arguments bind the called template's inputs.
	Arguments Arguments `json:"arguments,omitempty" protobuf:"bytes,3,opt,name=arguments"`
	// TemplateRef calls a template of a (Cluster)WorkflowTemplate.
	TemplateRef *TemplateRef `json:"templateRef,omitempty" protobuf:"bytes,4,opt,name=templateRef"`
	// WithItems runs the step once per item.
	WithItems []Item `json:"withItems,omitempty" protobuf:"bytes,5,rep,name=withItems"`
	// WithParam runs the step once per element of a JSON array.
	WithParam string `json:"withParam,omitempty" protobuf:"bytes,6,opt,name=withParam"`
	// WithSequence runs the step once per number of a sequence.
	WithSequence *Sequence `json:"withSequence,omitempty" protobuf:"bytes,7,opt,name=withSequence"`
	// When skips the step unless the condition holds.
	When string `json:"when,omitempty" protobuf:"bytes,8,opt,name=when"`
	// ContinueOn lets the steps continue after this step fails or errors.
	ContinueOn *ContinueOn `json:"continueOn,omitempty" protobuf:"bytes,9,opt,name=continueOn"`
	// OnExit names a template run when this step ends (prefer Hooks).
	OnExit string `json:"onExit,omitempty" protobuf:"bytes,11,opt,name=onExit"`
	// Hooks are this step's lifecycle hooks.
	Hooks LifecycleHooks `json:"hooks,omitempty" protobuf:"bytes,12,rep,name=hooks" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
}

// DAGTemplate runs tasks as a dependency graph.
type DAGTemplate struct {
	// Target lists, space separated, the tasks to run (with their
	// dependencies); empty means all.
	Target string `json:"target,omitempty" protobuf:"bytes,1,opt,name=target"`
	// Tasks are the graph's tasks.
	Tasks []DAGTask `json:"tasks,omitempty" protobuf:"bytes,2,rep,name=tasks"`
	// FailFast (default true) changes how a failure settles the DAG.
	FailFast *bool `json:"failFast,omitempty" protobuf:"varint,3,opt,name=failFast"`
}

// DAGTask is one task of a DAG template.
type DAGTask struct {
	// Name identifies the task within its DAG.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Template names the template to run.
	Template string `json:"template,omitempty" protobuf:"bytes,2,opt,name=template"`
	// Inline is a template defined in place instead of Template.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Inline *Template `json:"inline,omitempty" protobuf:"bytes,14,opt,name=inline"`
	// Arguments bind the called template's inputs.
	Arguments Arguments `json:"arguments,omitempty" protobuf:"bytes,3,opt,name=arguments"`
	// TemplateRef calls a template of a (Cluster)WorkflowTemplate.
	TemplateRef *TemplateRef `json:"templateRef,omitempty" protobuf:"bytes,4,opt,name=templateRef"`
	// Dependencies name tasks that must complete first.
	Dependencies []string `json:"dependencies,omitempty" protobuf:"bytes,5,rep,name=dependencies"`
	// WithItems runs the task once per item.
	WithItems []Item `json:"withItems,omitempty" protobuf:"bytes,6,rep,name=withItems"`
	// WithParam runs the task once per element of a JSON array.
	WithParam string `json:"withParam,omitempty" protobuf:"bytes,7,opt,name=withParam"`
	// WithSequence runs the task once per number of a sequence.
	WithSequence *Sequence `json:"withSequence,omitempty" protobuf:"bytes,8,opt,name=withSequence"`
	// When skips the task unless the condition holds.
	When string `json:"when,omitempty" protobuf:"bytes,9,opt,name=when"`
	// ContinueOn lets the DAG continue after this task fails or errors.
	ContinueOn *ContinueOn `json:"continueOn,omitempty" protobuf:"bytes,10,opt,name=continueOn"`
	// OnExit names a template run when this task ends (prefer Hooks).
	OnExit string `json:"onExit,omitempty" protobuf:"bytes,11,opt,name=onExit"`
	// Depends is a boolean expression over other tasks' results.
	Depends string `json:"depends,omitempty" protobuf:"bytes,12,opt,name=depends"`
	// Hooks are this task's lifecycle hooks.
	Hooks LifecycleHooks `json:"hooks,omitempty" protobuf:"bytes,13,rep,name=hooks" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
}

// TemplateRef points at one template of a WorkflowTemplate, or with
// ClusterScope of a ClusterWorkflowTemplate.
type TemplateRef struct {
	// Name is the template object's name.
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Template is the template's name within that object.
	Template string `json:"template,omitempty" protobuf:"bytes,2,opt,name=template"`
	// ClusterScope selects a ClusterWorkflowTemplate.
	ClusterScope bool `json:"clusterScope,omitempty" protobuf:"varint,4,opt,name=clusterScope"`
}

// Sequence is a range of numbers for withSequence: either Count, or Start
// and End (counting down when End < Start).
type Sequence struct {
	Count *intstr.IntOrString `json:"count,omitempty" protobuf:"bytes,1,opt,name=count"`
	Start *intstr.IntOrString `json:"start,omitempty" protobuf:"bytes,2,opt,name=start"`
	End   *intstr.IntOrString `json:"end,omitempty" protobuf:"bytes,3,opt,name=end"`
	// Format is a printf format for each number.
	Format string `json:"format,omitempty" protobuf:"bytes,4,opt,name=format"`
}

// ContinueOn says which failures of a step or task its parent tolerates.
type ContinueOn struct {
	Error  bool `json:"error,omitempty" protobuf:"varint,1,opt,name=error"`
	Failed bool `json:"failed,omitempty" protobuf:"varint,2,opt,name=failed"`
}

// LifecycleEvent names a lifecycle hook: "exit" or any name of an
// expression hook.
type LifecycleEvent string

// ExitLifecycleEvent is the hook run when the step, task or workflow ends.
const ExitLifecycleEvent LifecycleEvent = "exit"

// LifecycleHooks maps hook names to hooks.
type LifecycleHooks map[LifecycleEvent]LifecycleHook

// LifecycleHook runs a template when its expression first becomes true, or
// at the end (the "exit" hook).
type LifecycleHook struct {
	// Template names the template to run.
	Template string `json:"template,omitempty" protobuf:"bytes,1,opt,name=template"`
	// Arguments bind the template's inputs.
	Arguments Arguments `json:"arguments,omitempty" protobuf:"bytes,2,opt,name=arguments"`
	// TemplateRef calls a template of a (Cluster)WorkflowTemplate.
	TemplateRef *TemplateRef `json:"templateRef,omitempty" protobuf:"bytes,3,opt,name=templateRef"`
	// Expression fires the hook once when it evaluates to true.
	Expression string `json:"expression,omitempty" protobuf:"bytes,4,opt,name=expression"`
}
