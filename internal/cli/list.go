package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Labels the list filters select on.
const (
	labelPhase       = "workflows.argoproj.io/phase"
	labelCompleted   = "workflows.argoproj.io/completed"
	labelResubmitted = "workflows.argoproj.io/resubmitted-from-workflow"
)

// The `fields` the list asks for (ARGO-API §5.1).
const (
	listFieldsDefault = "metadata,items.metadata,items.spec,items.status.phase,items.status.message,items.status.finishedAt,items.status.startedAt,items.status.estimatedDuration,items.status.progress"
	listFieldsName    = "metadata,items.metadata.name,items.metadata.creationTimestamp,items.status.finishedAt"
	listFieldsDelete  = "metadata,items.metadata.name,items.metadata.namespace,items.metadata.creationTimestamp,items.metadata.labels,items.status.phase,items.status.finishedAt"
)

// filterFlags select workflows, as list and delete do.
type filterFlags struct {
	allNamespaces bool
	status        []string
	completed     bool
	running       bool
	resubmitted   bool
	selector      string
	fieldSelector string
	prefix        string
	since         string
	older         string
	chunkSize     int64
}

func (f *filterFlags) register(fs *pflag.FlagSet, chunkFlag string) {
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "show workflows from all namespaces")
	fs.StringSliceVar(&f.status, "status", nil, "filter by status (comma separated): Pending, Running, Succeeded, Failed, Error")
	fs.BoolVar(&f.completed, "completed", false, "only completed workflows")
	fs.BoolVar(&f.resubmitted, "resubmitted", false, "only resubmitted workflows")
	fs.StringVarP(&f.selector, "selector", "l", "", "label selector, e.g. -l key1=value1,key2=value2")
	fs.StringVar(&f.fieldSelector, "field-selector", "", "field selector, e.g. --field-selector metadata.name=x")
	fs.StringVar(&f.prefix, "prefix", "", "only workflows whose name starts with this prefix")
	fs.StringVar(&f.older, "older", "", "only completed workflows that finished before this duration ago, e.g. 10m, 3h, 1d")
	fs.Int64Var(&f.chunkSize, chunkFlag, 0, "list in chunks of this many workflows (0: all at once)")
}

// labelSelector combines -l with --status, --completed, --running and
// --resubmitted, as argo does.
func (f filterFlags) labelSelector() (string, error) {
	if f.completed && f.running {
		return "", fmt.Errorf("--completed and --running cannot be used together")
	}
	sel, err := labels.Parse(f.selector)
	if err != nil {
		return "", fmt.Errorf("--selector: %w", err)
	}
	add := func(key string, op selection.Operator, vals ...string) error {
		r, err := labels.NewRequirement(key, op, vals)
		if err != nil {
			return fmt.Errorf("selector on %s: %w", key, err)
		}
		sel = sel.Add(*r)
		return nil
	}
	var errs []error
	if len(f.status) > 0 {
		errs = append(errs, add(labelPhase, selection.In, f.status...))
	}
	if f.completed {
		errs = append(errs, add(labelCompleted, selection.Equals, "true"))
	}
	if f.running {
		errs = append(errs, add(labelCompleted, selection.NotEquals, "true"))
	}
	if f.resubmitted {
		errs = append(errs, add(labelResubmitted, selection.Exists))
	}
	for _, err := range errs {
		if err != nil {
			return "", err
		}
	}
	return sel.String(), nil
}

// listWorkflows lists the workflows f selects, chunk by chunk, then keeps
// those that pass the client-side filters (--prefix, --since, --older).
func listWorkflows(ctx context.Context, sess *session, f filterFlags, fields string, now time.Time) ([]*v1alpha1.Workflow, error) {
	sel, err := f.labelSelector()
	if err != nil {
		return nil, err
	}
	var since, older time.Time
	if f.since != "" {
		d, err := parseDuration(f.since)
		if err != nil {
			return nil, fmt.Errorf("--since: %w", err)
		}
		since = now.Add(-d)
	}
	if f.older != "" {
		d, err := parseDuration(f.older)
		if err != nil {
			return nil, fmt.Errorf("--older: %w", err)
		}
		older = now.Add(-d)
	}
	ns := sess.namespace
	if f.allNamespaces {
		ns = ""
	}
	req := &workflow.WorkflowListRequest{Namespace: ns, Fields: fields, ListOptions: &metav1.ListOptions{
		LabelSelector: sel, FieldSelector: f.fieldSelector, Limit: f.chunkSize,
	}}
	var out []*v1alpha1.Workflow
	for {
		list, err := sess.Workflow.ListWorkflows(ctx, req)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			wf := &list.Items[i]
			if keepListed(wf, f.prefix, since, older) {
				out = append(out, wf)
			}
		}
		if list.Continue == "" {
			return out, nil
		}
		req.ListOptions.Continue = list.Continue
	}
}

func keepListed(wf *v1alpha1.Workflow, prefix string, since, older time.Time) bool {
	if prefix != "" && !strings.HasPrefix(wf.Name, prefix) {
		return false
	}
	if !since.IsZero() && wf.CreationTimestamp.Time.Before(since) {
		return false
	}
	if !older.IsZero() && (wf.Status.FinishedAt.IsZero() || !wf.Status.FinishedAt.Time.Before(older)) {
		return false
	}
	return true
}

func newListCommand(s streams, g *globalFlags) *cobra.Command {
	var f filterFlags
	var output string
	var noHeaders bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list workflows",
		Example: `  braid list
  braid list -A --status Running,Failed
  braid list --completed --older 1d -o name`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "name", "wide", "json", "yaml"); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				fields := listFieldsDefault
				switch output {
				case "name":
					fields = listFieldsName
				case "wide", "json", "yaml":
					fields = ""
				}
				now := time.Now()
				wfs, err := listWorkflows(ctx, sess, f, fields, now)
				if err != nil {
					return err
				}
				if output == "yaml" {
					if len(wfs) == 0 {
						_, err := fmt.Fprintln(s.out, "[]")
						return err
					}
					printer.SortWorkflows(wfs)
					return writeYAML(s, wfs)
				}
				return printer.WriteList(s.out, wfs, printer.ListOptions{AllNamespaces: f.allNamespaces, NoHeaders: noHeaders, Output: output, Now: now})
			})
		},
	}
	fs := cmd.Flags()
	f.register(fs, "chunk-size")
	fs.BoolVar(&f.running, "running", false, "only running workflows")
	fs.StringVar(&f.since, "since", "", "only workflows created after this duration ago, e.g. 10m, 3h, 1d")
	fs.StringVarP(&output, "output", "o", "", "output format: name, wide, json or yaml")
	fs.BoolVar(&noHeaders, "no-headers", false, "don't print headers (default print headers)")
	return cmd
}
