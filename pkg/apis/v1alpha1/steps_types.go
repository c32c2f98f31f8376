package v1alpha1

import "k8s.io/apimachinery/pkg/util/intstr"

// ParallelSteps is one group of a steps template: its steps run in parallel.
type ParallelSteps []WorkflowStep

// WorkflowStep is one step of a steps template.
type WorkflowStep struct {
	// Name identifies the step within its template.
	Name string `json:"name,omitempty"`
	// Template names the template to run.
	Template string `json:"template,omitempty"`
	// Inline is a template defined in place instead of Template.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Inline *Template `json:"inline,omitempty"`
	// Arguments bind the called template's inputs.
	Arguments Arguments `json:"arguments,omitempty"`
	// TemplateRef calls a template of a (Cluster)WorkflowTemplate.
	TemplateRef *TemplateRef `json:"templateRef,omitempty"`
	// WithItems runs the step once per item.
	WithItems []Item `json:"withItems,omitempty"`
	// WithParam runs the step once per element of a JSON array.
	WithParam string `json:"withParam,omitempty"`
	// WithSequence runs the step once per number of a sequence.
	WithSequence *Sequence `json:"withSequence,omitempty"`
	// When skips the step unless the condition holds.
	When string `json:"when,omitempty"`
	// ContinueOn lets the steps continue after this step fails or errors.
	ContinueOn *ContinueOn `json:"continueOn,omitempty"`
	// OnExit names a template run when this step ends (prefer Hooks).
	OnExit string `json:"onExit,omitempty"`
	// Hooks are this step's lifecycle hooks.
	Hooks LifecycleHooks `json:"hooks,omitempty"`
}

// DAGTemplate runs tasks as a dependency graph.
type DAGTemplate struct {
	// Target lists, space separated, the tasks to run (with their
	// dependencies); empty means all.
	Target string `json:"target,omitempty"`
	// Tasks are the graph's tasks.
	Tasks []DAGTask `json:"tasks,omitempty"`
	// FailFast (default true) changes how a failure settles the DAG.
	FailFast *bool `json:"failFast,omitempty"`
}

// DAGTask is one task of a DAG template.
type DAGTask struct {
	// Name identifies the task within its DAG.
	Name string `json:"name"`
	// Template names the template to run.
	Template string `json:"template,omitempty"`
	// Inline is a template defined in place instead of Template.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Inline *Template `json:"inline,omitempty"`
	// Arguments bind the called template's inputs.
	Arguments Arguments `json:"arguments,omitempty"`
	// TemplateRef calls a template of a (Cluster)WorkflowTemplate.
	TemplateRef *TemplateRef `json:"templateRef,omitempty"`
	// Dependencies name tasks that must complete first.
	Dependencies []string `json:"dependencies,omitempty"`
	// WithItems runs the task once per item.
	WithItems []Item `json:"withItems,omitempty"`
	// WithParam runs the task once per element of a JSON array.
	WithParam string `json:"withParam,omitempty"`
	// WithSequence runs the task once per number of a sequence.
	WithSequence *Sequence `json:"withSequence,omitempty"`
	// When skips the task unless the condition holds.
	When string `json:"when,omitempty"`
	// ContinueOn lets the DAG continue after this task fails or errors.
	ContinueOn *ContinueOn `json:"continueOn,omitempty"`
	// OnExit names a template run when this task ends (prefer Hooks).
	OnExit string `json:"onExit,omitempty"`
	// Depends is a boolean expression over other tasks' results.
	Depends string `json:"depends,omitempty"`
	// Hooks are this task's lifecycle hooks.
	Hooks LifecycleHooks `json:"hooks,omitempty"`
}

// TemplateRef points at one template of a WorkflowTemplate, or with
// ClusterScope of a ClusterWorkflowTemplate.
type TemplateRef struct {
	// Name is the template object's name.
	Name string `json:"name,omitempty"`
	// Template is the template's name within that object.
	Template string `json:"template,omitempty"`
	// ClusterScope selects a ClusterWorkflowTemplate.
	ClusterScope bool `json:"clusterScope,omitempty"`
}

// Sequence is a range of numbers for withSequence: either Count, or Start
// and End (counting down when End < Start).
type Sequence struct {
	Count *intstr.IntOrString `json:"count,omitempty"`
	Start *intstr.IntOrString `json:"start,omitempty"`
	End   *intstr.IntOrString `json:"end,omitempty"`
	// Format is a printf format for each number.
	Format string `json:"format,omitempty"`
}

// ContinueOn says which failures of a step or task its parent tolerates.
type ContinueOn struct {
	Error  bool `json:"error,omitempty"`
	Failed bool `json:"failed,omitempty"`
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
	Template string `json:"template,omitempty"`
	// Arguments bind the template's inputs.
	Arguments Arguments `json:"arguments,omitempty"`
	// TemplateRef calls a template of a (Cluster)WorkflowTemplate.
	TemplateRef *TemplateRef `json:"templateRef,omitempty"`
	// Expression fires the hook once when it evaluates to true.
	Expression string `json:"expression,omitempty"`
}
