package compat

import (
	"testing"

	clusterpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/clusterworkflowtemplate"
	cronpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/cronworkflow"
	"github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflow"
	templatepkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflowtemplate"
	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"google.golang.org/grpc/codes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// failUnless is a workflow whose step fails while its parameter pass is
// not "yes".
func failUnless(generateName string, labels map[string]string) *wfv1.Workflow {
	wf := podWorkflow(generateName, labels, "sh", "-c", `test "{{workflow.parameters.pass}}" = yes`)
	wf.Spec.Arguments.Parameters = []wfv1.Parameter{{Name: "pass", Value: wfv1.AnyStringPtr("no")}}
	return wf
}

// TestWorkflowRetry: retry of a Failed workflow, with a parameter that
// makes its step pass, answers it reopened (no finishedAt) and runs the
// failed step again, which now succeeds.
func TestWorkflowRetry(t *testing.T) {
	eachTransport(t, "wf-retry", func(t *testing.T, e *env) {
		wf := e.create(t, failUnless("retry-", nil))
		e.waitPhase(t, wf.Name, wfv1.WorkflowFailed)
		got, err := e.wf().RetryWorkflow(e.ctx, &workflow.WorkflowRetryRequest{Namespace: e.ns, Name: wf.Name, Parameters: []string{"pass=yes"}})
		if err != nil {
			t.Fatalf("retry: %v", err)
		}
		if got.Name != wf.Name || got.Status.Phase.Completed() || !got.Status.FinishedAt.IsZero() {
			t.Errorf("retry answered %s in phase %q finishedAt %v, want %s reopened", got.Name, got.Status.Phase, got.Status.FinishedAt, wf.Name)
		}
		e.waitPhase(t, wf.Name, wfv1.WorkflowSucceeded)
	})
}

// TestWorkflowResubmit: resubmit answers a new workflow, labelled with the
// one it came from, with the parameters given, and it runs.
func TestWorkflowResubmit(t *testing.T) {
	eachTransport(t, "wf-resubmit", func(t *testing.T, e *env) {
		orig := podWorkflow("resubmit-", map[string]string{"app": "compat"}, "sh", "-c", "echo {{workflow.parameters.msg}}")
		orig.Spec.Arguments.Parameters = []wfv1.Parameter{{Name: "msg", Value: wfv1.AnyStringPtr("one")}}
		orig = e.create(t, orig)
		e.waitPhase(t, orig.Name, wfv1.WorkflowSucceeded)
		got, err := e.wf().ResubmitWorkflow(e.ctx, &workflow.WorkflowResubmitRequest{Namespace: e.ns, Name: orig.Name, Parameters: []string{"msg=two"}})
		if err != nil {
			t.Fatalf("resubmit: %v", err)
		}
		if got.Name == "" || got.Name == orig.Name || got.Labels[labelResubmitted] != orig.Name || got.Labels["app"] != "compat" {
			t.Errorf("resubmit answered %q with labels %v, want a new workflow labelled %s=%s", got.Name, got.Labels, labelResubmitted, orig.Name)
		}
		if p := got.Spec.Arguments.Parameters; len(p) != 1 || p[0].Value == nil || p[0].Value.String() != "two" {
			t.Errorf("resubmit with msg=two: parameters %v", p)
		}
		e.waitPhase(t, got.Name, wfv1.WorkflowSucceeded)
	})
}

// TestWorkflowSuspendResume: suspend of a running workflow sets
// spec.suspend; the running step ends (Argo still reconciles pods) but the
// workflow is held; resume clears spec.suspend and the workflow ends.
func TestWorkflowSuspendResume(t *testing.T) {
	eachTransport(t, "wf-suspend", func(t *testing.T, e *env) {
		wf := e.create(t, podWorkflow("suspend-", nil, "sleep", "2"))
		e.waitRunningPod(t, wf.Name) // suspended before, nothing would start
		got, err := e.wf().SuspendWorkflow(e.ctx, &workflow.WorkflowSuspendRequest{Namespace: e.ns, Name: wf.Name})
		if err != nil {
			t.Fatalf("suspend: %v", err)
		}
		if got.Spec.Suspend == nil || !*got.Spec.Suspend {
			t.Errorf("suspend answered spec.suspend %v", got.Spec.Suspend)
		}
		held := e.waitFor(t, wf.Name, "done with its step", func(wf *wfv1.Workflow) bool {
			n, ok := wf.Status.Nodes[wf.Name]
			return ok && n.Phase.Completed()
		})
		if held.Spec.Suspend == nil || !*held.Spec.Suspend || held.Status.Phase.Completed() {
			t.Errorf("suspended: spec.suspend %v phase %s once its step ended", held.Spec.Suspend, held.Status.Phase)
		}
		got, err = e.wf().ResumeWorkflow(e.ctx, &workflow.WorkflowResumeRequest{Namespace: e.ns, Name: wf.Name})
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		if got.Spec.Suspend != nil && *got.Spec.Suspend {
			t.Errorf("resume answered spec.suspend true")
		}
		e.waitPhase(t, wf.Name, wfv1.WorkflowSucceeded)
	})
}

// TestWorkflowStopTerminate: stop and terminate of a running workflow set
// spec.shutdown, answer the workflow, and end it Failed with Argo's
// messages (ARGO-SEMANTICS 10.4, 2.9).
func TestWorkflowStopTerminate(t *testing.T) {
	eachTransport(t, "wf-stop", func(t *testing.T, e *env) {
		for _, strategy := range []wfv1.ShutdownStrategy{wfv1.ShutdownStrategyStop, wfv1.ShutdownStrategyTerminate} {
			wf := e.create(t, podWorkflow("shutdown-", nil, "sleep", "300"))
			e.waitRunningPod(t, wf.Name)
			var got *wfv1.Workflow
			var err error
			if strategy == wfv1.ShutdownStrategyStop {
				got, err = e.wf().StopWorkflow(e.ctx, &workflow.WorkflowStopRequest{Namespace: e.ns, Name: wf.Name})
			} else {
				got, err = e.wf().TerminateWorkflow(e.ctx, &workflow.WorkflowTerminateRequest{Namespace: e.ns, Name: wf.Name})
			}
			if err != nil {
				t.Fatalf("%s: %v", strategy, err)
			}
			if got.Name != wf.Name || got.Spec.Shutdown != strategy {
				t.Errorf("%s answered %q with spec.shutdown %q", strategy, got.Name, got.Spec.Shutdown)
			}
			final := e.waitPhase(t, wf.Name, wfv1.WorkflowFailed)
			if want := "Stopped with strategy '" + string(strategy) + "'"; final.Status.Message != want {
				t.Errorf("%s: message %q, want %q", strategy, final.Status.Message, want)
			}
			if pod, want := final.Status.Nodes[wf.Name], "workflow shutdown with strategy:  "+string(strategy); pod.Phase != wfv1.NodeFailed || pod.Message != want {
				t.Errorf("%s: the running pod's node is %s %q, want Failed %q", strategy, pod.Phase, pod.Message, want)
			}
		}
	})
}

// TestWorkflowSet: set gives a waiting suspend node its output parameter;
// resumed, the next step receives it.
func TestWorkflowSet(t *testing.T) {
	eachTransport(t, "wf-set", func(t *testing.T, e *env) {
		wf := podWorkflow("set-", nil)
		wf.Spec.Templates = []wfv1.Template{
			{Name: "main", Steps: []wfv1.ParallelSteps{
				{Steps: []wfv1.WorkflowStep{{Name: "approve", Template: "approve"}}},
				{Steps: []wfv1.WorkflowStep{{Name: "show", Template: "show", Arguments: wfv1.Arguments{Parameters: []wfv1.Parameter{
					{Name: "msg", Value: wfv1.AnyStringPtr("{{steps.approve.outputs.parameters.message}}")}}}}}},
			}},
			{Name: "approve", Suspend: &wfv1.SuspendTemplate{}, Outputs: wfv1.Outputs{Parameters: []wfv1.Parameter{
				{Name: "message", ValueFrom: &wfv1.ValueFrom{Supplied: &wfv1.SuppliedValueFrom{}}}}}},
			container("show", "sh", "-c", "echo {{inputs.parameters.msg}}"),
		}
		wf.Spec.Templates[2].Inputs.Parameters = []wfv1.Parameter{{Name: "msg"}}
		wf = e.create(t, wf)
		e.waitFor(t, wf.Name, "waiting at approve", func(wf *wfv1.Workflow) bool {
			for _, n := range wf.Status.Nodes {
				if n.DisplayName == "approve" && n.Type == wfv1.NodeTypeSuspend && n.Phase == wfv1.NodeRunning {
					return true
				}
			}
			return false
		})
		got, err := e.wf().SetWorkflow(e.ctx, &workflow.WorkflowSetRequest{Namespace: e.ns, Name: wf.Name,
			NodeFieldSelector: "displayName=approve", OutputParameters: `{"message":"compat-approved"}`})
		if err != nil {
			t.Fatalf("set: %v", err)
		}
		if out := nodeBy(t, got, "approve").Outputs; out == nil || len(out.Parameters) != 1 || out.Parameters[0].Value == nil ||
			out.Parameters[0].Value.String() != "compat-approved" {
			t.Errorf("set answered approve's outputs %+v", out)
		}
		if _, err := e.wf().ResumeWorkflow(e.ctx, &workflow.WorkflowResumeRequest{Namespace: e.ns, Name: wf.Name, NodeFieldSelector: "displayName=approve"}); err != nil {
			t.Fatalf("resume: %v", err)
		}
		done := e.waitPhase(t, wf.Name, wfv1.WorkflowSucceeded)
		if in := nodeBy(t, done, "show").Inputs; in == nil || len(in.Parameters) != 1 || in.Parameters[0].Value == nil ||
			in.Parameters[0].Value.String() != "compat-approved" {
			t.Errorf("show's inputs %+v, want msg=compat-approved", in)
		}
	})
}

// echoSpec is a workflow spec echoing its parameter msg.
func echoSpec() wfv1.WorkflowSpec {
	return wfv1.WorkflowSpec{
		Entrypoint: "main",
		Arguments:  wfv1.Arguments{Parameters: []wfv1.Parameter{{Name: "msg", Value: wfv1.AnyStringPtr("default")}}},
		Templates:  []wfv1.Template{container("main", "sh", "-c", "echo {{workflow.parameters.msg}}")},
	}
}

// TestWorkflowSubmitFrom: SubmitWorkflow from a WorkflowTemplate, a
// ClusterWorkflowTemplate and a CronWorkflow (with the spellings the CLI
// passes through) answers a workflow labelled with its origin, carrying
// the submit options, and it runs; an unknown kind is InvalidArgument.
func TestWorkflowSubmitFrom(t *testing.T) {
	eachTransport(t, "wf-submit", func(t *testing.T, e *env) {
		name := "submit-src-" + e.name
		if _, err := e.wt(t).CreateWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateCreateRequest{Namespace: e.ns,
			Template: &wfv1.WorkflowTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: echoSpec()}}); err != nil {
			t.Fatalf("create the WorkflowTemplate: %v", err)
		}
		if _, err := e.cwt(t).CreateClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateCreateRequest{
			Template: &wfv1.ClusterWorkflowTemplate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: echoSpec()}}); err != nil {
			t.Fatalf("create the ClusterWorkflowTemplate: %v", err)
		}
		t.Cleanup(func() {
			_, _ = e.cwt(t).DeleteClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateDeleteRequest{Name: name})
		})
		if _, err := e.cron(t).CreateCronWorkflow(e.ctx, &cronpkg.CreateCronWorkflowRequest{Namespace: e.ns, CronWorkflow: &wfv1.CronWorkflow{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       wfv1.CronWorkflowSpec{Schedules: []string{"0 0 1 1 *"}, Suspend: true, WorkflowSpec: echoSpec()},
		}}); err != nil {
			t.Fatalf("create the CronWorkflow: %v", err)
		}
		for _, c := range []struct{ kind, label string }{
			{"WorkflowTemplate", labelFromTemplate}, {"wftmpl", labelFromTemplate},
			{"ClusterWorkflowTemplate", "workflows.argoproj.io/cluster-workflow-template"},
			{"CronWorkflow", labelFromCron}, {"cronwf", labelFromCron},
		} {
			got, err := e.wf().SubmitWorkflow(e.ctx, &workflow.WorkflowSubmitRequest{Namespace: e.ns, ResourceKind: c.kind, ResourceName: name,
				SubmitOptions: &wfv1.SubmitOpts{Parameters: []string{"msg=from-" + c.kind}, Labels: "origin=submit"}})
			if err != nil {
				t.Errorf("submit from %s: %v", c.kind, err)
				continue
			}
			if got.Labels[c.label] != name || got.Labels["origin"] != "submit" {
				t.Errorf("submit from %s: labels %v, want %s=%s and origin=submit", c.kind, got.Labels, c.label, name)
			}
			if p := got.Spec.Arguments.Parameters; len(p) != 1 || p[0].Value == nil || p[0].Value.String() != "from-"+c.kind {
				t.Errorf("submit from %s: parameters %v, want msg=from-%s", c.kind, p, c.kind)
			}
			e.waitPhase(t, got.Name, wfv1.WorkflowSucceeded)
		}
		_, err := e.wf().SubmitWorkflow(e.ctx, &workflow.WorkflowSubmitRequest{Namespace: e.ns, ResourceKind: "Pod", ResourceName: name})
		wantCode(t, "submit from kind Pod", err, codes.InvalidArgument)
	})
}
