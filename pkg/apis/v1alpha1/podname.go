package v1alpha1

// PodNameFormatAnnotation is the workflow annotation that records which pod
// naming scheme the workflow's pods use: "v1" (the node ID) or "v2".
const PodNameFormatAnnotation = "workflows.argoproj.io/pod-name-format"

// AnnotationRetryGeneration is braid's count of the manual retries of a
// workflow (1 after the first). Run IDs include it, so that a node
// re-created by a retry never reuses the run ID of the node it replaces.
const AnnotationRetryGeneration = "braid.dev/retry-generation"

// Pod name formats.
const (
	PodNameV1 = "v1"
	PodNameV2 = "v2"
)

// PodNameFormat returns the pod naming scheme of wf: PodNameV1 when its
// annotation says "v1", otherwise PodNameV2 (the default, also used for a
// missing or unknown value).
func (wf *Workflow) PodNameFormat() string {
	if wf.Annotations[PodNameFormatAnnotation] == PodNameV1 {
		return PodNameV1
	}
	return PodNameV2
}

// NodePodName returns the name of the pod that runs node, as the argo CLI
// works it out (ARGO-SEMANTICS.md rule 1.3):
//
//   - v1: the node ID;
//   - v2, root node (node name == workflow name): the workflow name;
//   - v2, other nodes: "<wf>-<template>-<fnv32a(node name)>", where the
//     template is templateRef.template when set, otherwise templateName, and
//     "<wf>-<template>" is cut to 242 bytes. Without a template the form is
//     "<wf>-<hash>".
//
// The CLI, the printer and the server's log routes all name pods with it.
func (wf *Workflow) NodePodName(node *NodeStatus) string {
	if wf.PodNameFormat() == PodNameV1 {
		if node.ID == "" {
			return NodeID(wf.Name, node.Name)
		}
		return node.ID
	}
	template := node.TemplateName
	if node.TemplateRef != nil {
		template = node.TemplateRef.Template
	}
	return PodName(wf.Name, node.Name, template)
}
