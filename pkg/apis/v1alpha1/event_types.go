package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WorkflowEventBinding submits a Workflow from a template when an event
// matching its selector arrives.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=wfeb
type WorkflowEventBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WorkflowEventBindingSpec `json:"spec"`
}

// WorkflowEventBindingList is a list of WorkflowEventBindings.
//
// +kubebuilder:object:root=true
type WorkflowEventBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []WorkflowEventBinding `json:"items"`
}

// WorkflowEventBindingSpec is which events match and what they submit.
type WorkflowEventBindingSpec struct {
	// Event selects the events.
	Event Event `json:"event"`
	// Submit is the Workflow to submit for each matching event.
	Submit *Submit `json:"submit,omitempty"`
}

// Event selects events.
type Event struct {
	// Selector is an expr-lang expression over payload, metadata and
	// discriminator.
	Selector string `json:"selector"`
}

// Submit describes the Workflow an event binding submits.
type Submit struct {
	// WorkflowTemplateRef is the template to run.
	WorkflowTemplateRef WorkflowTemplateRef `json:"workflowTemplateRef"`
	// Metadata is added to the submitted Workflow.
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// Arguments are the Workflow's arguments; parameters may use valueFrom.event.
	Arguments *Arguments `json:"arguments,omitempty"`
}
