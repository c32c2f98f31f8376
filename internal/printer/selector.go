package printer

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// nodeFilter decides which nodes `--status` and `--node-field-selector`
// leave in the tree. A nil filter keeps every node.
type nodeFilter []fieldTerm

// fieldTerm is one term of a field selector: field=value (or ==) or
// field!=value.
type fieldTerm struct {
	field, value string
	not          bool
}

// newNodeFilter builds the filter of o. --status S is the selector
// "phase=S"; braid also accepts several statuses, any of which matches. As in
// the CLI, the two options cannot be combined.
func newNodeFilter(o Options) (nodeFilter, []string, error) {
	if len(o.StatusFilter) > 0 {
		if o.NodeFieldSelector != "" {
			return nil, nil, errors.New("cannot use both --status and --node-field-selector")
		}
		return nil, o.StatusFilter, nil
	}
	if o.NodeFieldSelector == "" {
		return nil, nil, nil
	}
	terms, err := parseFieldSelector(o.NodeFieldSelector)
	if err != nil {
		return nil, nil, fmt.Errorf("selector is invalid: %w", err)
	}
	return terms, nil, nil
}

// parseFieldSelector reads a Kubernetes field selector: comma-separated
// terms, each "field=value", "field==value" or "field!=value". A backslash
// escapes ',', '=' and '\' in a value.
func parseFieldSelector(s string) (nodeFilter, error) {
	parts := splitUnescaped(s)
	sort.Strings(parts)
	var terms nodeFilter
	for _, part := range parts {
		if part == "" {
			continue
		}
		field, op, raw, ok := splitTerm(part)
		if !ok {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, part)
		}
		value, err := unescapeValue(raw)
		if err != nil {
			return nil, err
		}
		terms = append(terms, fieldTerm{field: field, value: value, not: op == "!="})
	}
	return terms, nil
}

// splitUnescaped splits s at the commas not preceded by a backslash.
func splitUnescaped(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	start, escaped := 0, false
	for i, c := range s {
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// splitTerm finds the first operator in term, trying "!=", "==" and "=" at
// each position in turn.
func splitTerm(term string) (field, op, value string, ok bool) {
	for i := range term {
		for _, op := range []string{"!=", "==", "="} {
			if strings.HasPrefix(term[i:], op) {
				return term[:i], op, term[i+len(op):], true
			}
		}
	}
	return "", "", "", false
}

func unescapeValue(s string) (string, error) {
	if !strings.ContainsAny(s, `\,=`) {
		return s, nil
	}
	var b strings.Builder
	escaped := false
	for _, c := range s {
		if escaped {
			if c != '\\' && c != ',' && c != '=' {
				return "", fmt.Errorf("invalid escape sequence: %s", `\`+string(c))
			}
			b.WriteRune(c)
			escaped = false
			continue
		}
		switch c {
		case '\\':
			escaped = true
		case ',', '=':
			return "", fmt.Errorf("invalid selector: unescaped rune %q", c)
		default:
			b.WriteRune(c)
		}
	}
	if escaped {
		return "", errors.New(`invalid escape sequence: \`)
	}
	return b.String(), nil
}

// matches reports whether node satisfies every term. The fields are those of
// the argo CLI: displayName, templateName (templateRef.template when set),
// phase, name, id, templateRef.name, templateRef.template and
// inputs.parameters.<name>.value. An absent field reads as "".
func (f nodeFilter) matches(node *v1alpha1.NodeStatus) bool {
	if len(f) == 0 {
		return true
	}
	fields := map[string]string{
		"displayName":  node.DisplayName,
		"templateName": node.TemplateName,
		"phase":        string(node.Phase),
		"name":         node.Name,
		"id":           node.ID,
	}
	if node.TemplateRef != nil {
		fields["templateName"] = node.TemplateRef.Template
		fields["templateRef.name"] = node.TemplateRef.Name
		fields["templateRef.template"] = node.TemplateRef.Template
	}
	if node.Inputs != nil {
		for _, p := range node.Inputs.Parameters {
			v := ""
			if p.Value != nil {
				v = p.Value.String()
			}
			fields["inputs.parameters."+p.Name+".value"] = v
		}
	}
	for _, t := range f {
		if (fields[t.field] == t.value) == t.not {
			return false
		}
	}
	return true
}
