package cron

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// A schedule fires at its times, and each workflow carries Argo's name,
// label, annotation and the workflowMetadata; the status follows.
func TestScheduleCreatesWorkflows(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.createCron(cronYAML("every", `  schedules: ["*/2 * * * *"]
  workflowMetadata:
    labels: {team: a}
    annotations: {note: hi}`))
	h.advance(29 * time.Second) // 10:00:59: nothing due
	if got := h.runs("every"); len(got) != 0 {
		t.Fatalf("ran before its time: %v", got)
	}
	h.advance(time.Second) // 10:01:00: not a multiple of 2
	h.advance(time.Minute) // 10:02:00
	want := runName("every", 10, 2)
	if got := h.runs("every"); !equal(got, names(want)) {
		t.Fatalf("runs = %v, want [%s]", got, want)
	}
	wf := h.workflow(want)
	if wf.Labels[spec.LabelCronWorkflow] != "every" || wf.Labels["team"] != "a" || wf.Annotations["note"] != "hi" ||
		wf.Annotations[spec.AnnotationScheduledTime] != "2030-01-07T10:02:00Z" || wf.Spec.Entrypoint != "main" {
		t.Fatalf("workflow meta/spec: labels %v annotations %v entrypoint %q", wf.Labels, wf.Annotations, wf.Spec.Entrypoint)
	}
	cw := h.cron("every")
	if cw.Status.LastScheduledTime == nil || !cw.Status.LastScheduledTime.Time.Equal(h.clock.Now()) ||
		len(cw.Status.Active) != 1 || cw.Status.Active[0].Name != want || cw.Status.Phase != v1alpha1.ActivePhase {
		t.Fatalf("status: %+v", cw.Status)
	}
	h.advance(2 * time.Minute)
	if got := h.runs("every"); !equal(got, names(want, runName("every", 10, 4))) {
		t.Fatalf("runs = %v", got)
	}
	h.finish(want, v1alpha1.WorkflowSucceeded)
	cw = h.cron("every")
	if cw.Status.Succeeded != 1 || len(cw.Status.Active) != 1 || cw.Status.Active[0].Name != runName("every", 10, 4) {
		t.Fatalf("after one succeeded: %+v", cw.Status)
	}
}

// Legacy schedule with schedules, and a timezone: times are read in it.
func TestSchedulesAndTimezone(t *testing.T) {
	h := newHarness(t)
	h.start()
	// 05:03 and 05:05 (the legacy schedule) in New York (EST, UTC-5) are 10:03 and 10:05 UTC.
	h.createCron(cronYAML("tz", `  schedule: "5 5 * * *"
  schedules: ["3 5 * * *"]
  timezone: America/New_York`))
	h.createCron(cronYAML("utc", `  schedules: ["3 5 * * *"]`))
	h.advance(3 * time.Minute) // 10:03:30
	if got := h.runs("tz"); !equal(got, names(runName("tz", 10, 3))) {
		t.Fatalf("tz runs at 10:03 UTC = %v", got)
	}
	h.advance(2 * time.Minute) // 10:05:30
	if got := h.runs("tz"); !equal(got, names(runName("tz", 10, 3), runName("tz", 10, 5))) {
		t.Fatalf("tz runs at 10:05 = %v", got)
	}
	if got := h.runs("utc"); len(got) != 0 {
		t.Fatalf("a UTC 05:03 schedule ran at 10:0x: %v", got)
	}
}

// An invalid timezone or expression gets a SpecError condition and never
// creates anything; fixing the spec clears it.
func TestInvalidSpec(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"badtz", `  schedules: ["* * * * *"]
  timezone: Mars/Olympus`, `invalid timezone "Mars/Olympus"`},
		{"badexpr", `  schedules: ["61 * * * *"]`, `invalid cron schedule "61 * * * *"`},
		{"none", ``, `no schedule`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.start()
			h.createCron(cronYAML(tc.name, tc.spec))
			h.advance(time.Hour)
			if got := h.runs(tc.name); len(got) != 0 {
				t.Fatalf("created %v", got)
			}
			cw := h.cron(tc.name)
			if len(cw.Status.Conditions) != 1 || cw.Status.Conditions[0].Type != v1alpha1.ConditionTypeSpecError ||
				!strings.Contains(cw.Status.Conditions[0].Message, tc.want) {
				t.Fatalf("conditions = %+v, want SpecError %q", cw.Status.Conditions, tc.want)
			}
			cw.Spec.Timezone, cw.Spec.Schedules = "", []string{"* * * * *"}
			if err := h.st.Update(context.Background(), cw); err != nil {
				t.Fatal(err)
			}
			h.sync()
			h.advance(time.Minute)
			if cw := h.cron(tc.name); len(cw.Status.Conditions) != 0 || len(h.runs(tc.name)) != 1 {
				t.Fatalf("after the fix: conditions %+v runs %v", cw.Status.Conditions, h.runs(tc.name))
			}
		})
	}
}

