package printer

import (
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// PodNameFormatAnnotation is the workflow annotation that records which pod
// naming scheme the workflow's pods use: "v1" (the node ID) or "v2".
const PodNameFormatAnnotation = "workflows.argoproj.io/pod-name-format"

// Pod name formats.
const (
	PodNameV1 = "v1"
	PodNameV2 = "v2"
)

// PodNameFormat returns the pod naming scheme of wf: PodNameV1 when its
// annotation says "v1", otherwise PodNameV2 (the default, also used for a
// missing or unknown value).
func PodNameFormat(wf *v1alpha1.Workflow) string {
	if wf.Annotations[PodNameFormatAnnotation] == PodNameV1 {
		return PodNameV1
	}
	return PodNameV2
}

// PodName returns the name of the pod that runs node, as the argo CLI works
// it out (ARGO-SEMANTICS.md rule 1.3):
//
//   - v1: the node ID;
//   - v2, root node (node name == workflow name): the workflow name;
//   - v2, other nodes: "<wf>-<template>-<fnv32a(node name)>", where the
//     template is templateRef.template when set, otherwise templateName, and
//     "<wf>-<template>" is cut to 242 bytes. Without a template the form is
//     "<wf>-<hash>".
func PodName(wf *v1alpha1.Workflow, node *v1alpha1.NodeStatus) string {
	if PodNameFormat(wf) == PodNameV1 {
		if node.ID == "" {
			return v1alpha1.NodeID(wf.Name, node.Name)
		}
		return node.ID
	}
	template := node.TemplateName
	if node.TemplateRef != nil {
		template = node.TemplateRef.Template
	}
	return v1alpha1.PodName(wf.Name, node.Name, template)
}
