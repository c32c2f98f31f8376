package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func newGetCommand(s streams, g *globalFlags) *cobra.Command {
	var f getFlags
	cmd := &cobra.Command{
		Use:   "get WORKFLOW...",
		Short: "display details about a workflow",
		Example: `  braid get my-wf
  braid get @latest -o json
  braid get my-wf --node-field-selector phase!=Succeeded`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.output, "name", "json", "yaml", "wide", "short"); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, name := range args {
					wf, err := getWorkflow(ctx, sess, name)
					if err != nil {
						return err
					}
					if err := printWorkflow(s, wf, f); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	f.register(cmd.Flags(), "name, json, yaml, wide or short", true)
	f.registerColor(cmd.Flags())
	return cmd
}

// getWorkflow reads one workflow of the session's namespace (@latest: the
// newest).
func getWorkflow(ctx context.Context, sess *session, name string) (*v1alpha1.Workflow, error) {
	return sess.Workflow.GetWorkflow(ctx, &workflow.WorkflowGetRequest{Name: name, Namespace: sess.namespace})
}
