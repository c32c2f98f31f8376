package runtime

import corev1 "k8s.io/api/core/v1"

// WorkflowResources is what a runtime keeps for a whole workflow rather
// than for one step, as the workflow's status records it: the PVCs of its
// volumeClaimTemplates (status.persistentVolumeClaims). A runtime returns
// it from its workflow hooks as a value; the controller writes it.
type WorkflowResources struct {
	PersistentVolumeClaims []corev1.Volume
}
