package cron

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestParseBackfillTime(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	for _, tc := range []struct {
		in   string
		loc  *time.Location
		want string // RFC 3339 in UTC; "" for an error
	}{
		{"2026-05-19T02:00:00Z", ny, "2026-05-19T02:00:00Z"},
		{"2026-05-19T02:00:00.5+02:00", ny, "2026-05-19T00:00:00Z"}, // fraction dropped by the format below
		{"2026-05-19", time.UTC, "2026-05-19T00:00:00Z"},
		{"2026-05-19", ny, "2026-05-19T04:00:00Z"},
		{"  2026-05-19 15:04  ", time.UTC, "2026-05-19T15:04:00Z"},
		{"2026-05-19 15:04:05", ny, "2026-05-19T19:04:05Z"},
		{"2026-05-19T15:04", ny, "2026-05-19T19:04:00Z"},
		{"2026-05-19T15:04:05", time.UTC, "2026-05-19T15:04:05Z"},
		{"Tue, 19 May 2026 00:00:00 UTC", ny, "2026-05-19T00:00:00Z"},
		{"Tue, 19 May 2026 00:00:00 -0500", time.UTC, "2026-05-19T05:00:00Z"},
		{"yesterday", time.UTC, ""},
		{"", time.UTC, ""},
		{"2026-13-01", time.UTC, ""},
	} {
		got, err := ParseBackfillTime("start", tc.in, tc.loc)
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), `start "`) {
				t.Errorf("%q: err = %v, want one naming start", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if s := got.UTC().Format(time.RFC3339); s != tc.want {
			t.Errorf("%q = %s, want %s", tc.in, s, tc.want)
		}
	}
}

