package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// API group and version.
const (
	Group       = "argoproj.io"
	VersionName = "v1alpha1"
	APIVersion  = Group + "/" + VersionName
)

// Kind names, as they appear in the "kind" field.
const (
	WorkflowKind                = "Workflow"
	WorkflowTemplateKind        = "WorkflowTemplate"
	ClusterWorkflowTemplateKind = "ClusterWorkflowTemplate"
	CronWorkflowKind            = "CronWorkflow"
	WorkflowEventBindingKind    = "WorkflowEventBinding"
)

// Resource (plural) names, as used in REST paths and CRD names.
const (
	WorkflowPlural                = "workflows"
	WorkflowTemplatePlural        = "workflowtemplates"
	ClusterWorkflowTemplatePlural = "clusterworkflowtemplates"
	CronWorkflowPlural            = "cronworkflows"
	WorkflowEventBindingPlural    = "workfloweventbindings"
)

// Short names accepted by kubectl and the argo CLI.
const (
	WorkflowShortName                = "wf"
	WorkflowTemplateShortName        = "wftmpl"
	ClusterWorkflowTemplateShortName = "cwftmpl"
	CronWorkflowShortName            = "cronwf"
	WorkflowEventBindingShortName    = "wfeb"
)

// SchemeGroupVersion is the group and version of every kind in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: VersionName}

var (
	// SchemeBuilder registers the kinds of this package in a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind returns the group-qualified kind for an unqualified kind name.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource returns the group-qualified resource for an unqualified resource name.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Workflow{}, &WorkflowList{},
		&WorkflowTemplate{}, &WorkflowTemplateList{},
		&ClusterWorkflowTemplate{}, &ClusterWorkflowTemplateList{},
		&CronWorkflow{}, &CronWorkflowList{},
		&WorkflowEventBinding{}, &WorkflowEventBindingList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// Every kind and list must be a runtime.Object.
var (
	_ runtime.Object = &Workflow{}
	_ runtime.Object = &WorkflowList{}
	_ runtime.Object = &WorkflowTemplate{}
	_ runtime.Object = &WorkflowTemplateList{}
	_ runtime.Object = &ClusterWorkflowTemplate{}
	_ runtime.Object = &ClusterWorkflowTemplateList{}
	_ runtime.Object = &CronWorkflow{}
	_ runtime.Object = &CronWorkflowList{}
	_ runtime.Object = &WorkflowEventBinding{}
	_ runtime.Object = &WorkflowEventBindingList{}
)
