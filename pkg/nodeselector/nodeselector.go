package nodeselector

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Selector is a parsed node field selector: requirements on a node's
// fields, all of which must hold. The zero Selector matches no node.
type Selector struct {
	sel fields.Selector
}

// Parse reads a selector such as "templateName=approve,phase!=Succeeded".
// It checks the syntax only: any field name is accepted, and one a node
// never has reads as "". The empty selector matches every node. The
// error is the field selector parser's own ("invalid selector: ..."); the
// caller adds which flag or request it came from.
func Parse(s string) (Selector, error) {
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return Selector{}, err
	}
	return Selector{sel: sel}, nil
}

// SupportedFields returns the fields a selector may name, besides
// inputs.parameters.<name>.value, in the order error messages list them.
func SupportedFields() []string {
	return []string{"displayName", "templateName", "phase", "name", "id",
		"templateRef.name", "templateRef.template"}
}

// CheckFields returns an error naming the first field of s that is not a
// supported field (see SupportedFields) nor inputs.parameters.<name>.value.
func (s Selector) CheckFields() error {
	if s.sel == nil {
		return nil
	}
	for _, r := range s.sel.Requirements() {
		if !supported(r.Field) {
			return fmt.Errorf("unsupported field %q; supported fields are %s and inputs.parameters.<name>.value",
				r.Field, strings.Join(SupportedFields(), ", "))
		}
	}
	return nil
}

func supported(f string) bool {
	for _, s := range SupportedFields() {
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

// String returns the selector in its canonical form (terms sorted,
// values escaped).
func (s Selector) String() string {
	if s.sel == nil {
		return ""
	}
	return s.sel.String()
}

// Empty reports whether s has no requirements (the empty selector).
func (s Selector) Empty() bool {
	return s.sel == nil || s.sel.Empty()
}

// Matches reports whether the node satisfies every requirement of s.
func (s Selector) Matches(n *v1alpha1.NodeStatus) bool {
	if s.sel == nil || n == nil {
		return false
	}
	return s.sel.Matches(Fields(n))
}

// Fields returns the selectable fields of a node, keyed by field name.
// templateName is templateRef.template when the node has a templateRef.
func Fields(n *v1alpha1.NodeStatus) fields.Set {
	set := fields.Set{
		"displayName":  n.DisplayName,
		"templateName": n.TemplateName,
		"phase":        string(n.Phase),
		"name":         n.Name,
		"id":           n.ID,
	}
	if n.TemplateRef != nil {
		set["templateName"] = n.TemplateRef.Template
		set["templateRef.name"] = n.TemplateRef.Name
		set["templateRef.template"] = n.TemplateRef.Template
	}
	if n.Inputs != nil {
		for _, p := range n.Inputs.Parameters {
			v := ""
			if p.Value != nil {
				v = p.Value.String()
			}
			set["inputs.parameters."+p.Name+".value"] = v
		}
	}
	return set
}
