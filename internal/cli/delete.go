package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient/workflow"
)

type deleteFlags struct {
	filterFlags
	all    bool
	dryRun bool
	force  bool
}

// selects reports whether a flag chooses workflows to delete besides names.
func (f deleteFlags) selects() bool {
	return f.all || f.completed || f.resubmitted || f.prefix != "" || f.older != "" ||
		f.selector != "" || len(f.status) > 0 || f.fieldSelector != ""
}

func newDeleteCommand(s streams, g *globalFlags) *cobra.Command {
	var f deleteFlags
	cmd := &cobra.Command{
		Use:   "delete [--dry-run] [WORKFLOW...|[--all] [--older] [--completed] [--resubmitted] [--prefix PREFIX] [--selector SELECTOR] [--force] [--status STATUS]]",
		Short: "delete workflows",
		Example: `  braid delete my-wf
  braid delete --completed --older 1d
  braid delete --all -l app=test --dry-run`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !f.selects() {
				return &exitError{code: 1, err: fmt.Errorf("Error: name workflows to delete, or select them with --all, --completed, --resubmitted, --prefix, --older, --status or --selector\n\n%s", cmd.UsageString())}
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return runDelete(ctx, s, sess, f, args)
			})
		},
	}
	fs := cmd.Flags()
	f.register(fs, "query-chunk-size")
	fs.BoolVar(&f.all, "all", false, "delete all workflows")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the workflows that would be deleted, without deleting them")
	fs.BoolVar(&f.force, "force", false, "delete even when finalizers are pending")
	return cmd
}

type wfRef struct{ name, namespace string }

func runDelete(ctx context.Context, s streams, sess *session, f deleteFlags, names []string) error {
	var refs []wfRef
	for _, n := range names {
		refs = append(refs, wfRef{n, sess.namespace})
	}
	if f.selects() {
		wfs, err := listWorkflows(ctx, sess, f.filterFlags, listFieldsDelete, time.Now())
		if err != nil {
			return err
		}
		for _, wf := range wfs {
			refs = append(refs, wfRef{wf.Name, wf.Namespace})
		}
		if len(refs) == 0 {
			fmt.Fprintln(s.out, "No resources found")
			return nil
		}
	}
	for _, r := range refs {
		if f.dryRun {
			fmt.Fprintf(s.out, "Workflow '%s' deleted (dry-run)\n", r.name)
			continue
		}
		_, err := sess.Workflow.DeleteWorkflow(ctx, &workflow.WorkflowDeleteRequest{Name: r.name, Namespace: r.namespace, Force: f.force})
		if status.Code(err) == codes.NotFound {
			fmt.Fprintf(s.out, "Workflow '%s' not found\n", r.name)
			continue
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out, "Workflow '%s' deleted\n", r.name)
	}
	return nil
}
