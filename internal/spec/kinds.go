package spec

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Object is a typed Argo object: it has Kubernetes metadata and can be deep-copied.
type Object interface {
	metav1.Object
	runtime.Object
}

// newObject returns an empty typed object for an Argo kind, or nil and the
// reason the document is skipped.
func newObject(apiVersion, kind string) (Object, string) {
	if apiVersion != v1alpha1.APIVersion {
		if apiVersion == "" {
			return nil, fmt.Sprintf("%s has no apiVersion; braid reads only %s kinds", kind, v1alpha1.APIVersion)
		}
		return nil, fmt.Sprintf("%s/%s is not an Argo kind", apiVersion, kind)
	}
	switch kind {
	case "Workflow":
		return &v1alpha1.Workflow{}, ""
	case "WorkflowTemplate":
		return &v1alpha1.WorkflowTemplate{}, ""
	case "ClusterWorkflowTemplate":
		return &v1alpha1.ClusterWorkflowTemplate{}, ""
	case "CronWorkflow":
		return &v1alpha1.CronWorkflow{}, ""
	case "WorkflowEventBinding":
		return &v1alpha1.WorkflowEventBinding{}, ""
	}
	return nil, fmt.Sprintf("%s/%s is an Argo kind that braid does not read", apiVersion, kind)
}
