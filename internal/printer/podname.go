package printer

import (
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// PodNameFormatAnnotation is the workflow annotation that records which pod
// naming scheme the workflow's pods use: "v1" (the node ID) or "v2".
const PodNameFormatAnnotation = v1alpha1.PodNameFormatAnnotation

// Pod name formats.
const (
	PodNameV1 = v1alpha1.PodNameV1
	PodNameV2 = v1alpha1.PodNameV2
)

// PodNameFormat returns the pod naming scheme of wf: PodNameV1 when its
// annotation says "v1", otherwise PodNameV2 (the default, also used for a
// missing or unknown value).
func PodNameFormat(wf *v1alpha1.Workflow) string { return wf.PodNameFormat() }

// PodName returns the name of the pod that runs node, as the argo CLI works
// it out (ARGO-SEMANTICS.md rule 1.3); it is Workflow.NodePodName, which
// the server's log routes use too:
//
//   - v1: the node ID;
//   - v2, root node (node name == workflow name): the workflow name;
//   - v2, other nodes: "<wf>-<template>-<fnv32a(node name)>", where the
//     template is templateRef.template when set, otherwise templateName, and
//     "<wf>-<template>" is cut to 242 bytes. Without a template the form is
//     "<wf>-<hash>".
func PodName(wf *v1alpha1.Workflow, node *v1alpha1.NodeStatus) string { return wf.NodePodName(node) }
