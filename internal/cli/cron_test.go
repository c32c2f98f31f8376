package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// cronNow is the fixed clock of the cron tests.
var cronNow = time.Date(2026, 11, 30, 12, 0, 30, 0, time.UTC)

func TestNextRun(t *testing.T) {
	plusOne := time.FixedZone("plus-one", 3600)
	tests := []struct {
		name string
		spec v1alpha1.CronWorkflowSpec
		loc  *time.Location
		want time.Time
		ok   bool
	}{
		{"every 5 minutes", v1alpha1.CronWorkflowSpec{Schedules: []string{"*/5 * * * *"}}, time.UTC,
			time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC), true},
		{"legacy schedule", v1alpha1.CronWorkflowSpec{Schedule: "0 * * * *"}, time.UTC,
			time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC), true},
		{"earliest of several", v1alpha1.CronWorkflowSpec{Schedules: []string{"0 13 * * *", "30 12 * * *"}}, time.UTC,
			time.Date(2026, 11, 30, 12, 30, 0, 0, time.UTC), true},
		// 12:00:30 UTC is 07:00:30 in New York (EST): 09:00 there is 14:00 UTC.
		{"timezone", v1alpha1.CronWorkflowSpec{Schedules: []string{"0 9 * * *"}, Timezone: "America/New_York"}, time.UTC,
			time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC), true},
		// Without a timezone the local zone counts: 13:00 at +01:00 has just passed.
		{"local zone", v1alpha1.CronWorkflowSpec{Schedules: []string{"0 13 * * *"}}, plusOne,
			time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), true},
		{"CRON_TZ prefix wins", v1alpha1.CronWorkflowSpec{Schedules: []string{"CRON_TZ=UTC 0 13 * * *"}}, plusOne,
			time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC), true},
		{"descriptor", v1alpha1.CronWorkflowSpec{Schedules: []string{"@daily"}}, time.UTC,
			time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), true},
		{"bad schedule", v1alpha1.CronWorkflowSpec{Schedules: []string{"61 * * * *"}}, time.UTC, time.Time{}, false},
		{"bad timezone", v1alpha1.CronWorkflowSpec{Schedules: []string{"* * * * *"}, Timezone: "Mars/Base"}, time.UTC, time.Time{}, false},
		{"no schedule", v1alpha1.CronWorkflowSpec{}, time.UTC, time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := nextRun(&tt.spec, cronNow, tt.loc)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok %v", err, tt.ok)
			}
			if !got.Equal(tt.want) {
				t.Fatalf("next = %v, want %v", got, tt.want)
			}
		})
	}
}

func cronFixture() []v1alpha1.CronWorkflow {
	yes := true
	last := metav1.NewTime(cronNow.Add(-3 * time.Hour))
	return []v1alpha1.CronWorkflow{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "hello-cron", Namespace: "argo", CreationTimestamp: metav1.NewTime(cronNow.Add(-48 * time.Hour))},
			Spec:       v1alpha1.CronWorkflowSpec{Schedules: []string{"*/5 * * * *", "0 13 * * *"}},
			Status:     v1alpha1.CronWorkflowStatus{LastScheduledTime: &last},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "default", CreationTimestamp: metav1.NewTime(cronNow.Add(-90 * time.Second))},
			Spec:       v1alpha1.CronWorkflowSpec{Schedule: "0 9 * * *", Timezone: "America/New_York", Suspend: &yes},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: "argo", CreationTimestamp: metav1.NewTime(cronNow)},
			Spec:       v1alpha1.CronWorkflowSpec{Schedules: []string{"nope"}},
		},
	}
}

