package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	cronsched "github.com/braidwf/braid/internal/controller/cron"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Bounds of BackfillCronWorkflow's maxWorkflowCount: the default, and the
// most one call may create, so that one request cannot flood the store.
const (
	backfillDefaultMax = 1000
	backfillCap        = 10000
)

// BackfillCronWorkflow is braid's own: one workflow per time the cron
// workflow's schedules fire in [start, end], all created at once (the
// CLI's --parallel; its one-at-a-time mode waits client-side). Each is
// admitted as CreateWorkflow admits a workflow; a name that exists is
// skipped, so a backfill that failed part way resumes when run again.
func (s *cronServer) BackfillCronWorkflow(ctx context.Context, req *cronworkflow.BackfillCronWorkflowRequest) (*cronworkflow.BackfillCronWorkflowResponse, error) {
	ns := req.GetNamespace()
	if ns == "" {
		ns = defaultNamespace
	}
	limit, err := checkBackfillRequest(req)
	if err != nil {
		return nil, err
	}
	obj, err := s.crud.get(ctx, ns, req.GetName())
	if err != nil {
		return nil, err
	}
	cw, ok := obj.(*v1alpha1.CronWorkflow)
	if !ok {
		return nil, status.Errorf(codes.Internal, "store returned %T for a CronWorkflow", obj)
	}
	times, loc, err := backfillTimes(cw, req, limit)
	if err != nil {
		return nil, err
	}
	res := &cronworkflow.BackfillCronWorkflowResponse{}
	for _, t := range times {
		res.ScheduledTimes = append(res.ScheduledTimes, t.Format(time.RFC3339))
	}
	format := req.GetFormat()
	if format == "" {
		format = cronsched.DefaultBackfillFormat
	}
	opts := cronsched.BackfillOptions{Name: req.GetBackfillName(), ArgName: req.GetArgName(), Format: format, Location: loc}
	if err := s.createBackfill(ctx, ns, cw, times, opts, req.GetDryRun(), res); err != nil {
		return nil, err
	}
	if !req.GetDryRun() {
		s.crud.log.Info("cron workflow backfilled", "namespace", ns, "name", cw.Name,
			"times", len(times), "created", len(res.Created), "skipped", len(res.Skipped))
	}
	return res, nil
}

// checkBackfillRequest checks the fields that need no cron workflow and
// returns the count bound.
func checkBackfillRequest(req *cronworkflow.BackfillCronWorkflowRequest) (int, error) {
	if req.GetName() == "" {
		return 0, status.Error(codes.InvalidArgument, "name is required")
	}
	if strings.TrimSpace(req.GetStart()) == "" {
		return 0, status.Error(codes.InvalidArgument, "start is required")
	}
	limit := int(req.GetMaxWorkflowCount())
	switch {
	case limit == 0:
		limit = backfillDefaultMax
	case limit < 0:
		return 0, status.Errorf(codes.InvalidArgument, "maxWorkflowCount must be positive, not %d", limit)
	case limit > backfillCap:
		return 0, status.Errorf(codes.InvalidArgument, "maxWorkflowCount %d is over the server's limit of %d", limit, backfillCap)
	}
	if a := req.GetArgName(); strings.Contains(a, "=") || strings.TrimSpace(a) != a {
		return 0, status.Errorf(codes.InvalidArgument, "argName %q is not a parameter name", a)
	}
	if n := req.GetBackfillName(); n != "" {
		// The longest name it gives: a ten-digit Unix time follows it.
		if msgs := apivalidation.NameIsDNSSubdomain(n+"-0000000000", false); len(msgs) > 0 {
			return 0, status.Errorf(codes.InvalidArgument, "backfillName %q cannot prefix workflow names: %s", n, strings.Join(msgs, "; "))
		}
	}
	return limit, nil
}

// backfillTimes parses the request's range in the cron workflow's zone
// (the server's when it has none, as the scheduler reads it) and lists
// the times in it.
func backfillTimes(cw *v1alpha1.CronWorkflow, req *cronworkflow.BackfillCronWorkflowRequest, limit int) ([]time.Time, *time.Location, error) {
	loc, err := cronsched.BackfillLocation(cw, time.Local)
	if err != nil {
		return nil, nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	start, end, err := cronsched.ParseBackfillRange("start", req.GetStart(), "end", req.GetEnd(), time.Now(), loc)
	if err != nil {
		return nil, nil, status.Error(codes.InvalidArgument, err.Error())
	}
	times, err := cronsched.BackfillTimes(cw, start, end, limit, loc)
	switch {
	case errors.Is(err, cronsched.ErrBackfillTooMany):
		return nil, nil, status.Errorf(codes.InvalidArgument, "%v: narrow the range (start, end) or raise maxWorkflowCount (at most %d)", err, backfillCap)
	case errors.Is(err, cronsched.ErrBackfillEmpty):
		return nil, nil, status.Errorf(codes.InvalidArgument, "%v: widen the range (start, end)", err)
	case err != nil: // the stored cron workflow's schedules are invalid
		return nil, nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	return times, loc, nil
}

// createBackfill admits and creates the workflow of each time, recording
// it in res as created or skipped. A dry run admits the first only (the
// others differ from it in name and parameter value) and creates nothing.
func (s *cronServer) createBackfill(ctx context.Context, ns string, cw *v1alpha1.CronWorkflow, times []time.Time,
	opts cronsched.BackfillOptions, dryRun bool, res *cronworkflow.BackfillCronWorkflowResponse) error {
	wfs := &workflowServer{store: s.crud.store, log: s.crud.log}
	for _, t := range times {
		wf, err := cronsched.BackfillWorkflow(cw, t, opts)
		if err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
		name := wf.Name
		if wf, err = wfs.admit(ctx, ns, wf); err != nil {
			return backfillFailed(err, name, res)
		}
		if dryRun {
			return nil
		}
		if err := wfs.expand(ctx, wf); err != nil {
			return backfillFailed(err, wf.Name, res)
		}
		err = wfs.createNamed(ctx, wf, nil)
		switch status.Code(err) {
		case codes.OK:
			res.Created = append(res.Created, wf.Name)
		case codes.AlreadyExists:
			res.Skipped = append(res.Skipped, wf.Name)
		default:
			return backfillFailed(err, wf.Name, res)
		}
	}
	return nil
}

// backfillFailed is err, with its code, naming the workflow it stopped at
// and what had been created before it.
func backfillFailed(err error, name string, res *cronworkflow.BackfillCronWorkflowResponse) error {
	st := status.Convert(err)
	msg := "backfill: " + st.Message() // admit's messages name the workflow
	if !strings.Contains(msg, name) {
		msg = fmt.Sprintf("backfill workflow %s: %s", name, st.Message())
	}
	if n := len(res.Created); n > 0 {
		msg += fmt.Sprintf(" (%d created before it: run the backfill again to resume)", n)
	}
	return status.Error(st.Code(), msg)
}
