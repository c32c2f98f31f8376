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

// NodeID returns the ID of the node named nodeName in this workflow.
func (wf *Workflow) NodeID(nodeName string) string {
	return NodeID(wf.Name, nodeName)
}
