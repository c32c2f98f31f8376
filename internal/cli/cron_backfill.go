package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronsched "github.com/braidwf/braid/internal/controller/cron"
	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// `braid cron backfill`: one workflow per time the CronWorkflow's
// schedules would have fired in a range, created through the API.

// labelBackfill marks a backfilled workflow (see cronsched.LabelBackfill).
const labelBackfill = cronsched.LabelBackfill

type backfillFlags struct {
	start, end, argName, format, name string
	parallel                          bool
	maxCount                          int
}

func newCronBackfillCommand(s streams, g *globalFlags) *cobra.Command {
	f := backfillFlags{}
	cmd := &cobra.Command{
		Use:   "backfill CRON_WORKFLOW --start TIME [--end TIME]",
		Short: "create the workflows a cron workflow would have run between two times",
		Long: `Create one workflow for each time the cron workflow's schedules fire between
--start (or --from) and --end (or --to, default now), both included. Times are
RFC 3339 (2026-01-02T15:04:05Z), or "2006-01-02", "2006-01-02 15:04[:05]",
"2006-01-02T15:04[:05]" or RFC 1123, the zone-less forms read in the cron
workflow's timezone (the local one when it has none).

Each workflow is the cron workflow's workflowSpec, named <name>-<unix seconds
of its scheduled time> (--name, default <cron>-backfill), with the annotation
workflows.argoproj.io/scheduled-time (so {{workflow.scheduledTime}} works), the
label braid.dev/cron-backfill=<cron>, and the workflow parameter --argname
(default cronScheduleTime; "" for none) set to the scheduled time formatted
with the Go layout --format. Backfilled workflows are not counted in the cron
workflow's status and not deleted by its history limits.

Without --parallel, the workflows run one at a time, oldest first: each is
created when the one before it has finished, and the backfill stops (exit 1)
at the first that does not succeed. With --parallel all are created at once
and the command returns. A workflow of the same name that already exists is
skipped, so running the same backfill again resumes it; use another --name
to run the times again.`,
		Example: `  braid cron backfill daily-job --start 2026-05-19 --end 2026-05-21T23:59:59Z
  braid cron backfill daily-job --from 2026-05-01 --to 2026-05-31 --parallel --argname date --format 2006-01-02`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.start == "" {
				return errors.New("--start (or --from) is required")
			}
			if f.maxCount <= 0 {
				return fmt.Errorf("--maxworkflowcount must be positive, not %d", f.maxCount)
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return runBackfill(ctx, s, sess, args[0], f)
			})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.start, "start", "", "the first time to backfill (inclusive)")
	fs.StringVar(&f.start, "from", "", "the same as --start")
	fs.StringVar(&f.end, "end", "", "the last time to backfill (inclusive; default now)")
	fs.StringVar(&f.end, "to", "", "the same as --end")
	fs.StringVar(&f.argName, "argname", cronsched.DefaultBackfillArgName, "the workflow parameter that receives the scheduled time (\"\" for none)")
	fs.StringVar(&f.format, "format", cronsched.DefaultBackfillFormat, "Go time layout of the --argname value")
	fs.StringVar(&f.name, "name", "", "the backfill's name: workflows are named <name>-<unix time> (default <cron>-backfill)")
	fs.BoolVar(&f.parallel, "parallel", false, "create every workflow at once rather than one after the other")
	fs.IntVar(&f.maxCount, "maxworkflowcount", 1000, "refuse a range with more scheduled times than this")
	return cmd
}

// runBackfill creates the backfill of the named cron workflow.
func runBackfill(ctx context.Context, s streams, sess *session, name string, f backfillFlags) error {
	cw, err := sess.CronWorkflow.GetCronWorkflow(ctx, &cronworkflow.GetCronWorkflowRequest{Name: name, Namespace: sess.namespace})
	if err != nil {
		return err
	}
	times, loc, err := f.plan(cw, time.Now(), time.Local)
	if err != nil {
		return err
	}
	if !f.parallel && sess.direct {
		return fmt.Errorf("a backfill without --parallel waits for each workflow, and no server runs workflows on %s: start `braid server` there, or use --parallel", sess.dataDir)
	}
	for _, t := range times {
		wf, err := f.workflow(cw, t, loc)
		if err != nil {
			return err
		}
		created, err := createBackfillRun(ctx, s, sess, wf, t)
		if err != nil {
			return err
		}
		if f.parallel || !created {
			continue
		}
		if err := waitBackfillRun(ctx, s, sess, wf.Name); err != nil {
			return err
		}
	}
	return nil
}

// plan parses the range and lists the scheduled times in it, with the
// zone the times are read and written in.
func (f backfillFlags) plan(cw *v1alpha1.CronWorkflow, now time.Time, local *time.Location) ([]time.Time, *time.Location, error) {
	loc, err := cronsched.BackfillLocation(cw, local)
	if err != nil {
		return nil, nil, err
	}
	start, end, err := cronsched.ParseBackfillRange("--start", f.start, "--end", f.end, now, loc)
	if err != nil {
		return nil, nil, err
	}
	times, err := cronsched.BackfillTimes(cw, start, end, f.maxCount, loc)
	if errors.Is(err, cronsched.ErrBackfillTooMany) {
		return nil, nil, fmt.Errorf("%w: narrow the range or raise --maxworkflowcount", err)
	}
	if err != nil {
		return nil, nil, err
	}
	return times, loc, nil
}

// workflow is the backfill run of cw for t.
func (f backfillFlags) workflow(cw *v1alpha1.CronWorkflow, t time.Time, loc *time.Location) (*v1alpha1.Workflow, error) {
	return cronsched.BackfillWorkflow(cw, t, cronsched.BackfillOptions{Name: f.name, ArgName: f.argName, Format: f.format, Location: loc})
}

// createBackfillRun creates wf; false means it already existed.
func createBackfillRun(ctx context.Context, s streams, sess *session, wf *v1alpha1.Workflow, t time.Time) (bool, error) {
	_, err := sess.Workflow.CreateWorkflow(ctx, &workflow.WorkflowCreateRequest{Namespace: sess.namespace, Workflow: wf, CreateOptions: &metav1.CreateOptions{}})
	if status.Code(err) == codes.AlreadyExists {
		fmt.Fprintf(s.out, "Workflow %s already exists (scheduled %s): skipped\n", wf.Name, t.Format(time.RFC3339))
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("failed to create the backfill workflow %s: %w", wf.Name, err)
	}
	fmt.Fprintf(s.out, "Workflow %s created (scheduled %s)\n", wf.Name, t.Format(time.RFC3339))
	return true, nil
}

// waitBackfillRun waits for a run and fails unless it succeeded.
func waitBackfillRun(ctx context.Context, s streams, sess *session, name string) error {
	var last *v1alpha1.Workflow
	err := followWorkflow(ctx, sess, name, func(wf *v1alpha1.Workflow) bool {
		last = wf
		return finished(wf)
	})
	if err != nil {
		return fmt.Errorf("wait for %s: %w", name, err)
	}
	fmt.Fprintln(s.out, printer.WaitLine(last))
	if last.Status.Phase != v1alpha1.WorkflowSucceeded {
		return fmt.Errorf("backfill stopped: workflow %s ended %s", name, last.Status.Phase)
	}
	return nil
}
