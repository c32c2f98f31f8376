package cli

import (
	"context"
	"errors"
	"slices"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// lintRemote loads the files here (so that syntax errors keep their lines)
// and has the server check each object through the lint API of its kind.
// A WorkflowEventBinding, which has no lint API, is checked here.
func lintRemote(ctx context.Context, sess *session, paths []string, opts spec.LintOptions) (*spec.LintResult, error) {
	files, err := spec.SpecFiles(paths)
	if err != nil {
		return nil, err
	}
	res := &spec.LintResult{Files: files}
	var docs []*spec.Document
	for _, f := range files {
		ds, err := spec.LoadFile(f, opts.Mode)
		var issues spec.Issues
		if errors.As(err, &issues) {
			res.Issues = append(res.Issues, issues...)
		} else if err != nil {
			res.Issues = append(res.Issues, spec.Issue{File: f, Message: err.Error()})
		}
		docs = append(docs, ds...)
	}
	for _, d := range docs {
		if d.Object == nil {
			res.Skipped = append(res.Skipped, d)
			continue
		}
		if len(opts.Kinds) > 0 && !slices.Contains(opts.Kinds, d.Kind) {
			continue
		}
		res.Objects = append(res.Objects, d)
		res.Issues = append(res.Issues, d.Warnings...)
		if d.Kind == "WorkflowEventBinding" {
			res.Issues = append(res.Issues, spec.ValidateAll([]*spec.Document{d}, docs)...)
			continue
		}
		if err := lintOne(ctx, sess, d); err != nil {
			res.Issues = append(res.Issues, spec.Issue{File: d.File, Kind: d.Kind, Name: d.Name, Line: d.Line, Message: err.Error()})
		}
	}
	res.Issues, res.Warnings = res.Issues.Split()
	return res, nil
}

// lintOne sends one object to the lint API of its kind.
func lintOne(ctx context.Context, sess *session, d *spec.Document) error {
	ns := objectNamespace(d.Object, sess.namespace)
	var err error
	switch obj := d.Object.(type) {
	case *v1alpha1.Workflow:
		_, err = sess.Workflow.LintWorkflow(ctx, &workflow.WorkflowLintRequest{Namespace: ns, Workflow: obj})
	case *v1alpha1.WorkflowTemplate:
		_, err = sess.WorkflowTemplate.LintWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateLintRequest{Namespace: ns, Template: obj})
	case *v1alpha1.ClusterWorkflowTemplate:
		_, err = sess.ClusterWorkflowTemplate.LintClusterWorkflowTemplate(ctx, &clusterworkflowtemplate.ClusterWorkflowTemplateLintRequest{Template: obj})
	case *v1alpha1.CronWorkflow:
		_, err = sess.CronWorkflow.LintCronWorkflow(ctx, &cronworkflow.LintCronWorkflowRequest{Namespace: ns, CronWorkflow: obj})
	}
	return err
}
