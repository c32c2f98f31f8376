package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/spec"
)

type lintFlags struct {
	output  string
	strict  bool
	kinds   []string
	offline bool
}

// kindAliases maps the names argo lint accepts in --kinds to kinds.
var kindAliases = map[string]string{
	"workflows": "Workflow", "workflow": "Workflow", "wf": "Workflow",
	"workflowtemplates": "WorkflowTemplate", "workflowtemplate": "WorkflowTemplate", "wftmpl": "WorkflowTemplate",
	"clusterworkflowtemplates": "ClusterWorkflowTemplate", "clusterworkflowtemplate": "ClusterWorkflowTemplate", "cwftmpl": "ClusterWorkflowTemplate",
	"cronworkflows": "CronWorkflow", "cronworkflow": "CronWorkflow", "cronwf": "CronWorkflow",
	"workfloweventbindings": "WorkflowEventBinding", "workfloweventbinding": "WorkflowEventBinding",
}

func newLintCommand(s streams, g *globalFlags) *cobra.Command {
	f := lintFlags{}
	cmd := &cobra.Command{
		Use:   "lint FILE|DIR...",
		Short: "Validate files or directories of Argo manifests",
		Long: `Validate files or directories of Argo manifests (Workflow, WorkflowTemplate,
ClusterWorkflowTemplate, CronWorkflow, WorkflowEventBinding), as argo lint does.
Documents of other kinds are skipped with a note. "-" reads standard input.
The exit code is 1 when any error is found. When a server is in use
(--argo-server, ARGO_SERVER, BRAID_SERVER or a running braid server on the
data directory) each object is checked by the server's lint API, as argo lint
does; otherwise, or with --offline, it is checked here.`,
		Example: `  braid lint wf.yaml
  braid lint -o json manifests/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.offline {
				return runLint(cmd.Context(), s, f, args, nil)
			}
			sess, err := g.connectServer(cmd.Context())
			if err != nil {
				return err
			}
			if sess == nil {
				return runLint(cmd.Context(), s, f, args, nil)
			}
			defer sess.Close()
			return runLint(cmd.Context(), s, f, args, sess)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "pretty", "output format: pretty, simple or json")
	cmd.Flags().BoolVar(&f.strict, "strict", true, "reject unknown fields, duplicate keys and values of the wrong kind")
	cmd.Flags().BoolVar(&f.offline, "offline", false, "lint here, without a server, even when one is in use")
	cmd.Flags().StringSliceVar(&f.kinds, "kinds", nil, "kinds to lint: workflows, workflowtemplates, clusterworkflowtemplates, cronworkflows, workfloweventbindings (default all)")
	return cmd
}

// runLint lints the files here, or through the server of sess when it is
// not nil.
func runLint(ctx context.Context, s streams, f lintFlags, args []string, sess *session) error {
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
	var res *spec.LintResult
	var err error
	if sess == nil {
		res, err = spec.LintPaths(args, opts)
	} else {
		res, err = lintRemote(ctx, sess, args, opts)
	}
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
