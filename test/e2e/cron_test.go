package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	cronsched "github.com/braidwf/braid/internal/controller/cron"
	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// cronRig is what `braid server` builds for scheduling (a SQLite store and
// a cron Scheduler on it), in this process so that the clock can be a fake
// one. Each start is a new Scheduler, as after a server restart.
type cronRig struct {
	t     *testing.T
	st    *sqlite.Store
	clock *cronsched.FakeClock
	sched *cronsched.Scheduler
	stop  func()
}

func newCronRig(t *testing.T, now time.Time) *cronRig {
	t.Helper()
	clock := cronsched.NewFakeClock(now)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "braid.db"), sqlite.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	r := &cronRig{t: t, st: st, clock: clock}
	t.Cleanup(func() {
		if r.stop != nil {
			r.stop()
		}
		_ = st.Close()
	})
	return r
}

func (r *cronRig) start() {
	r.t.Helper()
	s, err := cronsched.New(cronsched.Options{Store: r.st, Clock: r.clock, Local: time.UTC})
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	r.sched = s
	r.stop = func() { cancel(); <-done; r.stop = nil }
	r.sync()
}

func (r *cronRig) sync() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.sched.Sync(ctx); err != nil {
		r.t.Fatal(err)
	}
}

func (r *cronRig) setClock(at time.Time) {
	r.t.Helper()
	r.clock.Set(at)
	if r.stop != nil {
		r.sync()
	}
}

func (r *cronRig) createCron(doc string) {
	r.t.Helper()
	cw := &v1alpha1.CronWorkflow{}
	if err := yaml.Unmarshal([]byte(doc), cw); err != nil {
		r.t.Fatal(err)
	}
	cw.APIVersion, cw.Kind, cw.Namespace = v1alpha1.APIVersion, "CronWorkflow", "default"
	if err := r.st.Create(context.Background(), cw); err != nil {
		r.t.Fatal(err)
	}
	r.sync()
}

// runs are the names of the workflows the cron created, sorted.
func (r *cronRig) runs(cron string) []string {
	r.t.Helper()
	objs, _, err := r.st.List(context.Background(), store.KindWorkflow, "default",
		store.ListOptions{LabelSelector: spec.LabelCronWorkflow + "=" + cron})
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	slices.Sort(out)
	return out
}

// succeed ends a workflow as the controller would.
func (r *cronRig) succeed(name string) {
	r.t.Helper()
	o, err := r.st.Get(context.Background(), store.KindWorkflow, "default", name)
	if err != nil {
		r.t.Fatal(err)
	}
	wf := o.(*v1alpha1.Workflow)
	wf.Status.Phase, wf.Status.FinishedAt = v1alpha1.WorkflowSucceeded, metav1.NewTime(r.clock.Now())
	if err := r.st.Update(context.Background(), wf); err != nil {
		r.t.Fatal(err)
	}
	r.sync()
}

func cronDoc(name, extra string) string {
	return `metadata: {name: ` + name + `}
spec:
  schedules: ["*/10 * * * *"]
` + extra + `
  workflowSpec:
    entrypoint: main
    templates:
    - name: main
      container: {image: busybox, command: [echo, hi]}
`
}

