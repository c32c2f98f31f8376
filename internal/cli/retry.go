package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// retry and resubmit: each prints the get view of the workflow it returns
// (retry: the same workflow; resubmit: the new one), then follows them as
// --log, --wait and --watch say.

type rerunFlags struct {
	getFlags
	followFlags
	selectFlags
	parameters []string
}

func (f *rerunFlags) register(cmd *cobra.Command) {
	f.getFlags.register(cmd.Flags(), "name, json, yaml or wide", false)
	f.followFlags.register(cmd)
	f.selectFlags.register(cmd)
	cmd.Flags().StringArrayVarP(&f.parameters, "parameter", "p", nil, "input parameter name=value to override (repeatable)")
}

func (f rerunFlags) check() error {
	if err := checkOutput(f.output, "name", "json", "yaml", "wide"); err != nil {
		return err
	}
	if f.wait && f.watch {
		return errors.New("--wait and --watch cannot be combined")
	}
	return nil
}

func newRetryCommand(s streams, g *globalFlags) *cobra.Command {
	var f rerunFlags
	var restartSuccessful bool
	var nodeSelector string
	cmd := &cobra.Command{
		Use:   "retry [WORKFLOW...]",
		Short: "retry zero or more workflows",
		Example: `  braid retry my-wf
  braid retry my-wf --restart-successful --node-field-selector templateName=build --wait`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			sel, err := nodeFieldSelector(nodeSelector)
			if err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return rerun(ctx, s, sess, f, args, func(name string) (string, error) {
					res, err := sess.Workflow.RetryWorkflow(ctx, &workflow.WorkflowRetryRequest{
						Name: name, Namespace: sess.namespace, RestartSuccessful: restartSuccessful,
						NodeFieldSelector: sel, Parameters: f.parameters,
					})
					if err != nil {
						return "", err
					}
					return printRerun(s, f, res)
				})
			})
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&restartSuccessful, "restart-successful", false, "also restart the succeeded nodes matching --node-field-selector")
	cmd.Flags().StringVar(&nodeSelector, "node-field-selector", "", "with --restart-successful: the succeeded nodes to restart")
	return cmd
}

func newResubmitCommand(s streams, g *globalFlags) *cobra.Command {
	var f rerunFlags
	var memoized bool
	var priority int32
	cmd := &cobra.Command{
		Use:   "resubmit [WORKFLOW...]",
		Short: "resubmit one or more workflows",
		Example: `  braid resubmit my-wf
  braid resubmit my-wf --memoized --watch`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return rerun(ctx, s, sess, f, args, func(name string) (string, error) {
					res, err := sess.Workflow.ResubmitWorkflow(ctx, &workflow.WorkflowResubmitRequest{
						Name: name, Namespace: sess.namespace, Memoized: memoized, Parameters: f.parameters,
					})
					if err != nil {
						return "", err
					}
					return printRerun(s, f, res)
				})
			})
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&memoized, "memoized", false, "reuse the outputs of the nodes that succeeded")
	cmd.Flags().Int32Var(&priority, "priority", 0, "accepted for argo compatibility; the API has no priority for resubmit")
	return cmd
}

// rerun calls one for each named or selected workflow, then follows the
// workflows it returned.
func rerun(ctx context.Context, s streams, sess *session, f rerunFlags, args []string, one func(string) (string, error)) error {
	names, err := f.selectFlags.names(ctx, sess, args)
	if err != nil {
		return err
	}
	var done []string
	for _, name := range names {
		got, err := one(name)
		if err != nil {
			return err
		}
		done = append(done, got)
	}
	if f.watch && len(done) > 1 {
		return fmt.Errorf("--watch is only supported with a single workflow")
	}
	return waitWatchOrLog(ctx, s, sess, done, f.followFlags, f.getFlags)
}

// printRerun prints the workflow an action returned and gives its name.
func printRerun(s streams, f rerunFlags, wf *v1alpha1.Workflow) (string, error) {
	return wf.Name, printWorkflow(s, wf, f.getFlags)
}
