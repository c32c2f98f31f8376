package cron

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// A backfill is one workflow for each time a CronWorkflow's schedules fire
// in a range: what `braid cron backfill` and the server's
// BackfillCronWorkflow create. The scheduler itself never backfills.

// LabelBackfill marks a backfilled workflow with the cron workflow it was
// made from. Backfilled workflows do not carry the cron-workflow label, so
// the scheduler neither counts them nor deletes them for its history limits.
const LabelBackfill = "braid.dev/cron-backfill"

// Defaults of a backfill's workflow parameter (Argo's `cron backfill`).
const (
	DefaultBackfillArgName = "cronScheduleTime"
	DefaultBackfillFormat  = time.RFC1123
)

// ErrBackfillTooMany and ErrBackfillEmpty are wrapped by BackfillTimes, so
// that a caller can add its own advice (the flag or field to change).
var (
	ErrBackfillTooMany = errors.New("too many scheduled times")
	ErrBackfillEmpty   = errors.New("no scheduled time")
)

// backfillError is a message that unwraps to one of the errors above
// without repeating it.
type backfillError struct {
	kind error
	msg  string
}

func (e backfillError) Error() string { return e.msg }
func (e backfillError) Unwrap() error { return e.kind }

// BackfillOptions shape the workflow made for each time.
type BackfillOptions struct {
	// Name prefixes the workflow names: <Name>-<unix seconds>; "" is
	// <cron>-backfill.
	Name string
	// ArgName is the workflow parameter set to the scheduled time; ""
	// sets none.
	ArgName string
	// Format is the Go time layout of the parameter's value.
	Format string
	// Location is the zone the parameter's value is written in (the cron
	// workflow's, BackfillLocation); nil is UTC.
	Location *time.Location
}

// BackfillLocation is the zone a backfill of cw reads zone-less times and
// writes its parameter in: spec.timezone, else local (the zone the
// scheduler reads the schedules in).
func BackfillLocation(cw *v1alpha1.CronWorkflow, local *time.Location) (*time.Location, error) {
	if cw.Spec.Timezone == "" {
		return local, nil
	}
	loc, err := time.LoadLocation(cw.Spec.Timezone)
	if err != nil {
		return nil, fmt.Errorf("cron workflow %s: invalid timezone %q: %w", cw.Name, cw.Spec.Timezone, err)
	}
	return loc, nil
}

// backfillLayouts are the forms a start or end may take; those without a
// zone are read in the cron workflow's.
var backfillLayouts = []string{
	time.RFC3339Nano, time.RFC1123Z, time.RFC1123, "2006-01-02T15:04:05", "2006-01-02 15:04:05",
	"2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02",
}

// ParseBackfillTime reads v, a start or end of a backfill given as field
// (a flag or a request field, for the message): RFC 3339, RFC 1123, or a
// date with an optional time, the zone-less forms in loc.
func ParseBackfillTime(field, v string, loc *time.Location) (time.Time, error) {
	v = strings.TrimSpace(v)
	for _, layout := range backfillLayouts {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%s %q is not a time: use RFC 3339 (2026-01-02T15:04:05Z), 2026-01-02, 2026-01-02 15:04 or RFC 1123", field, v)
}

// ParseBackfillRange parses a backfill's start and end (end "" is now),
// named startField and endField in messages, and checks their order.
func ParseBackfillRange(startField, start, endField, end string, now time.Time, loc *time.Location) (time.Time, time.Time, error) {
	from, err := ParseBackfillTime(startField, start, loc)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	to := now
	if end != "" {
		if to, err = ParseBackfillTime(endField, end, loc); err != nil {
			return time.Time{}, time.Time{}, err
		}
	}
	if to.Before(from) {
		return time.Time{}, time.Time{}, fmt.Errorf("%s %s is before %s %s",
			endField, to.Format(time.RFC3339), startField, from.Format(time.RFC3339))
	}
	return from, to, nil
}

// BackfillTimes lists the times in [start, end], both included, at which
// cw's schedules fire, oldest first, reading schedules without a zone of
// their own in loc (BackfillLocation). None, or more than limit, is an
// error wrapping ErrBackfillEmpty or ErrBackfillTooMany.
func BackfillTimes(cw *v1alpha1.CronWorkflow, start, end time.Time, limit int, loc *time.Location) ([]time.Time, error) {
	scheds, err := spec.ParseCronSchedules(&cw.Spec, loc)
	if err != nil {
		return nil, fmt.Errorf("cron workflow %s: %w", cw.Name, err)
	}
	// ScheduledTimes is (a, b]: start one instant early to include start.
	times := ScheduledTimes(scheds, start.Add(-time.Nanosecond), end, limit)
	switch {
	case len(times) == 0:
		return nil, backfillError{ErrBackfillEmpty, fmt.Sprintf("the schedules of %s (%s) do not fire between %s and %s",
			cw.Name, strings.Join(spec.CronSchedules(&cw.Spec), ","), start.Format(time.RFC3339), end.Format(time.RFC3339))}
	case len(times) > limit:
		return nil, backfillError{ErrBackfillTooMany, fmt.Sprintf("more than %d scheduled times between %s and %s",
			limit, start.Format(time.RFC3339), end.Format(time.RFC3339))}
	}
	return times, nil
}

// BackfillWorkflow is the backfill run of cw for the scheduled time t: the
// workflow the scheduler would create (spec.WorkflowFromCron), renamed
// <prefix>-<unix seconds>, labelled LabelBackfill instead of the
// cron-workflow label, with the parameter o.ArgName set to t formatted. Its
// namespace is left empty for the caller (the API's path) to give.
func BackfillWorkflow(cw *v1alpha1.CronWorkflow, t time.Time, o BackfillOptions) (*v1alpha1.Workflow, error) {
	wf := spec.WorkflowFromCron(cw, t)
	delete(wf.Labels, spec.LabelCronWorkflow)
	wf.Labels[LabelBackfill] = cw.Name
	wf.Name = spec.CronRunName(BackfillPrefix(cw, o.Name), t)
	wf.Namespace = ""
	if o.ArgName != "" {
		loc := o.Location
		if loc == nil {
			loc = time.UTC
		}
		p := o.ArgName + "=" + t.In(loc).Format(o.Format)
		if err := spec.ApplySubmitOptions(wf, spec.SubmitOptions{Parameters: []string{p}}); err != nil {
			return nil, err
		}
	}
	return wf, nil
}

// BackfillPrefix is the prefix of a backfill's workflow names: name, or
// <cron>-backfill when it is "".
func BackfillPrefix(cw *v1alpha1.CronWorkflow, name string) string {
	if name == "" {
		return cw.Name + "-backfill"
	}
	return name
}
