package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// `braid cron`: create, get, list, delete, suspend, resume, lint and
// update of CronWorkflows over CronWorkflowService, printed as argo cron
// prints them.

func newCronCommand(s streams, g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "cron", Short: "manage cron workflows", Aliases: []string{"cronwf", "cwf"}}
	cmd.AddCommand(newCronCreateCommand(s, g), newCronGetCommand(s, g), newCronListCommand(s, g),
		newCronDeleteCommand(s, g), newCronSuspendCommand(s, g, true), newCronSuspendCommand(s, g, false),
		kindLintCommand(s, g, "CronWorkflow", "cronworkflows"), newCronUpdateCommand(s, g),
		newCronBackfillCommand(s, g))
	return cmd
}

type cronCreateFlags struct {
	output, schedule, parameterFile    string
	name, generateName, entrypoint     string
	labels, serviceAccount, instanceID string
	parameters                         []string
	strict                             bool
}

func newCronCreateCommand(s streams, g *globalFlags) *cobra.Command {
	var f cronCreateFlags
	cmd := &cobra.Command{
		Use:   "create FILE1 FILE2...",
		Short: "create a cron workflow",
		Example: `  braid cron create cron.yaml
  braid cron create cron.yaml --schedule "*/5 * * * *" -p message=hi`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cws, err := loadKind[*v1alpha1.CronWorkflow](s, args, f.strict, "CronWorkflow")
			if err != nil {
				return err
			}
			for _, cw := range cws {
				if err := f.apply(cw); err != nil {
					return err
				}
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, cw := range cws {
					res, err := sess.CronWorkflow.CreateCronWorkflow(ctx, &cronworkflow.CreateCronWorkflowRequest{
						Namespace: objectNamespace(cw, sess.namespace), CronWorkflow: cw, CreateOptions: &metav1.CreateOptions{}})
					if err != nil {
						return fmt.Errorf("failed to create cron workflow: %w", err)
					}
					if err := printCron(s, res, ""); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.output, "output", "o", "", "accepted for argo compatibility: create always prints the details")
	fs.StringVar(&f.schedule, "schedule", "", "override the cron workflow's schedule")
	fs.StringVar(&f.instanceID, "instanceid", "", "accepted for argo compatibility; braid has one controller")
	f.register(fs)
	return cmd
}

// register adds the flags that change the cron workflows of the files,
// which create and update share.
func (f *cronCreateFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.name, "name", "", "override metadata.name")
	fs.StringVar(&f.generateName, "generate-name", "", "override metadata.generateName")
	fs.StringVar(&f.entrypoint, "entrypoint", "", "override spec.workflowSpec.entrypoint")
	fs.StringArrayVarP(&f.parameters, "parameter", "p", nil, "input parameter name=value (repeatable)")
	fs.StringVarP(&f.parameterFile, "parameter-file", "f", "", "a YAML or JSON file of input parameters")
	fs.StringVarP(&f.labels, "labels", "l", "", "comma separated labels for the submitted workflows: key1=val1,key2=val2")
	fs.StringVar(&f.serviceAccount, "serviceaccount", "", "run all pods of the workflows with this service account")
	fs.BoolVar(&f.strict, "strict", true, "perform strict validation")
}

// apply changes cw as the create flags say: the schedule, then the submit
// options on its workflow spec. Labels go to spec.workflowMetadata, so
// that each submitted workflow carries them.
func (f cronCreateFlags) apply(cw *v1alpha1.CronWorkflow) error {
	if f.schedule != "" {
		cw.Spec.Schedule, cw.Spec.Schedules = "", []string{f.schedule}
	}
	so := spec.SubmitOptions{Parameters: f.parameters, Entrypoint: f.entrypoint, Labels: f.labels}
	if f.parameterFile != "" {
		data, err := os.ReadFile(f.parameterFile)
		if err != nil {
			return fmt.Errorf("read the parameter file: %w", err)
		}
		so.ParameterFile = data
	}
	wf := &v1alpha1.Workflow{Spec: cw.Spec.WorkflowSpec}
	if err := spec.ApplySubmitOptions(wf, so); err != nil {
		return err
	}
	cw.Spec.WorkflowSpec = wf.Spec
	if len(wf.Labels) > 0 {
		if cw.Spec.WorkflowMetadata == nil {
			cw.Spec.WorkflowMetadata = &metav1.ObjectMeta{}
		}
		if cw.Spec.WorkflowMetadata.Labels == nil {
			cw.Spec.WorkflowMetadata.Labels = map[string]string{}
		}
		for k, v := range wf.Labels {
			cw.Spec.WorkflowMetadata.Labels[k] = v
		}
	}
	if f.serviceAccount != "" {
		cw.Spec.WorkflowSpec.ServiceAccountName = f.serviceAccount
	}
	if f.generateName != "" {
		cw.GenerateName, cw.Name = f.generateName, ""
	}
	if f.name != "" {
		cw.Name, cw.GenerateName = f.name, ""
	}
	return nil
}

func printCron(s streams, cw *v1alpha1.CronWorkflow, output string) error {
	switch output {
	case "name":
		_, err := fmt.Fprintln(s.out, cw.Name)
		return err
	case "json":
		return writeIndentedJSON(s.out, cw)
	case "yaml":
		return writeYAML(s, cw)
	}
	_, err := io.WriteString(s.out, cronView(cw, time.Now(), time.Local))
	return err
}

// cronView is the detail view of argo cron get: "%-30s %v" lines. local is
// the zone of a schedule without a timezone.
func cronView(cw *v1alpha1.CronWorkflow, now time.Time, local *time.Location) string {
	const format = "%-30s %v\n"
	var b strings.Builder
	line := func(label string, v any) { fmt.Fprintf(&b, format, label, v) }
	line("Name:", cw.Name)
	line("Namespace:", cw.Namespace)
	line("Created:", humanTimestamp(cw.CreationTimestamp.Time, now))
	line("Schedules:", scheduleString(&cw.Spec))
	line("Suspended:", cw.Spec.Suspend != nil && *cw.Spec.Suspend)
	if cw.Spec.Timezone != "" {
		line("Timezone:", cw.Spec.Timezone)
	}
	if cw.Spec.StartingDeadlineSeconds != nil {
		line("StartingDeadlineSeconds:", *cw.Spec.StartingDeadlineSeconds)
	}
	if cw.Spec.ConcurrencyPolicy != "" {
		line("ConcurrencyPolicy:", cw.Spec.ConcurrencyPolicy)
	}
	if t := cw.Status.LastScheduledTime; t != nil {
		line("LastScheduledTime:", humanTimestamp(t.Time, now))
	}
	if next, err := nextRun(&cw.Spec, now, local); err == nil {
		line("NextScheduledTime:", humanTimestamp(next, now)+" (assumes workflow-controller is in UTC)")
	}
	if len(cw.Status.Active) > 0 {
		var names []string
		for _, a := range cw.Status.Active {
			names = append(names, a.Name)
		}
		line("Active Workflows:", strings.Join(names, ", "))
	}
	if len(cw.Status.Conditions) > 0 {
		line("Conditions:", "")
		for _, c := range cw.Status.Conditions {
			icon := ""
			if c.Type == "SubmissionError" {
				icon = "✖"
			}
			msg := c.Message
			if msg == "" {
				msg = string(c.Status)
			}
			line(icon+" "+string(c.Type), msg)
		}
	}
	if params := cw.Spec.WorkflowSpec.Arguments.Parameters; len(params) > 0 {
		line("Workflow Parameters:", "")
		for _, p := range params {
			switch {
			case p.Value != nil:
				line("  "+p.Name+":", p.Value.String())
			case p.Default != nil:
				line("  "+p.Name+":", p.Default.String())
			case p.ValueFrom != nil:
				line("  "+p.Name+":", "")
			}
		}
	}
	return b.String()
}

// scheduleString is the schedules joined by commas (the legacy schedule
// first).
func scheduleString(s *v1alpha1.CronWorkflowSpec) string {
	return strings.Join(schedules(s), ",")
}

func schedules(s *v1alpha1.CronWorkflowSpec) []string { return spec.CronSchedules(s) }

// nextRun is the earliest time after now at which one of the schedules is
// due, in the spec's timezone (local when it has none).
func nextRun(s *v1alpha1.CronWorkflowSpec, now time.Time, local *time.Location) (time.Time, error) {
	scheds, err := spec.ParseCronSchedules(s, local)
	if err != nil {
		return time.Time{}, err
	}
	var next time.Time
	for _, sched := range scheds {
		if t := sched.Next(now); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next, nil
}

// writeCronList prints argo cron list's table.
func writeCronList(w io.Writer, cws []v1alpha1.CronWorkflow, allNamespaces bool, now time.Time, local *time.Location) error {
	tw := newTable(w)
	if allNamespaces {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprint(tw, "NAME\tAGE\tLAST RUN\tNEXT RUN\tSCHEDULES\tTIMEZONE\tSUSPENDED\n")
	for i := range cws {
		cw := &cws[i]
		if allNamespaces {
			fmt.Fprintf(tw, "%s\t", cw.Namespace)
		}
		last, next := "N/A", "N/A"
		if t := cw.Status.LastScheduledTime; t != nil {
			last = printer.ShortDuration(now.Sub(t.Time))
		}
		if t, err := nextRun(&cw.Spec, now, local); err == nil {
			next = printer.ShortDuration(t.Sub(now))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%t\n", cw.Name, printer.ShortDuration(now.Sub(cw.CreationTimestamp.Time)),
			last, next, scheduleString(&cw.Spec), cw.Spec.Timezone, cw.Spec.Suspend != nil && *cw.Spec.Suspend)
	}
	return tw.Flush()
}

func newCronGetCommand(s streams, g *globalFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get CRON_WORKFLOW...",
		Short: "display details about a cron workflow",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "name", "json", "yaml", "wide"); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, name := range args {
					res, err := sess.CronWorkflow.GetCronWorkflow(ctx, &cronworkflow.GetCronWorkflowRequest{Name: name, Namespace: sess.namespace})
					if err != nil {
						return err
					}
					if err := printCron(s, res, output); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name, json, yaml or wide")
	return cmd
}

// listCrons lists the cron workflows of ns ("" for all).
func listCrons(ctx context.Context, sess *session, ns, selector string) ([]v1alpha1.CronWorkflow, error) {
	res, err := sess.CronWorkflow.ListCronWorkflows(ctx, &cronworkflow.ListCronWorkflowsRequest{
		Namespace: ns, ListOptions: &metav1.ListOptions{LabelSelector: selector}})
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

func newCronListCommand(s streams, g *globalFlags) *cobra.Command {
	var output, selector string
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list cron workflows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "name", "wide"); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				ns := sess.namespace
				if all {
					ns = ""
				}
				cws, err := listCrons(ctx, sess, ns, selector)
				if err != nil {
					return err
				}
				if output == "name" {
					for _, cw := range cws {
						fmt.Fprintln(s.out, cw.Name)
					}
					return nil
				}
				return writeCronList(s.out, cws, all, time.Now(), time.Local)
			})
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "show cron workflows from all namespaces")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name or wide")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector, e.g. -l key1=value1,key2=value2")
	return cmd
}

