package spec

import (
	"fmt"
	"strings"
)

// Issue is one problem found in a spec: where it is and what is wrong.
//
// Its text has the form
//
//	steps.yaml: Workflow steps-: spec.templates[2].steps[1][0].template: "whalesay2" not found (line 31)
//
// so that a user can find the file, the object and the field at once.
type Issue struct {
	File    string `json:"file"`
	Kind    string `json:"kind,omitempty"`
	Name    string `json:"name,omitempty"`
	Path    string `json:"path,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	// Warning marks a problem that Argo tolerates: it is reported but does
	// not fail lint.
	Warning bool `json:"warning,omitempty"`
}

func (i Issue) Error() string {
	var b strings.Builder
	if i.Warning {
		b.WriteString("warning: ")
	}
	if i.File != "" {
		b.WriteString(i.File)
		b.WriteString(": ")
	}
	if i.Kind != "" || i.Name != "" {
		b.WriteString(strings.TrimSpace(i.Kind + " " + i.Name))
		b.WriteString(": ")
	}
	if i.Path != "" {
		b.WriteString(i.Path)
		b.WriteString(": ")
	}
	b.WriteString(i.Message)
	if i.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", i.Line)
	}
	return b.String()
}

// Issues is a list of problems. It is an error when it is not empty.
type Issues []Issue

func (is Issues) Error() string {
	msgs := make([]string, len(is))
	for i, x := range is {
		msgs[i] = x.Error()
	}
	return strings.Join(msgs, "\n")
}

// Err returns the issues as an error, or nil when there are none.
func (is Issues) Err() error {
	if len(is) == 0 {
		return nil
	}
	return is
}

// Split separates warnings from errors.
func (is Issues) Split() (errs, warnings Issues) {
	for _, x := range is {
		if x.Warning {
			warnings = append(warnings, x)
		} else {
			errs = append(errs, x)
		}
	}
	return errs, warnings
}
