package cli

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestBackfillPlan(t *testing.T) {
	now := time.Date(2026, 5, 22, 12, 0, 0, 0, time.UTC)
	daily := v1alpha1.CronWorkflowSpec{Schedules: []string{"0 2 * * *"}}
	ny := v1alpha1.CronWorkflowSpec{Schedules: []string{"0 2 * * *"}, Timezone: "America/New_York"}
	for _, tc := range []struct {
		name       string
		spec       v1alpha1.CronWorkflowSpec
		start, end string
		max        int
		want       []string // RFC 3339 in UTC
		err        string
	}{
		{"days inclusive", daily, "2026-05-19T02:00:00Z", "2026-05-21T02:00:00Z", 10,
			[]string{"2026-05-19T02:00:00Z", "2026-05-20T02:00:00Z", "2026-05-21T02:00:00Z"}, ""},
		{"date only, end defaults to now", daily, "2026-05-21", "", 10,
			[]string{"2026-05-21T02:00:00Z", "2026-05-22T02:00:00Z"}, ""},
		{"zone-less in the cron's timezone", ny, "2026-05-20 00:00", "2026-05-20 23:59", 10,
			[]string{"2026-05-20T06:00:00Z"}, ""},
		{"RFC 1123", daily, "Tue, 19 May 2026 00:00:00 UTC", "2026-05-19T23:00", 10, []string{"2026-05-19T02:00:00Z"}, ""},
		{"bad time", daily, "yesterday", "", 10, nil, `--start "yesterday" is not a time`},
		{"end before start", daily, "2026-05-21", "2026-05-19", 10, nil, "is before --start"},
		{"too many", daily, "2026-01-01", "2026-05-01", 30, nil, "more than 30 scheduled times"},
		{"none in range", daily, "2026-05-19T03:00:00Z", "2026-05-19T04:00:00Z", 10, nil, "do not fire between"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cw := &v1alpha1.CronWorkflow{ObjectMeta: metav1.ObjectMeta{Name: "daily"}, Spec: tc.spec}
			f := backfillFlags{start: tc.start, end: tc.end, maxCount: tc.max}
			times, _, err := f.plan(cw, now, time.UTC)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
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

func TestBackfillWorkflow(t *testing.T) {
	cw := &v1alpha1.CronWorkflow{ObjectMeta: metav1.ObjectMeta{Name: "daily", Namespace: "ns"}}
	cw.Spec.WorkflowSpec.Entrypoint = "main"
	at := time.Date(2026, 5, 19, 2, 0, 0, 0, time.UTC)
	f := backfillFlags{argName: "date", format: "2006-01-02", name: "redo"}
	wf, err := f.workflow(cw, at, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	p := wf.Spec.Arguments.Parameters
	if wf.Name != "redo-1779156000" || wf.Labels[labelBackfill] != "daily" || wf.Labels[spec.LabelCronWorkflow] != "" ||
		wf.Annotations[spec.AnnotationScheduledTime] != "2026-05-19T02:00:00Z" ||
		len(p) != 1 || p[0].Name != "date" || p[0].Value.String() != "2026-05-19" {
		t.Fatalf("workflow: name %s labels %v annotations %v parameters %+v", wf.Name, wf.Labels, wf.Annotations, p)
	}
	f = backfillFlags{format: time.RFC1123}
	if wf, _ = f.workflow(cw, at, time.UTC); wf.Name != "daily-backfill-1779156000" || len(wf.Spec.Arguments.Parameters) != 0 {
		t.Fatalf("defaults: name %s parameters %+v", wf.Name, wf.Spec.Arguments.Parameters)
	}
}
