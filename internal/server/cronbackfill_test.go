package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	cronsched "github.com/braidwf/braid/internal/controller/cron"
	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// backfillCron is a cron workflow at 02:00 New York time whose workflow
// takes the scheduled time as the parameter "day" ("mode" cannot take it:
// it has an enum).
const backfillCron = `{"cronWorkflow":{"metadata":{"name":"daily"},"spec":{"schedules":["0 2 * * *"],"timezone":"America/New_York",
 "workflowSpec":{"entrypoint":"main","arguments":{"parameters":[{"name":"day","value":"none"},{"name":"mode","value":"a","enum":["a","b"]}]},
 "templates":[{"name":"main","container":{"image":"alpine","command":["echo","{{workflow.parameters.day}}"]}}]}}}}`

type backfillJSON struct {
	ScheduledTimes []string `json:"scheduledTimes"`
	Created        []string `json:"created"`
	Skipped        []string `json:"skipped"`
}

// startBackfillServer serves a store holding argo/daily.
func startBackfillServer(t *testing.T, opts Options) (string, *sqlite.Store) {
	t.Helper()
	addr, st := startServerStore(t, opts)
	if r := do(t, "POST", "http://"+addr+"/api/v1/cron-workflows/argo", backfillCron); r.status != 200 {
		t.Fatalf("create cron: %d %s", r.status, r.body)
	}
	return addr, st
}

