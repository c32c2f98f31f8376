package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// `braid archive`: the archived workflows of ArchivedWorkflowService, as
// argo archive shows them. A workflow is named by its UID; a name that is
// not a UID is looked up among the archived workflows of the namespace.

func newArchiveCommand(s streams, g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "archive", Short: "manage the workflow archive"}
	cmd.AddCommand(newArchiveListCommand(s, g), newArchiveGetCommand(s, g), newArchiveDeleteCommand(s, g),
		newArchiveLabelKeysCommand(s, g), newArchiveLabelValuesCommand(s, g),
		newArchiveRerunCommand(s, g, "resubmit"), newArchiveRerunCommand(s, g, "retry"))
	return cmd
}

// isUID reports whether s is a lowercase UUID, the form of workflow UIDs.
func isUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// listArchived lists the archived workflows of the namespace matching the
// label selector, chunk by chunk.
func listArchived(ctx context.Context, sess *session, req *workflowarchive.ListArchivedWorkflowsRequest) ([]*v1alpha1.Workflow, error) {
	var out []*v1alpha1.Workflow
	for {
		list, err := sess.Archive.ListArchivedWorkflows(ctx, req)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
		if list.Continue == "" || req.ListOptions == nil || req.ListOptions.Limit == 0 {
			return out, nil
		}
		req.ListOptions.Continue = list.Continue
	}
}

// archivedUID is the UID of an archived workflow named by UID or by name.
func archivedUID(ctx context.Context, sess *session, idOrName string) (string, error) {
	if isUID(idOrName) {
		return idOrName, nil
	}
	wfs, err := listArchived(ctx, sess, &workflowarchive.ListArchivedWorkflowsRequest{
		Namespace: sess.namespace, NameFilter: "Exact", ListOptions: &metav1.ListOptions{FieldSelector: "metadata.name=" + idOrName}})
	if err != nil {
		return "", err
	}
	switch len(wfs) {
	case 0:
		return "", fmt.Errorf("no archived workflow named %q in namespace %q", idOrName, sess.namespace)
	case 1:
		return string(wfs[0].UID), nil
	}
	var uids []string
	for _, wf := range wfs {
		uids = append(uids, string(wf.UID))
	}
	return "", fmt.Errorf("%d archived workflows are named %q: use one of their UIDs: %s", len(wfs), idOrName, strings.Join(uids, ", "))
}

func newArchiveListCommand(s streams, g *globalFlags) *cobra.Command {
	var output, selector string
	var chunkSize int64
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list archived workflows",
		Example: `  braid archive list
  braid archive list -l app=test --chunk-size 100 -o name`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "name", "json", "yaml", "wide"); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				wfs, err := listArchived(ctx, sess, &workflowarchive.ListArchivedWorkflowsRequest{
					Namespace: sess.namespace, ListOptions: &metav1.ListOptions{LabelSelector: selector, Limit: chunkSize}})
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
				return printer.WriteList(s.out, wfs, printer.ListOptions{AllNamespaces: true, Output: output, UID: true, Now: time.Now()})
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: name, json, yaml or wide")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector, e.g. -l key1=value1,key2=value2")
	cmd.Flags().Int64Var(&chunkSize, "chunk-size", 0, "list in chunks of this many workflows (0: all at once)")
	return cmd
}

func newArchiveGetCommand(s streams, g *globalFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get UID",
		Short: "get an archived workflow",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "json", "yaml", "wide"); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				uid, err := archivedUID(ctx, sess, args[0])
				if err != nil {
					return err
				}
				wf, err := sess.Archive.GetArchivedWorkflow(ctx, &workflowarchive.GetArchivedWorkflowRequest{Uid: uid, Namespace: sess.namespace})
				if err != nil {
					return err
				}
				return printArchived(s, wf, output, time.Now())
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: json, yaml or wide")
	return cmd
}

// printArchived prints an archived workflow as argo archive get does:
// compact JSON, YAML, or the header lines without a node tree.
func printArchived(s streams, wf *v1alpha1.Workflow, output string, now time.Time) error {
	switch output {
	case "json":
		b, err := json.Marshal(wf)
		if err != nil {
			return fmt.Errorf("encode JSON: %w", err)
		}
		_, err = fmt.Fprintln(s.out, string(b))
		return err
	case "yaml":
		return writeYAML(s, wf)
	}
	_, err := io.WriteString(s.out, archivedView(wf, now))
	return err
}

func archivedView(wf *v1alpha1.Workflow, now time.Time) string {
	var b strings.Builder
	line := func(label, v string) { fmt.Fprintf(&b, "%-20s %s\n", label, v) }
	line("Name:", wf.Name)
	line("Namespace:", wf.Namespace)
	sa := wf.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	line("ServiceAccount:", sa)
	line("Status:", string(wf.Status.Phase))
	if wf.Status.Message != "" {
		line("Message:", wf.Status.Message)
	}
	line("Created:", humanTimestamp(wf.CreationTimestamp.Time, now))
	if !wf.Status.StartedAt.IsZero() {
		line("Started:", humanTimestamp(wf.Status.StartedAt.Time, now))
	}
	if !wf.Status.FinishedAt.IsZero() {
		line("Finished:", humanTimestamp(wf.Status.FinishedAt.Time, now))
		line("Duration:", printer.HumanDuration(wf.Status.FinishedAt.Sub(wf.Status.StartedAt.Time)))
	}
	return b.String()
}

