package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WorkflowEventBinding submits a Workflow from a template when an event
// matching its selector arrives.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=wfeb
type WorkflowEventBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec WorkflowEventBindingSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// WorkflowEventBindingList is a list of WorkflowEventBindings.
//
// +kubebuilder:object:root=true
type WorkflowEventBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []WorkflowEventBinding `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// WorkflowEventBindingSpec is which events match and what they submit.
type WorkflowEventBindingSpec struct {
	// Event selects the events.
	Event Event `json:"event" protobuf:"bytes,1,opt,name=event"`
	// Submit is the Workflow to submit for each matching event.
	Submit *Submit `json:"submit,omitempty" protobuf:"bytes,2,opt,name=submit"`
}

// Event selects events.
type Event struct {
	// Selector is an expr-lang expression over payload, metadata and
	// discriminator.
	Selector string `json:"selector" protobuf:"bytes,1,opt,name=selector"`
}

// Submit describes the Workflow an event binding submits.
type Submit struct {
	// WorkflowTemplateRef is the template to run.
	WorkflowTemplateRef WorkflowTemplateRef `json:"workflowTemplateRef" protobuf:"bytes,1,opt,name=workflowTemplateRef"`
	// Metadata is added to the submitted Workflow.
	Metadata metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,3,opt,name=metadata"`
	// Arguments are the Workflow's arguments; parameters may use valueFrom.event.
	Arguments *Arguments `json:"arguments,omitempty" protobuf:"bytes,2,opt,name=arguments"`
}
