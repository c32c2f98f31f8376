package wfops

import (
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"github.com/braidwf/braid/pkg/nodeselector"
)

// ParseNodeFieldSelector parses a --node-field-selector such as
// "templateName=approve,phase!=Succeeded" (see pkg/nodeselector for its
// fields and syntax). An empty selector, a syntax error or an unsupported
// field is an ErrBadRequest: an operation must not silently select nothing.
func ParseNodeFieldSelector(s string) (nodeselector.Selector, error) {
	if strings.TrimSpace(s) == "" {
		return nodeselector.Selector{}, badRequest("node field selector is empty")
	}
	sel, err := nodeselector.Parse(s)
	if err == nil {
		err = sel.CheckFields()
	}
	if err != nil {
		return nodeselector.Selector{}, badRequest("invalid node field selector %q: %w", s, err)
	}
	return sel, nil
}

// matchNodes returns the IDs of the nodes the selector matches (and keep,
// when not nil, accepts), sorted.
func matchNodes(nodes v1alpha1.Nodes, s nodeselector.Selector, keep func(v1alpha1.NodeStatus) bool) []string {
	var ids []string
	for _, id := range sortedIDs(nodes) {
		n := nodes[id]
		if (keep == nil || keep(n)) && s.Matches(&n) {
			ids = append(ids, id)
		}
	}
	return ids
}