func TestParseBackfillRange(t *testing.T) {
	now := time.Date(2026, 5, 22, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, start, end string
		want             string // "start end" in RFC 3339, or the error
	}{
		{"end defaults to now", "2026-05-20", "", "2026-05-20T00:00:00Z 2026-05-22T12:00:00Z"},
		{"equal", "2026-05-20", "2026-05-20", "2026-05-20T00:00:00Z 2026-05-20T00:00:00Z"},
		{"before", "2026-05-21", "2026-05-20", "to 2026-05-20T00:00:00Z is before from 2026-05-21T00:00:00Z"},
		{"bad start", "soon", "", `from "soon" is not a time`},
		{"bad end", "2026-05-20", "later", `to "later" is not a time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, err := ParseBackfillRange("from", tc.start, "to", tc.end, now, time.UTC)
			got := a.Format(time.RFC3339) + " " + b.Format(time.RFC3339)
			if err != nil {
				got = err.Error()
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBackfillTimes(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ny := mustZone(t, "America/New_York")
	for _, tc := range []struct {
		name       string
		spec       v1alpha1.CronWorkflowSpec
		loc        *time.Location
		start, end string
		max        int
		want       []string // RFC 3339 in UTC
		err        error
	}{
		{"both ends included", v1alpha1.CronWorkflowSpec{Schedules: []string{"0 2 * * *"}}, time.UTC,
			"2026-05-19T02:00:00Z", "2026-05-21T02:00:00Z", 10,
			[]string{"2026-05-19T02:00:00Z", "2026-05-20T02:00:00Z", "2026-05-21T02:00:00Z"}, nil},
		{"exactly max", v1alpha1.CronWorkflowSpec{Schedules: []string{"0 2 * * *"}}, time.UTC,
			"2026-05-19T02:00:00Z", "2026-05-21T02:00:00Z", 3,
			[]string{"2026-05-19T02:00:00Z", "2026-05-20T02:00:00Z", "2026-05-21T02:00:00Z"}, nil},
		{"one over max", v1alpha1.CronWorkflowSpec{Schedules: []string{"0 2 * * *"}}, time.UTC,
			"2026-05-19T02:00:00Z", "2026-05-21T02:00:00Z", 2, nil, ErrBackfillTooMany},
		{"merged and sorted, legacy schedule too", v1alpha1.CronWorkflowSpec{Schedule: "30 * * * *", Schedules: []string{"0 * * * *", "0 */2 * * *"}}, time.UTC,
			"2026-05-19T00:00:00Z", "2026-05-19T01:30:00Z", 10,
			[]string{"2026-05-19T00:00:00Z", "2026-05-19T00:30:00Z", "2026-05-19T01:00:00Z", "2026-05-19T01:30:00Z"}, nil},
		{"the cron's timezone", v1alpha1.CronWorkflowSpec{Schedules: []string{"0 2 * * *"}, Timezone: "America/New_York"}, time.UTC,
			"2026-05-20T00:00:00Z", "2026-05-21T00:00:00Z", 10, []string{"2026-05-20T06:00:00Z"}, nil},
		{"the local zone without one", v1alpha1.CronWorkflowSpec{Schedules: []string{"0 2 * * *"}}, ny,
			"2026-05-20T00:00:00Z", "2026-05-21T00:00:00Z", 10, []string{"2026-05-20T06:00:00Z"}, nil},
		{"a schedule's own zone wins", v1alpha1.CronWorkflowSpec{Schedules: []string{"CRON_TZ=UTC 0 2 * * *"}, Timezone: "America/New_York"}, ny,
			"2026-05-20T00:00:00Z", "2026-05-21T00:00:00Z", 10, []string{"2026-05-20T02:00:00Z"}, nil},
		{"none in range", v1alpha1.CronWorkflowSpec{Schedules: []string{"0 2 * * *"}}, time.UTC,
			"2026-05-19T03:00:00Z", "2026-05-19T04:00:00Z", 10, nil, ErrBackfillEmpty},
		{"bad schedule", v1alpha1.CronWorkflowSpec{Schedules: []string{"not a schedule"}}, time.UTC,
			"2026-05-19T03:00:00Z", "2026-05-19T04:00:00Z", 10, nil, errors.New("invalid cron schedule")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cw := &v1alpha1.CronWorkflow{ObjectMeta: metav1.ObjectMeta{Name: "daily"}, Spec: tc.spec}
			times, err := BackfillTimes(cw, at(tc.start), at(tc.end), tc.max, tc.loc)
			if tc.err != nil {
				if err == nil || !(errors.Is(err, tc.err) || strings.Contains(err.Error(), tc.err.Error())) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range times {
				got = append(got, x.UTC().Format(time.RFC3339))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("times = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBackfillLocation(t *testing.T) {
	cw := &v1alpha1.CronWorkflow{ObjectMeta: metav1.ObjectMeta{Name: "daily"}}
	if loc, err := BackfillLocation(cw, time.UTC); err != nil || loc != time.UTC {
		t.Fatalf("no timezone: %v %v", loc, err)
	}
	cw.Spec.Timezone = "America/New_York"
	if loc, err := BackfillLocation(cw, time.UTC); err != nil || loc.String() != "America/New_York" {
		t.Fatalf("timezone: %v %v", loc, err)
	}
	cw.Spec.Timezone = "Mars/Olympus"
	if _, err := BackfillLocation(cw, time.UTC); err == nil || !strings.Contains(err.Error(), "invalid timezone") {
		t.Fatalf("bad timezone: %v", err)
	}
}

func TestBackfillWorkflow(t *testing.T) {
	cw := &v1alpha1.CronWorkflow{ObjectMeta: metav1.ObjectMeta{Name: "daily", Namespace: "ns", UID: "u1"}}
	cw.Spec.WorkflowSpec.Entrypoint = "main"
	cw.Spec.WorkflowMetadata = &metav1.ObjectMeta{Labels: map[string]string{"team": "a"}}
	at := time.Date(2026, 5, 19, 2, 0, 0, 0, time.UTC)
	ny := mustZone(t, "America/New_York")
	for _, tc := range []struct {
		name     string
		opts     BackfillOptions
		wantName string
		param    string // "name=value", "" for none
	}{
		{"defaults", BackfillOptions{Format: DefaultBackfillFormat}, "daily-backfill-1779156000", ""},
		{"named, parameter in UTC", BackfillOptions{Name: "redo", ArgName: "date", Format: "2006-01-02"}, "redo-1779156000", "date=2026-05-19"},
		{"parameter in the cron's zone", BackfillOptions{ArgName: DefaultBackfillArgName, Format: "2006-01-02 15:04", Location: ny},
			"daily-backfill-1779156000", "cronScheduleTime=2026-05-18 22:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wf, err := BackfillWorkflow(cw, at, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if wf.Name != tc.wantName || wf.Namespace != "" {
				t.Errorf("name %s/%s, want /%s", wf.Namespace, wf.Name, tc.wantName)
			}
			if wf.Labels[LabelBackfill] != "daily" || wf.Labels[spec.LabelCronWorkflow] != "" || wf.Labels["team"] != "a" {
				t.Errorf("labels %v", wf.Labels)
			}
			if wf.Annotations[spec.AnnotationScheduledTime] != "2026-05-19T02:00:00Z" {
				t.Errorf("annotations %v", wf.Annotations)
			}
			if wf.Spec.Entrypoint != "main" || len(wf.OwnerReferences) != 1 {
				t.Errorf("spec %+v owners %v", wf.Spec, wf.OwnerReferences)
			}
			var got string
			if p := wf.Spec.Arguments.Parameters; len(p) == 1 {
				got = p[0].Name + "=" + p[0].Value.String()
			} else if len(p) > 1 {
				t.Fatalf("parameters %+v", p)
			}
			if got != tc.param {
				t.Errorf("parameter %q, want %q", got, tc.param)
			}
		})
	}
	if _, err := BackfillWorkflow(cw, at, BackfillOptions{ArgName: "=x"}); err == nil {
		t.Error("an argName without a name was accepted")
	}
	if cw.Spec.WorkflowSpec.Arguments.Parameters != nil {
		t.Error("the cron workflow's spec was changed")
	}
}
