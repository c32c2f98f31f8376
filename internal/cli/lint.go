package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/spec"
)

type lintFlags struct {
	output string
	strict bool
	kinds  []string
}

// kindAliases maps the names argo lint accepts in --kinds to kinds.
var kindAliases = map[string]string{
	"workflows": "Workflow", "workflow": "Workflow", "wf": "Workflow",
	"workflowtemplates": "WorkflowTemplate", "workflowtemplate": "WorkflowTemplate", "wftmpl": "WorkflowTemplate",
	"clusterworkflowtemplates": "ClusterWorkflowTemplate", "clusterworkflowtemplate": "ClusterWorkflowTemplate", "cwftmpl": "ClusterWorkflowTemplate",
	"cronworkflows": "CronWorkflow", "cronworkflow": "CronWorkflow", "cronwf": "CronWorkflow",
	"workfloweventbindings": "WorkflowEventBinding", "workfloweventbinding": "WorkflowEventBinding",
}

func newLintCommand(s streams) *cobra.Command {
	f := lintFlags{}
	cmd := &cobra.Command{
		Use:   "lint FILE|DIR...",
		Short: "Validate files or directories of Argo manifests",
		Long: `Validate files or directories of Argo manifests (Workflow, WorkflowTemplate,
ClusterWorkflowTemplate, CronWorkflow, WorkflowEventBinding), as argo lint does.
Documents of other kinds are skipped with a note. "-" reads standard input.
The exit code is 1 when any error is found.`,
		Example: `  braid lint wf.yaml
  braid lint -o json manifests/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLint(s, f, args)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "pretty", "output format: pretty, simple or json")
	cmd.Flags().BoolVar(&f.strict, "strict", true, "reject unknown fields, duplicate keys and values of the wrong kind")
	cmd.Flags().StringSliceVar(&f.kinds, "kinds", nil, "kinds to lint: workflows, workflowtemplates, clusterworkflowtemplates, cronworkflows, workfloweventbindings (default all)")
	return cmd
}

func runLint(s streams, f lintFlags, args []string) error {
	opts := spec.LintOptions{Mode: spec.Strict}
	if !f.strict {
		opts.Mode = spec.Lenient
	}
	for _, k := range f.kinds {
		kind, ok := kindAliases[strings.ToLower(k)]
		if !ok {
			return &exitError{code: 2, err: fmt.Errorf("unknown kind %q in --kinds", k)}
		}
		opts.Kinds = append(opts.Kinds, kind)
	}
	if f.output != "pretty" && f.output != "simple" && f.output != "json" {
		return &exitError{code: 2, err: fmt.Errorf("unknown output format %q: use pretty, simple or json", f.output)}
	}
	res, err := spec.LintPaths(args, opts)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	switch f.output {
	case "json":
		err = printLintJSON(s, res)
	case "simple":
		printLintSimple(s, res)
	default:
		printLintPretty(s, res)
	}
	if err != nil {
		return err
	}
	if len(res.Issues) > 0 {
		return &exitError{code: 1}
	}
	return nil
}

func printLintSimple(s streams, res *spec.LintResult) {
	for _, is := range res.Warnings {
		fmt.Fprintln(s.out, is.Error())
	}
	for _, is := range res.Issues {
		fmt.Fprintln(s.out, is.Error())
	}
}

func printLintPretty(s streams, res *spec.LintResult) {
	for _, d := range res.Skipped {
		fmt.Fprintf(s.out, "note: %s: skipped %s %s: %s\n", d.File, d.Kind, d.Name, d.Skipped)
	}
	printLintSimple(s, res)
	summary := fmt.Sprintf("%d files, %d objects checked, %d skipped, %d warnings", len(res.Files), len(res.Objects), len(res.Skipped), len(res.Warnings))
	switch n := len(res.Issues); n {
	case 0:
		fmt.Fprintf(s.out, "✔ no linting errors found! (%s)\n", summary)
	case 1:
		fmt.Fprintf(s.out, "✖ 1 linting error found! (%s)\n", summary)
	default:
		fmt.Fprintf(s.out, "✖ %d linting errors found! (%s)\n", n, summary)
	}
}

type lintObject struct {
	File string `json:"file"`
	Kind string `json:"kind"`
	Name string `json:"name"`
	Line int    `json:"line,omitempty"`
	Note string `json:"note,omitempty"`
}

type lintReport struct {
	Files    []string     `json:"files"`
	Objects  []lintObject `json:"objects"`
	Skipped  []lintObject `json:"skipped"`
	Errors   spec.Issues  `json:"errors"`
	Warnings spec.Issues  `json:"warnings"`
}

func printLintJSON(s streams, res *spec.LintResult) error {
	rep := lintReport{Files: res.Files, Objects: []lintObject{}, Skipped: []lintObject{},
		Errors: append(spec.Issues{}, res.Issues...), Warnings: append(spec.Issues{}, res.Warnings...)}
	for _, d := range res.Objects {
		rep.Objects = append(rep.Objects, lintObject{File: d.File, Kind: d.Kind, Name: d.Name, Line: d.Line})
	}
	for _, d := range res.Skipped {
		rep.Skipped = append(rep.Skipped, lintObject{File: d.File, Kind: d.Kind, Name: d.Name, Line: d.Line, Note: d.Skipped})
	}
	enc := json.NewEncoder(s.out)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