// Allow runs beside an active workflow, Forbid skips while one is active,
// Replace terminates the active one and creates the new one.
func TestConcurrencyPolicy(t *testing.T) {
	first, second := runName("c", 10, 1), runName("c", 10, 2)
	for _, tc := range []struct {
		policy        string
		want          []string
		wantTerminate bool
	}{
		{"Allow", names(first, second), false},
		{"Forbid", names(first), false},
		{"Replace", names(first, second), true},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			h := newHarness(t)
			h.start()
			h.createCron(cronYAML("c", `  schedules: ["* * * * *"]
  concurrencyPolicy: `+tc.policy))
			h.advance(30 * time.Second)
			h.advance(time.Minute)
			if got := h.runs("c"); !equal(got, tc.want) {
				t.Fatalf("runs = %v, want %v", got, tc.want)
			}
			if got := h.workflow(first).Spec.Shutdown == v1alpha1.ShutdownTerminate; got != tc.wantTerminate {
				t.Fatalf("first terminated = %v, want %v", got, tc.wantTerminate)
			}
			active := h.cron("c").Status.Active
			if wantActive := len(tc.want); tc.wantTerminate {
				// the terminated one stays active until the controller ends it
				if len(active) != 2 {
					t.Fatalf("active = %v", active)
				}
			} else if len(active) != wantActive {
				t.Fatalf("active = %v, want %d", active, wantActive)
			}
			if tc.policy == "Forbid" { // once the active one ends, runs go on
				h.finish(first, v1alpha1.WorkflowFailed)
				h.advance(time.Minute)
				if got := h.runs("c"); !equal(got, names(first, runName("c", 10, 3))) {
					t.Fatalf("after the active one ended: %v", got)
				}
			}
		})
	}
}

// On start, the latest run missed since lastScheduledTime is run once when
// it is within startingDeadlineSeconds; older ones and crons without a
// deadline are not caught up.
func TestStartingDeadline(t *testing.T) {
	for _, tc := range []struct {
		name, deadline string
		down           time.Duration // from 10:01:00, while the scheduler is stopped
		caught         bool
	}{
		{"inside", "  startingDeadlineSeconds: 30", 4*time.Minute + 10*time.Second, true},
		{"outside", "  startingDeadlineSeconds: 5", 4*time.Minute + 10*time.Second, false},
		{"nodeadline", "", 4*time.Minute + 10*time.Second, false},
		{"nothingmissed", "  startingDeadlineSeconds: 300", 30 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.start()
			h.createCron(cronYAML("m", `  schedules: ["* * * * *"]
`+tc.deadline))
			h.advance(30 * time.Second) // 10:01:00
			h.stop()
			h.clock.Advance(tc.down)
			h.start()
			want := names(runName("m", 10, 1))
			if tc.caught {
				want = names(runName("m", 10, 1), runName("m", 10, 5))
			}
			if got := h.runs("m"); !equal(got, want) {
				t.Fatalf("after restart: %v, want %v", got, want)
			}
			// and it goes on at its next time
			next := h.clock.Now().Truncate(time.Minute).Add(time.Minute)
			h.clock.Set(next)
			h.sync()
			if got := h.runs("m"); len(got) != len(want)+1 || got[len(got)-1] != spec.CronRunName("m", next) {
				t.Fatalf("next run after restart: %v", got)
			}
		})
	}
}