// The acceptance test of cron scheduling: a schedule fires at its times
// across a restart of the scheduler, Forbid skips a run while one is
// active, and on start a run missed within startingDeadlineSeconds is
// caught up while one missed outside it is not.
func TestCronE2EScheduling(t *testing.T) {
	day := time.Date(2030, 3, 4, 0, 0, 0, 0, time.UTC)
	at := func(hh, mm, ss int) time.Time { return day.Add(time.Duration(hh*3600+mm*60+ss) * time.Second) }
	run := func(cron string, hh, mm int) string { return spec.CronRunName(cron, at(hh, mm, 0)) }
	r := newCronRig(t, at(9, 55, 0))
	r.start()
	r.createCron(cronDoc("plain", ""))
	r.createCron(cronDoc("forbid", "  concurrencyPolicy: Forbid"))
	r.createCron(cronDoc("caught", "  startingDeadlineSeconds: 120"))
	r.createCron(cronDoc("late", "  startingDeadlineSeconds: 30"))

	r.setClock(at(9, 59, 59))
	if got := r.runs("plain"); len(got) != 0 {
		t.Fatalf("ran early: %v", got)
	}
	r.setClock(at(10, 0, 0))
	for _, c := range []string{"plain", "forbid", "caught", "late"} {
		if got := r.runs(c); !slices.Equal(got, []string{run(c, 10, 0)}) {
			t.Fatalf("%s at 10:00: %v", c, got)
		}
	}
	r.setClock(at(10, 10, 0)) // forbid's 10:00 run is still active
	if got := r.runs("forbid"); !slices.Equal(got, []string{run("forbid", 10, 0)}) {
		t.Fatalf("Forbid ran beside an active workflow: %v", got)
	}
	r.succeed(run("forbid", 10, 0))
	r.succeed(run("caught", 10, 0))

	// The server stops at 10:10:30 and starts again at 10:21:00: the 10:20
	// run was missed, 60s ago.
	r.stop()
	r.clock.Set(at(10, 21, 0))
	r.start()
	if got := r.runs("caught"); !slices.Equal(got, []string{run("caught", 10, 0), run("caught", 10, 10), run("caught", 10, 20)}) {
		t.Fatalf("a run missed within startingDeadlineSeconds was not caught up: %v", got)
	}
	if got := r.runs("late"); !slices.Equal(got, []string{run("late", 10, 0), run("late", 10, 10)}) {
		t.Fatalf("a run missed outside startingDeadlineSeconds was run: %v", got)
	}
	if got := r.runs("plain"); !slices.Equal(got, []string{run("plain", 10, 0), run("plain", 10, 10)}) {
		t.Fatalf("without startingDeadlineSeconds a missed run was run: %v", got)
	}
	// The new scheduler goes on at the next times.
	r.setClock(at(10, 30, 0))
	if got := r.runs("plain"); !slices.Equal(got, []string{run("plain", 10, 0), run("plain", 10, 10), run("plain", 10, 30)}) {
		t.Fatalf("plain after the restart: %v", got)
	}
	if got := r.runs("forbid"); !slices.Equal(got, []string{run("forbid", 10, 0), run("forbid", 10, 30)}) {
		t.Fatalf("forbid after its run ended: %v", got)
	}
	o, err := r.st.Get(context.Background(), store.KindCronWorkflow, "default", "caught")
	if err != nil {
		t.Fatal(err)
	}
	cw := o.(*v1alpha1.CronWorkflow)
	if cw.Status.Succeeded != 1 || cw.Status.LastScheduledTime == nil || !cw.Status.LastScheduledTime.Time.Equal(at(10, 30, 0)) {
		t.Fatalf("caught status: %+v", cw.Status)
	}
}

// `braid cron backfill` against a real `braid server`: one at a time,
// each with its scheduled time as a parameter; --parallel; clear errors.
func TestCLICronBackfill(t *testing.T) {
	dir := t.TempDir()
	srv := startBraidServer(t, filepath.Join(dir, "home"))
	env := srv.env()
	file := filepath.Join(dir, "cron.yaml")
	writeFile(t, file, `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: daily}
spec:
  schedules: ["0 2 * * *"]
  timezone: UTC
  suspend: true
  workflowSpec:
    entrypoint: main
    arguments:
      parameters: [{name: date, value: scheduled}]
    templates:
    - name: main
      container: {image: busybox, command: [sh, -c, 'echo "run for {{workflow.parameters.date}} at {{workflow.scheduledTime}}"']}
`)
	expect(t, env, 0, "daily", "cron", "create", file)

	r := expect(t, env, 0, "Succeeded", "cron", "backfill", "daily", "--start", "2026-05-19", "--end", "2026-05-20T23:00:00Z",
		"--argname", "date", "--format", "2006-01-02")
	for _, want := range []string{"Workflow daily-backfill-1779156000 created (scheduled 2026-05-19T02:00:00Z)",
		"Workflow daily-backfill-1779242400 created (scheduled 2026-05-20T02:00:00Z)"} {
		if !strings.Contains(r.out, want) {
			t.Fatalf("backfill output lacks %q:\n%s", want, r.out)
		}
	}
	expect(t, env, 0, ": run for 2026-05-20 at 2026-05-20T02:00:00Z", "logs", "daily-backfill-1779242400")

	// Again: the existing runs are skipped.
	expect(t, env, 0, "daily-backfill-1779156000 already exists", "cron", "backfill", "daily", "--from", "2026-05-19", "--to", "2026-05-19T12:00:00Z")

	// --parallel creates them all and returns.
	r = expect(t, env, 0, "redo-1779415200 created", "cron", "backfill", "daily", "--from", "2026-05-21", "--to", "2026-05-22T03:00:00Z",
		"--parallel", "--name", "redo")
	if !strings.Contains(r.out, "redo-1779328800 created") || strings.Contains(r.out, "Succeeded") {
		t.Fatalf("--parallel output:\n%s", r.out)
	}
	expect(t, env, 0, "", "wait", "redo-1779328800", "redo-1779415200")
	r = expect(t, env, 0, "", "list", "-l", "braid.dev/cron-backfill=daily", "-o", "name")
	if got := strings.Fields(r.out); len(got) != 4 {
		t.Fatalf("backfilled workflows: %v", got)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--start", "someday"}, `--start "someday" is not a time`},
		{[]string{"--start", "2026-05-20", "--end", "2026-05-19"}, "is before --start"},
		{[]string{"--start", "2026-01-01", "--end", "2026-05-01", "--maxworkflowcount", "10"}, "more than 10 scheduled times"},
		{[]string{"--end", "2026-05-01"}, "--start (or --from) is required"},
	} {
		r := braidCLI(t, env, append([]string{"cron", "backfill", "daily"}, tc.args...)...)
		if r.code == 0 || !strings.Contains(r.err, tc.want) {
			t.Fatalf("backfill %v: exit %d, stderr lacks %q:\n%s", tc.args, r.code, tc.want, r.err)
		}
	}
	expect(t, env, 1, "", "cron", "backfill", "nope", "--start", "2026-05-19")
}

