package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WorkflowTemplate is a namespaced, reusable WorkflowSpec. Workflows call
// its templates through templateRef or run it whole through
// workflowTemplateRef.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=wftmpl
type WorkflowTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec WorkflowSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// WorkflowTemplateList is a list of WorkflowTemplates.
//
// +kubebuilder:object:root=true
type WorkflowTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []WorkflowTemplate `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// ClusterWorkflowTemplate is a cluster-scoped WorkflowTemplate, referenced
// with clusterScope: true.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=clusterwftmpl;cwft;cwftmpl
type ClusterWorkflowTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Spec WorkflowSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// ClusterWorkflowTemplateList is a list of ClusterWorkflowTemplates.
//
// +kubebuilder:object:root=true
type ClusterWorkflowTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []ClusterWorkflowTemplate `json:"items" protobuf:"bytes,2,rep,name=items"`
}
