package spec

import (
	"errors"
	"slices"
)

// LintOptions choose what Lint checks.
type LintOptions struct {
	Mode Mode
	// Kinds limits linting to these kinds (Workflow, WorkflowTemplate, ...).
	// Objects of other kinds are still loaded, so references to them resolve.
	Kinds []string
}

// LintResult is the outcome of linting a set of files.
type LintResult struct {
	Files    []string    `json:"files"`
	Objects  []*Document `json:"-"`
	Skipped  []*Document `json:"-"`
	Issues   Issues      `json:"issues"`   // errors: lint fails
	Warnings Issues      `json:"warnings"` // reported, lint passes
}

// LintPaths loads every spec file under paths and validates the objects
// together, so that templateRef and workflowTemplateRef resolve across files.
func LintPaths(paths []string, opts LintOptions) (*LintResult, error) {
	files, err := SpecFiles(paths)
	if err != nil {
		return nil, err
	}
	res := &LintResult{Files: files}
	var docs []*Document
	for _, f := range files {
		ds, err := LoadFile(f, opts.Mode)
		var issues Issues
		if errors.As(err, &issues) {
			res.Issues = append(res.Issues, issues...)
		} else if err != nil {
			res.Issues = append(res.Issues, Issue{File: f, Message: err.Error()})
		}
		docs = append(docs, ds...)
	}
	for _, d := range docs {
		if d.Object == nil {
			res.Skipped = append(res.Skipped, d)
			continue
		}
		if len(opts.Kinds) == 0 || slices.Contains(opts.Kinds, d.Kind) {
			res.Objects = append(res.Objects, d)
			res.Issues = append(res.Issues, d.Warnings...)
		}
	}
	res.Issues = append(res.Issues, ValidateAll(res.Objects, docs)...)
	res.Issues, res.Warnings = res.Issues.Split()
	return res, nil
}
