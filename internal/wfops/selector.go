package wfops

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// NodeSelector is a parsed --node-field-selector: requirements on a node's
// fields, all of which must hold.
type NodeSelector struct {
	sel fields.Selector
}

// supportedFields returns the fields a selector may name, besides
// inputs.parameters.<name>.value.
func supportedFields() []string {
	return []string{"displayName", "templateName", "phase", "name", "id",
		"templateRef.name", "templateRef.template"}
}

// ParseNodeFieldSelector parses a selector such as
// "templateName=approve,phase!=Succeeded": field=value, field==value or
// field!=value, joined by commas (AND). An empty selector, a syntax error or
// an unsupported field is an ErrBadRequest.
func ParseNodeFieldSelector(s string) (NodeSelector, error) {
	if strings.TrimSpace(s) == "" {
		return NodeSelector{}, badRequest("node field selector is empty")
	}
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return NodeSelector{}, badRequest("invalid node field selector %q: %w", s, err)
	}
	for _, r := range sel.Requirements() {
		if !supportedField(r.Field) {
			return NodeSelector{}, badRequest("invalid node field selector %q: unsupported field %q; supported fields are %s and inputs.parameters.<name>.value",
				s, r.Field, strings.Join(supportedFields(), ", "))
		}
	}
	return NodeSelector{sel: sel}, nil
}

func supportedField(f string) bool {
	for _, s := range supportedFields() {
		if f == s {
			return true
		}
	}
	name, ok := strings.CutPrefix(f, "inputs.parameters.")
	if !ok {
		return false
	}
	name, ok = strings.CutSuffix(name, ".value")
	return ok && name != ""
}

// String returns the selector in its canonical form.
func (s NodeSelector) String() string {
	if s.sel == nil {
		return ""
	}
	return s.sel.String()
}

// Matches reports whether the node satisfies every requirement. A field the
// node does not have (no templateRef, no such input parameter) reads as
// empty, so "!=" holds for it. The zero NodeSelector matches nothing.
func (s NodeSelector) Matches(n v1alpha1.NodeStatus) bool {
	if s.sel == nil {
		return false
	}
	return s.sel.Matches(nodeFields(n))
}

func nodeFields(n v1alpha1.NodeStatus) fields.Set {
	set := fields.Set{
		"displayName":  n.DisplayName,
		"templateName": n.TemplateName,
		"phase":        string(n.Phase),
		"name":         n.Name,
		"id":           n.ID,
	}
	if n.TemplateRef != nil {
		set["templateRef.name"] = n.TemplateRef.Name
		set["templateRef.template"] = n.TemplateRef.Template
	}
	if n.Inputs != nil {
		for _, p := range n.Inputs.Parameters {
			if p.Value != nil {
				set[fmt.Sprintf("inputs.parameters.%s.value", p.Name)] = p.Value.String()
			}
		}
	}
	return set
}

// matchNodes returns the IDs of the nodes the selector matches, sorted.
func matchNodes(nodes v1alpha1.Nodes, s NodeSelector, keep func(v1alpha1.NodeStatus) bool) []string {
	var ids []string
	for _, id := range sortedIDs(nodes) {
		n := nodes[id]
		if (keep == nil || keep(n)) && s.Matches(n) {
			ids = append(ids, id)
		}
	}
	return ids
}
