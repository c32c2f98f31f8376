package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"github.com/braidwf/braid/pkg/nodeselector"
)

// The one-shot actions on workflows: suspend, resume, stop, terminate and
// node set. Each prints one line per workflow (ARGO-API §5.6).

func newSuspendCommand(s streams, g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "suspend WORKFLOW1 WORKFLOW2...",
		Short:   "suspend zero or more workflows (opposite of resume)",
		Example: "  braid suspend my-wf\n  braid suspend @latest",
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, name := range args {
					if _, err := sess.Workflow.SuspendWorkflow(ctx, &workflow.WorkflowSuspendRequest{Name: name, Namespace: sess.namespace}); err != nil {
						return fmt.Errorf("failed to suspend %s: %w", name, err)
					}
					fmt.Fprintf(s.out, "workflow %s suspended\n", name)
				}
				return nil
			})
		},
	}
}

func newResumeCommand(s streams, g *globalFlags) *cobra.Command {
	var nodeSelector string
	cmd := &cobra.Command{
		Use:   "resume WORKFLOW1 WORKFLOW2...",
		Short: "resume zero or more workflows (opposite of suspend)",
		Example: `  braid resume my-wf
  braid resume my-wf --node-field-selector inputs.parameters.tag.value=approve`,
		RunE: func(cmd *cobra.Command, args []string) error {
			sel, err := nodeFieldSelector(nodeSelector)
			if err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, name := range args {
					req := &workflow.WorkflowResumeRequest{Name: name, Namespace: sess.namespace, NodeFieldSelector: sel}
					if _, err := sess.Workflow.ResumeWorkflow(ctx, req); err != nil {
						return fmt.Errorf("failed to resume %s: %w", name, err)
					}
					fmt.Fprintf(s.out, "workflow %s resumed\n", name)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&nodeSelector, "node-field-selector", "", "resume only the suspend nodes matching this selector, e.g. displayName=approve")
	return cmd
}

// selectFlags choose workflows by label or field selector, for stop,
// terminate, retry and resubmit.
type selectFlags struct {
	selector      string
	fieldSelector string
}

func (f *selectFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.selector, "selector", "l", "", "act on the workflows with these labels, e.g. -l key1=value1")
	cmd.Flags().StringVar(&f.fieldSelector, "field-selector", "", "act on the workflows matching this field selector, e.g. metadata.name=x")
}

// names are the named workflows followed by the selected ones.
func (f selectFlags) names(ctx context.Context, sess *session, args []string) ([]string, error) {
	if f.selector == "" && f.fieldSelector == "" {
		return args, nil
	}
	wfs, err := listWorkflows(ctx, sess, filterFlags{selector: f.selector, fieldSelector: f.fieldSelector}, listFieldsName, time.Now())
	if err != nil {
		return nil, err
	}
	out := append([]string(nil), args...)
	for _, wf := range wfs {
		out = append(out, wf.Name)
	}
	return out, nil
}

// shutdownCommand is stop or terminate.
func shutdownCommand(s streams, g *globalFlags, verb string, call func(context.Context, *session, string, string, string) (*v1alpha1.Workflow, error)) *cobra.Command {
	var sf selectFlags
	var dryRun bool
	var message, nodeSelector string
	cmd := &cobra.Command{
		Use: verb + " WORKFLOW WORKFLOW2...",
		RunE: func(cmd *cobra.Command, args []string) error {
			sel, err := nodeFieldSelector(nodeSelector)
			if err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				names, err := sf.names(ctx, sess, args)
				if err != nil {
					return err
				}
				for _, name := range names {
					if dryRun {
						fmt.Fprintf(s.out, "workflow %s %s (dry-run)\n", name, pastTense(verb))
						continue
					}
					wf, err := call(ctx, sess, name, sel, message)
					if err != nil {
						return err
					}
					fmt.Fprintf(s.out, "workflow %s %s\n", wf.Name, pastTense(verb))
				}
				return nil
			})
		},
	}
	sf.register(cmd)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the workflows that would be "+pastTense(verb)+", without changing them")
	if verb == "stop" {
		cmd.Flags().StringVar(&message, "message", "", "message to add to the stopped nodes")
		cmd.Flags().StringVar(&nodeSelector, "node-field-selector", "", "stop only the nodes matching this selector")
	}
	return cmd
}