func newArchiveDeleteCommand(s streams, g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete UID...",
		Short: "delete archived workflows",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, arg := range args {
					uid, err := archivedUID(ctx, sess, arg)
					if err != nil {
						return err
					}
					if _, err := sess.Archive.DeleteArchivedWorkflow(ctx, &workflowarchive.DeleteArchivedWorkflowRequest{Uid: uid, Namespace: sess.namespace}); err != nil {
						return err
					}
					fmt.Fprintf(s.out, "Archived workflow '%s' deleted\n", arg)
				}
				return nil
			})
		},
	}
}

func newArchiveLabelKeysCommand(s streams, g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list-label-keys",
		Short: "list the label keys of the archived workflows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				res, err := sess.Archive.ListArchivedWorkflowLabelKeys(ctx, &workflowarchive.ListArchivedWorkflowLabelKeysRequest{Namespace: sess.namespace})
				if err != nil {
					return err
				}
				for _, k := range res.Items {
					fmt.Fprintln(s.out, k)
				}
				return nil
			})
		},
	}
}

func newArchiveLabelValuesCommand(s streams, g *globalFlags) *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "list-label-values -l KEY",
		Short: "list the values of a label key among the archived workflows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if key == "" {
				return errors.New("name the label key with -l KEY")
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				res, err := sess.Archive.ListArchivedWorkflowLabelValues(ctx, &workflowarchive.ListArchivedWorkflowLabelValuesRequest{
					Namespace: sess.namespace, ListOptions: &metav1.ListOptions{LabelSelector: key}})
				if err != nil {
					return err
				}
				for _, v := range res.Items {
					fmt.Fprintln(s.out, v)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&key, "selector", "l", "", "the label key (required)")
	return cmd
}

// archiveRerunFlags are the flags of archive resubmit and archive retry.
type archiveRerunFlags struct {
	getFlags
	followFlags
	parameters        []string
	selector          string
	fieldSelector     string
	memoized          bool
	restartSuccessful bool
	nodeSelector      string
}

// newArchiveRerunCommand is archive resubmit or archive retry.
func newArchiveRerunCommand(s streams, g *globalFlags, verb string) *cobra.Command {
	var f archiveRerunFlags
	cmd := &cobra.Command{
		Use:   verb + " [UID...]",
		Short: verb + " archived workflows",
		Example: `  braid archive ` + verb + ` 7e1c5f3a-4a11-4d53-9a1f-2c1d0e9b8f00 --wait
  braid archive ` + verb + ` -l app=test -p message=again`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.output, "name", "json", "yaml", "wide"); err != nil {
				return err
			}
			if f.wait && f.watch {
				return errors.New("--wait and --watch cannot be combined")
			}
			sel, err := nodeFieldSelector(f.nodeSelector)
			if err != nil {
				return err
			}
			f.nodeSelector = sel
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return archiveRerun(ctx, s, sess, f, verb, args)
			})
		},
	}
	fs := cmd.Flags()
	f.getFlags.register(fs, "name, json, yaml or wide", false)
	f.followFlags.register(cmd)
	fs.StringArrayVarP(&f.parameters, "parameter", "p", nil, "input parameter name=value to override (repeatable)")
	fs.StringVarP(&f.selector, "selector", "l", "", "act on the archived workflows with these labels, e.g. -l key1=value1")
	fs.StringVar(&f.fieldSelector, "field-selector", "", "act on the archived workflows matching this field selector, e.g. metadata.name=x")
	if verb == "resubmit" {
		fs.BoolVar(&f.memoized, "memoized", false, "reuse the outputs of the nodes that succeeded")
	} else {
		fs.BoolVar(&f.restartSuccessful, "restart-successful", false, "also restart the succeeded nodes matching --node-field-selector")
		fs.StringVar(&f.nodeSelector, "node-field-selector", "", "with --restart-successful: the succeeded nodes to restart")
	}
	return cmd
}

// archiveRerun resubmits or retries the named and selected archived
// workflows, prints each workflow the server returns and follows them.
func archiveRerun(ctx context.Context, s streams, sess *session, f archiveRerunFlags, verb string, args []string) error {
	var uids []string
	for _, a := range args {
		uid, err := archivedUID(ctx, sess, a)
		if err != nil {
			return err
		}
		uids = append(uids, uid)
	}
	if f.selector != "" || f.fieldSelector != "" {
		wfs, err := listArchived(ctx, sess, &workflowarchive.ListArchivedWorkflowsRequest{Namespace: sess.namespace,
			ListOptions: &metav1.ListOptions{LabelSelector: f.selector, FieldSelector: f.fieldSelector}})
		if err != nil {
			return err
		}
		for _, wf := range wfs {
			uids = append(uids, string(wf.UID))
		}
	}
	var names []string
	for _, uid := range uids {
		var wf *v1alpha1.Workflow
		var err error
		if verb == "resubmit" {
			wf, err = sess.Archive.ResubmitArchivedWorkflow(ctx, &workflowarchive.ResubmitArchivedWorkflowRequest{
				Uid: uid, Namespace: sess.namespace, Memoized: f.memoized, Parameters: f.parameters})
		} else {
			wf, err = sess.Archive.RetryArchivedWorkflow(ctx, &workflowarchive.RetryArchivedWorkflowRequest{
				Uid: uid, Namespace: sess.namespace, RestartSuccessful: f.restartSuccessful,
				NodeFieldSelector: f.nodeSelector, Parameters: f.parameters})
		}
		if err != nil {
			return err
		}
		if err := printWorkflow(s, wf, f.getFlags); err != nil {
			return err
		}
		names = append(names, wf.Name)
	}
	if f.watch && len(names) > 1 {
		return errors.New("--watch is only supported with a single workflow")
	}
	return waitWatchOrLog(ctx, s, sess, names, f.followFlags, f.getFlags)
}