func TestCronList(t *testing.T) {
	tests := []struct {
		name string
		all  bool
		want string
	}{
		{"namespace", false, `NAME         AGE   LAST RUN   NEXT RUN   SCHEDULES                TIMEZONE           SUSPENDED
hello-cron   2d    3h         4m         */5 * * * *,0 13 * * *                      false
nightly      1m    N/A        1h         0 9 * * *                America/New_York   true
broken       0s    N/A        N/A        nope                                        false
`},
		{"all namespaces", true, `NAMESPACE   NAME         AGE   LAST RUN   NEXT RUN   SCHEDULES                TIMEZONE           SUSPENDED
argo        hello-cron   2d    3h         4m         */5 * * * *,0 13 * * *                      false
default     nightly      1m    N/A        1h         0 9 * * *                America/New_York   true
argo        broken       0s    N/A        N/A        nope                                        false
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeCronList(&b, cronFixture(), tt.all, cronNow, time.UTC); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Fatalf("got:\n%s\nwant:\n%s", b.String(), tt.want)
			}
		})
	}
}

func TestCronView(t *testing.T) {
	cw := cronFixture()[1]
	cw.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
	v := v1alpha1.AnyString("hi")
	cw.Spec.WorkflowSpec.Arguments.Parameters = []v1alpha1.Parameter{{Name: "message", Value: &v}}
	cw.Status.Conditions = v1alpha1.Conditions{{Type: "SubmissionError", Message: "boom"}}
	got := cronView(&cw, cronNow, time.UTC)
	want := `Name:                          nightly
Namespace:                     default
Created:                       Mon Nov 30 11:59:00 +0000 (1 minute ago)
Schedules:                     0 9 * * *
Suspended:                     true
Timezone:                      America/New_York
ConcurrencyPolicy:             Forbid
NextScheduledTime:             Mon Nov 30 14:00:00 +0000 (1 hour from now) (assumes workflow-controller is in UTC)
Conditions:                    
✖ SubmissionError              boom
Workflow Parameters:           
  message:                     hi
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestCronCreateFlags(t *testing.T) {
	cw := &v1alpha1.CronWorkflow{ObjectMeta: metav1.ObjectMeta{GenerateName: "c-"},
		Spec: v1alpha1.CronWorkflowSpec{Schedule: "0 * * * *", WorkflowSpec: v1alpha1.WorkflowSpec{Entrypoint: "main"}}}
	f := cronCreateFlags{schedule: "*/2 * * * *", name: "fixed", entrypoint: "other", labels: "a=b",
		parameters: []string{"x=1"}, serviceAccount: "robot"}
	if err := f.apply(cw); err != nil {
		t.Fatal(err)
	}
	ws := cw.Spec.WorkflowSpec
	switch {
	case cw.Spec.Schedule != "" || strings.Join(cw.Spec.Schedules, ",") != "*/2 * * * *":
		t.Errorf("schedule %q / %v", cw.Spec.Schedule, cw.Spec.Schedules)
	case cw.Name != "fixed" || cw.GenerateName != "":
		t.Errorf("name %q generateName %q", cw.Name, cw.GenerateName)
	case ws.Entrypoint != "other" || ws.ServiceAccountName != "robot":
		t.Errorf("entrypoint %q serviceAccount %q", ws.Entrypoint, ws.ServiceAccountName)
	case len(ws.Arguments.Parameters) != 1 || ws.Arguments.Parameters[0].Value.String() != "1":
		t.Errorf("parameters %+v", ws.Arguments.Parameters)
	case cw.Spec.WorkflowMetadata == nil || cw.Spec.WorkflowMetadata.Labels["a"] != "b":
		t.Errorf("workflowMetadata %+v", cw.Spec.WorkflowMetadata)
	}
	if err := (cronCreateFlags{parameters: []string{"novalue"}}).apply(cw); err == nil {
		t.Error("a parameter without = was accepted")
	}
}

func TestHumanTimestamp(t *testing.T) {
	tests := []struct {
		at   time.Time
		want string
	}{
		{cronNow, "Mon Nov 30 12:00:30 +0000 (now)"},
		{cronNow.Add(-time.Second), "Mon Nov 30 12:00:29 +0000 (1 second ago)"},
		{cronNow.Add(-15*time.Minute - 5*time.Second), "Mon Nov 30 11:45:25 +0000 (15 minutes ago)"},
		{cronNow.Add(2 * time.Hour), "Mon Nov 30 14:00:30 +0000 (2 hours from now)"},
		{cronNow.Add(-10 * 24 * time.Hour), "Fri Nov 20 12:00:30 +0000 (1 week ago)"},
		{cronNow.Add(-400 * 24 * time.Hour), "Sun Oct 26 12:00:30 +0000 (1 year ago)"},
	}
	for _, tt := range tests {
		if got := humanTimestamp(tt.at, cronNow); got != tt.want {
			t.Errorf("humanTimestamp(%v) = %q, want %q", tt.at, got, tt.want)
		}
	}
}