func storedWorkflows(t *testing.T, st *sqlite.Store) []*v1alpha1.Workflow {
	t.Helper()
	objs, _, err := st.List(context.Background(), store.KindWorkflow, "argo", store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items, err := typedItems[v1alpha1.Workflow](objs)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*v1alpha1.Workflow, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// Over REST: a dry run lists the times and creates nothing; a backfill
// creates one workflow per time; run again it skips them all, and after a
// deletion it creates only the missing one.
func TestBackfillCronWorkflowREST(t *testing.T) {
	addr, st := startBackfillServer(t, Options{})
	url := "http://" + addr + "/api/v1/cron-workflows/argo/daily/backfill"
	body := `{"start":"2026-05-19","end":"2026-05-21 23:00","argName":"day","format":"2006-01-02 15:04 MST","backfillName":"redo"%s}`
	r := do(t, "POST", url, strings.Replace(body, "%s", `,"dryRun":true`, 1))
	if r.status != 200 {
		t.Fatalf("dry run: %d %s", r.status, r.body)
	}
	dry := decodeInto[backfillJSON](t, r.body)
	want := "2026-05-19T02:00:00-04:00 2026-05-20T02:00:00-04:00 2026-05-21T02:00:00-04:00"
	if strings.Join(dry.ScheduledTimes, " ") != want || len(dry.Created)+len(dry.Skipped) != 0 {
		t.Fatalf("dry run: %s", r.body)
	}
	if n := len(storedWorkflows(t, st)); n != 0 {
		t.Fatalf("a dry run created %d workflows", n)
	}

	r = do(t, "POST", url, strings.Replace(body, "%s", "", 1))
	got := decodeInto[backfillJSON](t, r.body)
	names := "redo-1779170400 redo-1779256800 redo-1779343200"
	if r.status != 200 || strings.Join(got.Created, " ") != names || len(got.Skipped) != 0 {
		t.Fatalf("backfill: %d %s", r.status, r.body)
	}
	wfs := storedWorkflows(t, st)
	if len(wfs) != 3 {
		t.Fatalf("%d workflows stored", len(wfs))
	}
	for _, wf := range wfs {
		p := wf.Spec.Arguments.Parameters
		if wf.Labels[cronsched.LabelBackfill] != "daily" || wf.Labels[spec.LabelCronWorkflow] != "" ||
			!strings.HasSuffix(wf.Annotations[spec.AnnotationScheduledTime], "T02:00:00-04:00") ||
			len(p) != 2 || !strings.HasSuffix(p[0].Value.String(), " 02:00 EDT") || len(wf.OwnerReferences) != 1 {
			t.Errorf("workflow %s: labels %v annotations %v parameters %+v", wf.Name, wf.Labels, wf.Annotations, p)
		}
	}

	r = do(t, "POST", url, strings.Replace(body, "%s", "", 1))
	if again := decodeInto[backfillJSON](t, r.body); len(again.Created) != 0 || strings.Join(again.Skipped, " ") != names {
		t.Fatalf("again: %s", r.body)
	}
	if err := st.Delete(context.Background(), store.KindWorkflow, "argo", "redo-1779256800"); err != nil {
		t.Fatal(err)
	}
	r = do(t, "POST", url, strings.Replace(body, "%s", "", 1))
	if resumed := decodeInto[backfillJSON](t, r.body); strings.Join(resumed.Created, " ") != "redo-1779256800" || len(resumed.Skipped) != 2 {
		t.Fatalf("resumed: %s", r.body)
	}
}

// Bad input is 400 with a message naming the field; an unknown cron
// workflow is 404.
func TestBackfillCronWorkflowErrors(t *testing.T) {
	addr, st := startBackfillServer(t, Options{})
	base := "http://" + addr + "/api/v1/cron-workflows/argo/"
	for _, tc := range []struct {
		name, cron, body string
		status           int
		msg              string
	}{
		{"unknown cron", "nope", `{"start":"2026-05-19"}`, 404, `cronworkflows.argoproj.io \"nope\" not found`},
		{"no start", "daily", `{}`, 400, "start is required"},
		{"bad start", "daily", `{"start":"last week"}`, 400, `start \"last week\" is not a time`},
		{"bad end", "daily", `{"start":"2026-05-19","end":"soon"}`, 400, `end \"soon\" is not a time`},
		{"end before start", "daily", `{"start":"2026-05-19","end":"2026-05-18"}`, 400, "end 2026-05-18T00:00:00-04:00 is before start"},
		{"negative count", "daily", `{"start":"2026-05-19","maxWorkflowCount":-1}`, 400, "maxWorkflowCount must be positive"},
		{"count over the cap", "daily", `{"start":"2026-05-19","maxWorkflowCount":10001}`, 400, "maxWorkflowCount 10001 is over the server's limit of 10000"},
		{"more than max", "daily", `{"start":"2026-05-01","end":"2026-05-10","maxWorkflowCount":3}`, 400, "more than 3 scheduled times"},
		{"more than the default", "daily", `{"start":"2020-01-01","end":"2026-01-01"}`, 400, "more than 1000 scheduled times"},
		{"none in range", "daily", `{"start":"2026-05-19 03:00","end":"2026-05-19 04:00"}`, 400, "do not fire between"},
		{"bad backfill name", "daily", `{"start":"2026-05-19","backfillName":"Not_A_Name"}`, 400, `backfillName \"Not_A_Name\"`},
		{"bad argName", "daily", `{"start":"2026-05-19","argName":"a=b"}`, 400, `argName \"a=b\"`},
		{"invalid workflow", "daily", `{"start":"2026-05-19","end":"2026-05-19 23:00","argName":"mode","dryRun":true}`, 400,
			`backfill: Workflow daily-backfill-1779170400: spec.arguments.parameters[1].value: value \"Tue, 19 May 2026 02:00:00 EDT\" of parameter \"mode\" is not in its enum list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, "POST", base+tc.cron+"/backfill", tc.body)
			if r.status != tc.status || !strings.Contains(string(r.body), tc.msg) {
				t.Fatalf("%d %s, want %d %q", r.status, r.body, tc.status, tc.msg)
			}
		})
	}
	if n := len(storedWorkflows(t, st)); n != 0 {
		t.Fatalf("failed backfills created %d workflows", n)
	}
}

// Over gRPC: the same call, and the same codes.
func TestBackfillCronWorkflowGRPC(t *testing.T) {
	addr, st := startBackfillServer(t, Options{})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := cronworkflow.NewCronWorkflowServiceClient(conn)
	req := &cronworkflow.BackfillCronWorkflowRequest{Namespace: "argo", Name: "daily",
		Start: "2026-05-19T00:00:00Z", End: "2026-05-20T23:00:00Z", ArgName: "day", MaxWorkflowCount: 2}
	res, err := c.BackfillCronWorkflow(ctx, req)
	if err != nil || len(res.GetScheduledTimes()) != 2 ||
		strings.Join(res.GetCreated(), " ") != "daily-backfill-1779170400 daily-backfill-1779256800" {
		t.Fatalf("backfill: %v %v", res, err)
	}
	wfs := storedWorkflows(t, st)
	if len(wfs) != 2 || wfs[0].Spec.Arguments.Parameters[0].Value.String() != "Tue, 19 May 2026 02:00:00 EDT" &&
		wfs[1].Spec.Arguments.Parameters[0].Value.String() != "Tue, 19 May 2026 02:00:00 EDT" {
		t.Fatalf("workflows %+v", wfs)
	}
	req.MaxWorkflowCount = 1
	if _, err := c.BackfillCronWorkflow(ctx, req); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(err.Error(), "raise maxWorkflowCount (at most 10000)") {
		t.Errorf("over max: %v", err)
	}
	if _, err := c.BackfillCronWorkflow(ctx, &cronworkflow.BackfillCronWorkflowRequest{Namespace: "argo", Name: "nope", Start: "2026-05-19"}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown cron: %v", err)
	}
	// More times than the hard cap: refused before anything is created.
	big := &cronworkflow.BackfillCronWorkflowRequest{Namespace: "argo", Name: "daily", Start: "1990-01-01", End: "2026-01-01", MaxWorkflowCount: backfillCap}
	if _, err := c.BackfillCronWorkflow(ctx, big); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "more than 10000") {
		t.Errorf("over the cap: %v", err)
	}
}

// Backfilling creates workflows, so it needs the create verb on workflows
// in the namespace.
func TestBackfillCronWorkflowAuth(t *testing.T) {
	e := newAuthEnv(t)
	body := `{"start":"2026-05-19","dryRun":true}`
	for _, tc := range []struct {
		name, path, cred string
		status           int
		msg              string
	}{
		{"reader", "/api/v1/cron-workflows/a/daily/backfill", e.tok["reader-a"], 403, "create workflows"},
		{"writer elsewhere", "/api/v1/cron-workflows/b/daily/backfill", e.tok["writer-a"], 403, `namespace \"b\"`},
		{"writer", "/api/v1/cron-workflows/a/daily/backfill", e.tok["writer-a"], 404, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, authReq{method: "POST", path: tc.path, cred: tc.cred, body: body})
			if r.status != tc.status || !strings.Contains(string(r.body), tc.msg) {
				t.Fatalf("%d %s, want %d %q", r.status, r.body, tc.status, tc.msg)
			}
		})
	}
}
