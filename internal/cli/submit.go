package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

type submitFlags struct {
	getFlags
	followFlags
	parameters     []string
	parameterFile  string
	from           string
	name           string
	generateName   string
	entrypoint     string
	labels         string
	serviceAccount string
	dryRun         bool
	serverDryRun   bool
	priority       int32
	strict         bool
	scheduledTime  string
}

func newSubmitCommand(s streams, g *globalFlags) *cobra.Command {
	var f submitFlags
	cmd := &cobra.Command{
		Use:   "submit [FILE... | --from `kind/name]",
		Short: "submit a workflow",
		Long: `Submit workflows from files ("-" reads standard input), or from a
WorkflowTemplate, ClusterWorkflowTemplate or CronWorkflow with --from.
With no server (no --argo-server, ARGO_SERVER, BRAID_SERVER, nor a running
braid server on the data directory) the workflow is stored in the data
directory and runs when ` + "`braid server`" + ` starts there.`,
		Example: `  braid submit wf.yaml -p message=hi --watch
  braid submit --from workflowtemplate/my-tmpl --wait
  braid submit wf.yaml --server-dry-run -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(args); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return runSubmit(ctx, s, sess, f, cmd.Flags().Changed("priority"), args)
			})
		},
	}
	fs := cmd.Flags()
	f.getFlags.register(fs, "name, json, yaml or wide", true)
	f.followFlags.register(cmd)
	fs.StringArrayVarP(&f.parameters, "parameter", "p", nil, "input parameter name=value (repeatable)")
	fs.StringVarP(&f.parameterFile, "parameter-file", "f", "", "a YAML or JSON file of input parameters")
	fs.StringVar(&f.from, "from", "", "submit from a template or cron workflow: kind/name (workflowtemplate, clusterworkflowtemplate, cronwf)")
	fs.StringVar(&f.name, "name", "", "override metadata.name")
	fs.StringVar(&f.generateName, "generate-name", "", "override metadata.generateName")
	fs.StringVar(&f.entrypoint, "entrypoint", "", "override spec.entrypoint")
	fs.StringVarP(&f.labels, "labels", "l", "", "comma separated labels to add: key1=val1,key2=val2")
	fs.StringVar(&f.serviceAccount, "serviceaccount", "", "run all pods of the workflow with this service account")
	fs.BoolVar(&f.dryRun, "dry-run", false, "check and print the workflow without creating it")
	fs.BoolVar(&f.serverDryRun, "server-dry-run", false, "have the server check the workflow without creating it")
	fs.Int32Var(&f.priority, "priority", 0, "workflow priority")
	fs.BoolVar(&f.strict, "strict", true, "reject unknown fields and duplicate keys in the files")
	fs.StringVar(&f.scheduledTime, "scheduled-time", "", "override the workflow's scheduledTime ({{workflow.scheduledTime}}), an RFC 3339 time, e.g. for a backfill")
	return cmd
}

func (f submitFlags) check(args []string) error {
	if err := checkOutput(f.output, "name", "json", "yaml", "wide"); err != nil {
		return err
	}
	if f.from != "" && len(args) > 0 {
		return errors.New("--from cannot be combined with files")
	}
	if f.from == "" && len(args) == 0 {
		return errors.New("name at least one file to submit, or use --from kind/name")
	}
	if f.watch && f.wait {
		return errors.New("--wait and --watch cannot be combined")
	}
	if f.scheduledTime != "" {
		if _, err := time.Parse(time.RFC3339, f.scheduledTime); err != nil {
			return fmt.Errorf("--scheduled-time %q is not an RFC 3339 time such as 2026-05-19T02:00:00Z", f.scheduledTime)
		}
	}
	return nil
}

func runSubmit(ctx context.Context, s streams, sess *session, f submitFlags, priority bool, args []string) error {
	var created []*v1alpha1.Workflow
	var err error
	if f.from != "" {
		created, err = submitFrom(ctx, sess, f, priority)
	} else {
		created, err = submitFiles(ctx, s, sess, f, priority, args)
	}
	if err != nil {
		return err
	}
	var names []string
	for _, wf := range created {
		if err := printWorkflow(s, wf, f.getFlags); err != nil {
			return err
		}
		names = append(names, wf.Name)
	}
	if f.dryRun || f.serverDryRun {
		return nil
	}
	if sess.direct {
		fmt.Fprintf(s.err, "no braid server runs workflows on %s: %s will run when `braid server` starts there\n", sess.dataDir, strings.Join(names, ", "))
	}
	if f.watch && len(names) != 1 {
		return errors.New("--watch is only supported with a single workflow")
	}
	return waitWatchOrLog(ctx, s, sess, names, f.followFlags, f.getFlags)
}

// submitFiles creates the Workflows of the files, changed as the flags say.
func submitFiles(ctx context.Context, s streams, sess *session, f submitFlags, priority bool, files []string) ([]*v1alpha1.Workflow, error) {
	wfs, err := loadWorkflows(s, files, f.strict)
	if err != nil {
		return nil, err
	}
	so := spec.SubmitOptions{Parameters: f.parameters, Entrypoint: f.entrypoint, Name: f.name, GenerateName: f.generateName, Labels: f.labels}
	if f.parameterFile != "" {
		if so.ParameterFile, err = os.ReadFile(f.parameterFile); err != nil {
			return nil, fmt.Errorf("read the parameter file: %w", err)
		}
	}
	var out []*v1alpha1.Workflow
	for _, wf := range wfs {
		if err := spec.ApplySubmitOptions(wf, so); err != nil {
			return nil, err
		}
		if f.serviceAccount != "" {
			wf.Spec.ServiceAccountName = f.serviceAccount
		}
		if priority {
			p := f.priority
			wf.Spec.Priority = &p
		}
		if f.scheduledTime != "" {
			if wf.Annotations == nil {
				wf.Annotations = map[string]string{}
			}
			wf.Annotations[spec.AnnotationScheduledTime] = f.scheduledTime
		}
		req := &workflow.WorkflowCreateRequest{Namespace: sess.namespace, Workflow: wf, ServerDryRun: f.serverDryRun, CreateOptions: &metav1.CreateOptions{}}
		if f.dryRun {
			req.CreateOptions.DryRun = []string{"All"}
		}
		created, err := sess.Workflow.CreateWorkflow(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("failed to submit workflow: %w", err)
		}
		out = append(out, created)
	}
	return out, nil
}

// loadWorkflows reads the Workflows of the files ("-": standard input);
// documents of other kinds are skipped.
func loadWorkflows(s streams, files []string, strict bool) ([]*v1alpha1.Workflow, error) {
	mode := spec.Strict
	if !strict {
		mode = spec.Lenient
	}
	var out []*v1alpha1.Workflow
	for _, file := range files {
		var docs []*spec.Document
		var err error
		if file == "-" {
			data, rerr := io.ReadAll(s.in)
			if rerr != nil {
				return nil, fmt.Errorf("read standard input: %w", rerr)
			}
			docs, err = spec.Load("stdin", data, mode)
		} else {
			docs, err = spec.LoadFile(file, mode)
		}
		if err != nil {
			return nil, err
		}
		n := len(out)
		for _, d := range docs {
			if wf, ok := d.Object.(*v1alpha1.Workflow); ok {
				out = append(out, wf)
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s: no Workflow found", file)
		}
	}
	return out, nil
}

// submitFrom submits a workflow from a template or cron workflow.
func submitFrom(ctx context.Context, sess *session, f submitFlags, priority bool) ([]*v1alpha1.Workflow, error) {
	kind, name, ok := strings.Cut(f.from, "/")
	if !ok || kind == "" || name == "" {
		return nil, fmt.Errorf("resource identifier %q is malformed: want kind/name, e.g. cronwf/hello-world-cwf", f.from)
	}
	params, err := fileParameters(f.parameterFile)
	if err != nil {
		return nil, err
	}
	opts := &v1alpha1.SubmitOpts{
		Name: f.name, GenerateName: f.generateName, Entrypoint: f.entrypoint,
		Parameters: append(params, f.parameters...), ServiceAccount: f.serviceAccount,
		DryRun: f.dryRun, ServerDryRun: f.serverDryRun, Labels: f.labels,
	}
	if f.scheduledTime != "" {
		opts.Annotations = spec.AnnotationScheduledTime + "=" + f.scheduledTime
	}
	if priority {
		p := f.priority
		opts.Priority = &p
	}
	wf, err := sess.Workflow.SubmitWorkflow(ctx, &workflow.WorkflowSubmitRequest{
		Namespace: sess.namespace, ResourceKind: kind, ResourceName: name, SubmitOptions: opts,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to submit workflow: %w", err)
	}
	return []*v1alpha1.Workflow{wf}, nil
}

// fileParameters reads a parameter file as name=value pairs.
func fileParameters(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the parameter file: %w", err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("parameter file %s: %w", path, err)
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		str, ok := v.(string)
		if !ok {
			b, err := yaml.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("parameter file %s: %s: %w", path, k, err)
			}
			str = strings.TrimSpace(string(b))
		}
		out = append(out, k+"="+str)
	}
	return out, nil
}