// Completed workflows beyond the history limits are deleted, oldest
// first; counts are kept.
func TestHistoryLimits(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.createCron(cronYAML("hist", `  schedules: ["* * * * *"]
  successfulJobsHistoryLimit: 2`))
	h.advance(30 * time.Second)
	var all []string
	for m := 1; m <= 6; m++ {
		all = append(all, runName("hist", 10, m))
		if m < 6 {
			h.advance(time.Minute)
		}
	}
	phases := []v1alpha1.WorkflowPhase{v1alpha1.WorkflowSucceeded, v1alpha1.WorkflowFailed, v1alpha1.WorkflowSucceeded,
		v1alpha1.WorkflowError, v1alpha1.WorkflowSucceeded}
	for i, p := range phases {
		h.clock.Advance(time.Second) // distinct finish times
		h.finish(all[i], p)
	}
	// kept: the 2 newest succeeded (3rd, 5th), the newest failed (4th, Error), the active 6th
	want := names(all[2], all[3], all[4], all[5])
	if got := h.runs("hist"); !equal(got, want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	cw := h.cron("hist")
	if cw.Status.Succeeded != 3 || cw.Status.Failed != 2 || len(cw.Status.Active) != 1 {
		t.Fatalf("status: %+v", cw.Status)
	}
}

// `when` gates each run over cronworkflow.* variables; stopStrategy stops
// the cron (suspend, phase Stopped) once it holds.
func TestWhenAndStopStrategy(t *testing.T) {
	h := newHarness(t)
	h.start()
	// runs only when the last run is more than 90s ago (now() is the scheduler's clock)
	h.createCron(cronYAML("w", `  schedules: ["* * * * *"]
  when: "{{= cronworkflow.lastScheduledTime == nil || (now() - cronworkflow.lastScheduledTime).Seconds() > 90 }}"
  stopStrategy: {expression: "cronworkflow.succeeded >= 2"}`))
	h.advance(30 * time.Second) // 10:01 runs
	h.advance(time.Minute)      // 10:02: 60s since: skipped
	h.advance(time.Minute)      // 10:03: 120s since: runs
	want := names(runName("w", 10, 1), runName("w", 10, 3))
	if got := h.runs("w"); !equal(got, want) {
		t.Fatalf("runs = %v, want %v", got, want)
	}
	h.finish(want[0], v1alpha1.WorkflowSucceeded)
	if cw := h.cron("w"); cw.Status.Phase != v1alpha1.ActivePhase {
		t.Fatalf("stopped after one success: %+v", cw.Status)
	}
	h.finish(want[1], v1alpha1.WorkflowSucceeded)
	cw := h.cron("w")
	if cw.Status.Phase != v1alpha1.StoppedPhase || cw.Spec.Suspend == nil || !*cw.Spec.Suspend {
		t.Fatalf("not stopped after two successes: suspend %v status %+v", cw.Spec.Suspend, cw.Status)
	}
	h.advance(10 * time.Minute)
	if got := h.runs("w"); !equal(got, want) {
		t.Fatalf("a stopped cron ran: %v", got)
	}
}

// A `when` that does not evaluate is a SubmissionError, and nothing runs.
func TestWhenError(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.createCron(cronYAML("bad", `  schedules: ["* * * * *"]
  when: "{{= nosuchfunc(1) }}"`))
	h.advance(30 * time.Second)
	cw := h.cron("bad")
	if len(h.runs("bad")) != 0 || len(cw.Status.Conditions) != 1 ||
		cw.Status.Conditions[0].Type != v1alpha1.ConditionTypeSubmissionError {
		t.Fatalf("runs %v conditions %+v", h.runs("bad"), cw.Status.Conditions)
	}
}

// Suspended crons skip their times; resumed, they run at the next one.
func TestSuspend(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.createCron(cronYAML("s", `  schedules: ["* * * * *"]
  suspend: true`))
	h.advance(30 * time.Second)
	h.advance(time.Minute)
	if got := h.runs("s"); len(got) != 0 {
		t.Fatalf("suspended cron ran: %v", got)
	}
	cw := h.cron("s")
	f := false
	cw.Spec.Suspend = &f
	if err := h.st.Update(context.Background(), cw); err != nil {
		t.Fatal(err)
	}
	h.sync()
	if got := h.runs("s"); len(got) != 0 {
		t.Fatalf("resume ran a missed time: %v", got)
	}
	h.advance(time.Minute)
	if got := h.runs("s"); !equal(got, names(runName("s", 10, 3))) {
		t.Fatalf("after resume: %v", got)
	}
}

// A workflowTemplateRef is resolved into the created workflow's
// storedWorkflowTemplateSpec, its spec kept as written; a missing
// template is a SubmissionError that a later success clears.
func TestWorkflowTemplateRef(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.createCron(`metadata: {name: ref}
spec:
  schedules: ["* * * * *"]
  workflowSpec:
    workflowTemplateRef: {name: job}
`)
	h.advance(30 * time.Second)
	cw := h.cron("ref")
	if len(h.runs("ref")) != 0 || len(cw.Status.Conditions) != 1 ||
		cw.Status.Conditions[0].Type != v1alpha1.ConditionTypeSubmissionError ||
		!strings.Contains(cw.Status.Conditions[0].Message, `"job" not found`) {
		t.Fatalf("missing template: runs %v conditions %+v", h.runs("ref"), cw.Status.Conditions)
	}
	tmpl := &v1alpha1.WorkflowTemplate{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "default"}}
	tmpl.APIVersion, tmpl.Kind = v1alpha1.APIVersion, "WorkflowTemplate"
	tmpl.Spec.Entrypoint = "main"
	tmpl.Spec.Templates = []v1alpha1.Template{{Name: "main", Container: cronContainer()}}
	h.create(tmpl)
	h.advance(time.Minute)
	runs := h.runs("ref")
	if len(runs) != 1 {
		t.Fatalf("runs = %v, status %+v", runs, h.cron("ref").Status)
	}
	wf := h.workflow(runs[0])
	if st := wf.Status.StoredWorkflowSpec; st == nil || st.Entrypoint != "main" || len(st.Templates) != 1 ||
		wf.Spec.WorkflowTemplateRef == nil || len(wf.Spec.Templates) != 0 || wf.Labels["workflows.argoproj.io/workflow-template"] != "job" {
		t.Fatalf("template not resolved into storedWorkflowTemplateSpec: spec %+v, stored %+v", wf.Spec, st)
	}
	if cw := h.cron("ref"); len(cw.Status.Conditions) != 0 {
		t.Fatalf("conditions after success: %+v", cw.Status.Conditions)
	}
}