func newCronDeleteCommand(_ streams, g *globalFlags) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "delete [CRON_WORKFLOW... | --all]",
		Short: "delete cron workflows",
		RunE: func(cmd *cobra.Command, args []string) error {
			if !all && len(args) == 0 {
				return errors.New("name the cron workflows to delete, or use --all")
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				names := args
				if all {
					cws, err := listCrons(ctx, sess, sess.namespace, "")
					if err != nil {
						return err
					}
					names = nil
					for _, cw := range cws {
						names = append(names, cw.Name)
					}
				}
				for _, name := range names {
					if _, err := sess.CronWorkflow.DeleteCronWorkflow(ctx, &cronworkflow.DeleteCronWorkflowRequest{Name: name, Namespace: sess.namespace}); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "delete all cron workflows")
	return cmd
}

// newCronSuspendCommand is cron suspend (suspend true) or cron resume.
func newCronSuspendCommand(s streams, g *globalFlags, suspend bool) *cobra.Command {
	verb, done := "resume", "resumed"
	if suspend {
		verb, done = "suspend", "suspended"
	}
	return &cobra.Command{
		Use:   verb + " CRON_WORKFLOW...",
		Short: verb + " cron workflows",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, name := range args {
					var err error
					if suspend {
						_, err = sess.CronWorkflow.SuspendCronWorkflow(ctx, &cronworkflow.CronWorkflowSuspendRequest{Name: name, Namespace: sess.namespace})
					} else {
						_, err = sess.CronWorkflow.ResumeCronWorkflow(ctx, &cronworkflow.CronWorkflowResumeRequest{Name: name, Namespace: sess.namespace})
					}
					if err != nil {
						return fmt.Errorf("failed to %s %s: %w", verb, name, err)
					}
					fmt.Fprintf(s.out, "CronWorkflow '%s' %s\n", name, done)
				}
				return nil
			})
		},
	}
}

