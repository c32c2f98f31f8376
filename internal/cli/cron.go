package cli

import (
	"context"
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

// `braid cron`: the shared verbs (kindcmd.go: create, get, list, delete,
// lint, update) and suspend, resume and backfill, over
// CronWorkflowService, printed as argo cron prints them.

func newCronCommand(s streams, g *globalFlags) *cobra.Command {
	return newKindCommand(s, g, cronKind(),
		newCronSuspendCommand(s, g, true), newCronSuspendCommand(s, g, false), newCronBackfillCommand(s, g))
}

// cronKind is CronWorkflow over CronWorkflowService.
func cronKind() *objKind {
	return &objKind{
		use: "cron", short: "manage cron workflows", aliases: []string{"cronwf", "cwf"},
		kind: "CronWorkflow", lintKind: "cronworkflows", help: cronHelp(),
		print: printCron, table: cronTable, editFlags: cronEditFlags,
		load: loadAs[*v1alpha1.CronWorkflow]("CronWorkflow"),
		create: func(ctx context.Context, sess *session, obj spec.Object) (spec.Object, error) {
			cw, err := typed[*v1alpha1.CronWorkflow](obj)
			if err != nil {
				return nil, err
			}
			return answer(sess.CronWorkflow.CreateCronWorkflow(ctx, &cronworkflow.CreateCronWorkflowRequest{
				Namespace: objectNamespace(obj, sess.namespace), CronWorkflow: cw, CreateOptions: &metav1.CreateOptions{}}))
		},
		get: func(ctx context.Context, sess *session, ns, name string) (spec.Object, error) {
			return answer(sess.CronWorkflow.GetCronWorkflow(ctx, &cronworkflow.GetCronWorkflowRequest{Name: name, Namespace: ns}))
		},
		update: func(ctx context.Context, sess *session, name string, obj spec.Object) (spec.Object, error) {
			cw, err := typed[*v1alpha1.CronWorkflow](obj)
			if err != nil {
				return nil, err
			}
			return answer(sess.CronWorkflow.UpdateCronWorkflow(ctx, &cronworkflow.UpdateCronWorkflowRequest{
				Name: name, Namespace: objectNamespace(obj, sess.namespace), CronWorkflow: cw}))
		},
		remove: func(ctx context.Context, sess *session, name string) error {
			_, err := sess.CronWorkflow.DeleteCronWorkflow(ctx, &cronworkflow.DeleteCronWorkflowRequest{Name: name, Namespace: sess.namespace})
			return err
		},
		list: func(ctx context.Context, sess *session, ns, selector string) ([]spec.Object, error) {
			res, err := sess.CronWorkflow.ListCronWorkflows(ctx, &cronworkflow.ListCronWorkflowsRequest{
				Namespace: ns, ListOptions: &metav1.ListOptions{LabelSelector: selector}})
			if err != nil {
				return nil, err
			}
			out := make([]spec.Object, len(res.Items))
			for i := range res.Items {
				out[i] = &res.Items[i]
			}
			return out, nil
		},
	}
}

// cronHelp is what the cron commands say, as argo cron does.
func cronHelp() kindHelp {
	return kindHelp{
		one: "a cron workflow", many: "cron workflows", plural: "cron workflows",
		getUse: "get CRON_WORKFLOW...", deleteUse: "delete [CRON_WORKFLOW... | --all]",
		createExample: `  braid cron create cron.yaml
  braid cron create cron.yaml --schedule "*/5 * * * *" -p message=hi`,
		updateExample: `  braid cron update cron.yaml
  braid cron update cron.yaml -p message=hello --entrypoint other`,
		createOutput: "accepted for argo compatibility: create always prints the details",
		quietDelete:  true,
	}
}

// cronCreateFlags are the flags of cron create and update that change the
// cron workflows of the files.
type cronCreateFlags struct {
	schedule, parameterFile            string
	name, generateName, entrypoint     string
	labels, serviceAccount, instanceID string
	parameters                         []string
}

// cronEditFlags registers the cron flags of verb ("create" adds
// --schedule and --instanceid) and returns their edit.
func cronEditFlags(verb string, fs *pflag.FlagSet) func(spec.Object) error {
	f := &cronCreateFlags{}
	if verb == "create" {
		fs.StringVar(&f.schedule, "schedule", "", "override the cron workflow's schedule")
		fs.StringVar(&f.instanceID, "instanceid", "", "accepted for argo compatibility; braid has one controller")
	}
	f.register(fs)
	return func(obj spec.Object) error {
		cw, err := typed[*v1alpha1.CronWorkflow](obj)
		if err != nil {
			return err
		}
		return f.apply(cw)
	}
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

// printCron writes one cron workflow as -o says: name, json, yaml, or
// argo cron get's view (default and wide).
func printCron(s streams, obj spec.Object, output string) error {
	if done, err := printObject(s, obj, output); done {
		return err
	}
	cw, err := typed[*v1alpha1.CronWorkflow](obj)
	if err != nil {
		return err
	}
	_, err = io.WriteString(s.out, cronView(cw, time.Now(), time.Local))
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

// cronTable is argo cron list's table of the cron workflows.
func cronTable(w io.Writer, objs []spec.Object, namespaces bool) error {
	cws := make([]v1alpha1.CronWorkflow, len(objs))
	for i, o := range objs {
		cw, err := typed[*v1alpha1.CronWorkflow](o)
		if err != nil {
			return err
		}
		cws[i] = *cw
	}
	return writeCronList(w, cws, namespaces, time.Now(), time.Local)
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