func pastTense(verb string) string {
	if verb == "stop" {
		return "stopped"
	}
	return verb + "d"
}

func newStopCommand(s streams, g *globalFlags) *cobra.Command {
	cmd := shutdownCommand(s, g, "stop", func(ctx context.Context, sess *session, name, sel, msg string) (*v1alpha1.Workflow, error) {
		return sess.Workflow.StopWorkflow(ctx, &workflow.WorkflowStopRequest{Name: name, Namespace: sess.namespace, NodeFieldSelector: sel, Message: msg})
	})
	cmd.Short = "stop zero or more workflows allowing all exit handlers to run"
	cmd.Example = "  braid stop my-wf\n  braid stop -l app=test --dry-run"
	return cmd
}

func newTerminateCommand(s streams, g *globalFlags) *cobra.Command {
	cmd := shutdownCommand(s, g, "terminate", func(ctx context.Context, sess *session, name, _, _ string) (*v1alpha1.Workflow, error) {
		return sess.Workflow.TerminateWorkflow(ctx, &workflow.WorkflowTerminateRequest{Name: name, Namespace: sess.namespace})
	})
	cmd.Short = "terminate zero or more workflows immediately"
	cmd.Example = "  braid terminate my-wf\n  braid terminate @latest"
	return cmd
}

// nodeFieldSelector checks a node field selector and returns it in its
// canonical form.
func nodeFieldSelector(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	sel, err := nodeselector.Parse(s)
	if err != nil {
		return "", fmt.Errorf("--node-field-selector: %w", err)
	}
	return sel.String(), nil
}

type nodeSetFlags struct {
	nodeFieldSelector string
	phase             string
	message           string
	outputParameters  []string
}

func newNodeCommand(s streams, g *globalFlags) *cobra.Command {
	var f nodeSetFlags
	cmd := &cobra.Command{
		Use:   "node ACTION WORKFLOW FLAGS",
		Short: "perform action on a node in a workflow",
		Long: `Perform an action on nodes of a workflow. The one action is "set": set the
phase, message or output parameters of the nodes matching --node-field-selector
(typically a suspend node whose outputs are supplied).`,
		Example: `  braid node set my-wf --output-parameter approve=yes --node-field-selector displayName=approve
  braid node set my-wf --phase Failed --message "rejected" --node-field-selector displayName=approve`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "set" {
				return fmt.Errorf("unknown action %q: the only action is set", args[0])
			}
			req, err := f.request(args[1])
			if err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				req.Namespace = sess.namespace
				if _, err := sess.Workflow.SetWorkflow(ctx, req); err != nil {
					return err
				}
				fmt.Fprintln(s.out, "workflow values set")
				return nil
			})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.nodeFieldSelector, "node-field-selector", "", "the nodes to set, e.g. displayName=approve (required)")
	fs.StringVar(&f.phase, "phase", "", "phase to set: Succeeded, Failed or Error")
	fs.StringVarP(&f.message, "message", "m", "", "message to set")
	fs.StringArrayVarP(&f.outputParameters, "output-parameter", "p", nil, "output parameter name=value to set (repeatable)")
	return cmd
}

func (f nodeSetFlags) request(name string) (*workflow.WorkflowSetRequest, error) {
	if f.nodeFieldSelector == "" {
		return nil, errors.New("--node-field-selector is required")
	}
	sel, err := nodeFieldSelector(f.nodeFieldSelector)
	if err != nil {
		return nil, err
	}
	switch v1alpha1.NodePhase(f.phase) {
	case "", v1alpha1.NodeSucceeded, v1alpha1.NodeFailed, v1alpha1.NodeError:
	default:
		return nil, fmt.Errorf("--phase %q: use Succeeded, Failed or Error", f.phase)
	}
	req := &workflow.WorkflowSetRequest{Name: name, NodeFieldSelector: sel, Phase: f.phase, Message: f.message}
	if len(f.outputParameters) > 0 {
		params := map[string]string{}
		for _, p := range f.outputParameters {
			k, v, ok := strings.Cut(p, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("--output-parameter %q: want name=value", p)
			}
			params[k] = v
		}
		data, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encode the output parameters: %w", err)
		}
		req.OutputParameters = string(data)
	}
	return req, nil
}