// `braid server` schedules: a cron firing every second creates workflows
// that run, and its status records them.
func TestCronServerSchedules(t *testing.T) {
	dir := t.TempDir()
	srv := startBraidServer(t, filepath.Join(dir, "home"))
	env := srv.env()
	file := filepath.Join(dir, "tick.yaml")
	writeFile(t, file, `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: tick}
spec:
  schedules: ["@every 1s"]
  concurrencyPolicy: Forbid
  workflowSpec:
    entrypoint: main
    templates:
    - name: main
      container: {image: busybox, command: [sh, -c, 'echo tick {{workflow.scheduledTime}}']}
`)
	expect(t, env, 0, "tick", "cron", "create", file)
	deadline := time.Now().Add(30 * time.Second)
	var cw v1alpha1.CronWorkflow
	for {
		r := expect(t, env, 0, "", "cron", "get", "tick", "-o", "json")
		if err := json.Unmarshal([]byte(r.out), &cw); err != nil {
			t.Fatalf("cron get -o json: %v\n%s", err, r.out)
		}
		if cw.Status.Succeeded >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not run the cron twice in 30s: %+v", cw.Status)
		}
		<-time.After(100 * time.Millisecond)
	}
	expect(t, env, 0, "CronWorkflow 'tick' suspended", "cron", "suspend", "tick")
	if cw.Status.LastScheduledTime == nil || cw.Status.Phase != v1alpha1.ActivePhase {
		t.Fatalf("status: %+v", cw.Status)
	}
	r := expect(t, env, 0, "tick-", "list", "-l", spec.LabelCronWorkflow+"=tick", "--status", "Succeeded", "-o", "name")
	if n := len(strings.Fields(r.out)); n < 1 || n > 3 {
		t.Fatalf("succeeded runs kept (history limit 3): %q", r.out)
	}
}

// `braid submit --scheduled-time` sets {{workflow.scheduledTime}}, for a
// file and for --from; a time that is not RFC 3339 is refused. A server
// dry run of --from gives the name the workflow would get.
func TestSubmitScheduledTime(t *testing.T) {
	dir := t.TempDir()
	srv := startBraidServer(t, filepath.Join(dir, "home"))
	env := srv.env()
	const body = `
  entrypoint: main
  templates:
  - name: main
    container: {image: busybox, command: [sh, -c, 'echo "at {{workflow.scheduledTime}}"']}
`
	file, tmpl := filepath.Join(dir, "wf.yaml"), filepath.Join(dir, "tmpl.yaml")
	writeFile(t, file, "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: when}\nspec:"+body)
	writeFile(t, tmpl, "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: when-tmpl}\nspec:"+body)
	expect(t, env, 0, "", "submit", file, "--scheduled-time", "2026-05-19T02:00:00Z", "--wait")
	expect(t, env, 0, "at 2026-05-19T02:00:00Z", "logs", "when")
	expect(t, env, 0, "", "template", "create", tmpl)
	expect(t, env, 0, "", "submit", "--from", "workflowtemplate/when-tmpl", "--name", "when-2", "--scheduled-time", "2026-05-20T02:00:00Z", "--wait")
	expect(t, env, 0, "at 2026-05-20T02:00:00Z", "logs", "when-2")
	// A server dry run names the workflow as the store would.
	if r := expect(t, env, 0, "when-tmpl-", "submit", "--from", "workflowtemplate/when-tmpl", "--server-dry-run", "-o", "name"); strings.TrimSpace(r.out) == "when-tmpl-" {
		t.Fatalf("server dry run: %q", r.out)
	}
	r := braidCLI(t, env, "submit", file, "--scheduled-time", "tomorrow")
	if r.code == 0 || !strings.Contains(r.err, `--scheduled-time "tomorrow" is not an RFC 3339 time`) {
		t.Fatalf("a bad time: exit %d\n%s", r.code, r.err)
	}
}