// A deleted cron stops; a deleted active workflow leaves status.active
// without being counted.
func TestDeletes(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.createCron(cronYAML("d", `  schedules: ["* * * * *"]`))
	h.advance(30 * time.Second)
	run := runName("d", 10, 1)
	if err := h.st.Delete(context.Background(), "Workflow", "default", run); err != nil {
		t.Fatal(err)
	}
	h.sync()
	if cw := h.cron("d"); len(cw.Status.Active) != 0 || cw.Status.Succeeded+cw.Status.Failed != 0 {
		t.Fatalf("status after delete: %+v", cw.Status)
	}
	if err := h.st.Delete(context.Background(), "CronWorkflow", "default", "d"); err != nil {
		t.Fatal(err)
	}
	h.sync()
	h.advance(time.Minute)
	if got := h.runs("d"); len(got) != 0 {
		t.Fatalf("deleted cron ran: %v", got)
	}
}

// A cron's workflows name it as their controlling owner. Deleting the cron
// deletes them, the active one included, and leaves other crons' alone;
// a cron deleted while no scheduler ran has its workflows deleted when
// one starts.
func TestDeleteCascades(t *testing.T) {
	h := newHarness(t)
	h.start()
	for _, name := range []string{"gone", "kept", "later"} {
		h.createCron(cronYAML(name, `  schedules: ["* * * * *"]`))
	}
	h.advance(30 * time.Second)
	h.finish(runName("gone", 10, 1), v1alpha1.WorkflowSucceeded)
	h.advance(time.Minute) // gone's 10:02 run is active
	wf := h.workflow(runName("gone", 10, 2))
	if len(wf.OwnerReferences) != 1 || wf.OwnerReferences[0].Kind != "CronWorkflow" ||
		wf.OwnerReferences[0].UID != h.cron("gone").UID || !*wf.OwnerReferences[0].Controller {
		t.Fatalf("owner references %+v", wf.OwnerReferences)
	}
	// deleteCron deletes a cron (then settle runs), and checks that its
	// workflows are gone and kept's two are not.
	deleteCron := func(name, when string, settle func()) {
		t.Helper()
		if err := h.st.Delete(context.Background(), "CronWorkflow", "default", name); err != nil {
			t.Fatal(err)
		}
		settle()
		if got := h.runs(name); len(got) != 0 {
			t.Fatalf("workflows of a cron deleted %s: %v", when, got)
		}
		if got := h.runs("kept"); len(got) != 2 {
			t.Fatalf("another cron's workflows, %s: %v", when, got)
		}
	}
	deleteCron("gone", "while the scheduler runs", h.sync)
	h.stop()
	deleteCron("later", "while no scheduler ran", h.start)
}