func newCronUpdateCommand(s streams, g *globalFlags) *cobra.Command {
	var f cronCreateFlags
	cmd := &cobra.Command{
		Use:   "update FILE1 FILE2...",
		Short: "update cron workflows",
		Example: `  braid cron update cron.yaml
  braid cron update cron.yaml -p message=hello --entrypoint other`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.output, "name", "json", "yaml", "wide"); err != nil {
				return err
			}
			cws, err := loadKind[*v1alpha1.CronWorkflow](s, args, f.strict, "CronWorkflow")
			if err != nil {
				return err
			}
			for _, cw := range cws {
				if err := f.apply(cw); err != nil {
					return err
				}
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, cw := range cws {
					res, err := updateCron(ctx, sess, cw)
					if err != nil {
						return fmt.Errorf("failed to update cron workflow: %w", err)
					}
					if err := printCron(s, res, f.output); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "output format: name, json, yaml or wide")
	f.register(cmd.Flags())
	return cmd
}

// updateCron replaces the stored cron workflow named as cw, at its current
// resourceVersion.
func updateCron(ctx context.Context, sess *session, cw *v1alpha1.CronWorkflow) (*v1alpha1.CronWorkflow, error) {
	ns := cw.Namespace
	if ns == "" {
		ns = sess.namespace
	}
	cur, err := sess.CronWorkflow.GetCronWorkflow(ctx, &cronworkflow.GetCronWorkflowRequest{Name: cw.Name, Namespace: ns})
	if err != nil {
		return nil, err
	}
	cw.ResourceVersion = cur.ResourceVersion
	return sess.CronWorkflow.UpdateCronWorkflow(ctx, &cronworkflow.UpdateCronWorkflowRequest{Name: cw.Name, Namespace: ns, CronWorkflow: cw})
}
