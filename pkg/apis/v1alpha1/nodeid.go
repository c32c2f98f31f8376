package v1alpha1

import (
	"hash/fnv"
	"strconv"
)

// NodeID returns the ID of the node named nodeName in workflow wfName. The
// root node, whose name is the workflow's name, has the workflow's name as
// its ID; any other node has "<wfName>-<h>", where h is the FNV-1a 32-bit
// hash of the node name as an unsigned decimal. IDs are therefore stable
// across restarts and retries.
func NodeID(wfName, nodeName string) string {
	if nodeName == wfName {
		return wfName
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(nodeName))
	return wfName + "-" + strconv.FormatUint(uint64(h.Sum32()), 10)
}

// maxPodNamePrefix is how long "<wf>-<template>" may be in a pod name: a
// Kubernetes name holds 253 characters, and the dash and hash need 11.
const maxPodNamePrefix = 253 - 10 - 1

// PodName returns the v2 pod name of the node named nodeName: the workflow's
// name for the root node, otherwise "<wf>-<template>-<h>" with h the node
// name's FNV-1a hash as in NodeID, "<wf>-<template>" cut to 242 bytes, and
// "<wf>-<h>" when templateName is empty. The engine names pods with it, and
// the CLI finds their logs with it, so the two always agree.
func PodName(wfName, nodeName, templateName string) string {
	if nodeName == wfName {
		return wfName
	}
	prefix := wfName
	if templateName != "" {
		prefix += "-" + templateName
	}
	if len(prefix) > maxPodNamePrefix {
		prefix = prefix[:maxPodNamePrefix]
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(nodeName))
	return prefix + "-" + strconv.FormatUint(uint64(h.Sum32()), 10)
}

// NodeID returns the ID of the node named nodeName in this workflow.
func (wf *Workflow) NodeID(nodeName string) string {
	return NodeID(wf.Name, nodeName)
}
