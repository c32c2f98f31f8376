package compat

import (
	"slices"
	"testing"

	clusterpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/clusterworkflowtemplate"
	cronpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/cronworkflow"
	templatepkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflowtemplate"
	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"google.golang.org/grpc/codes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// brokenSpec refers to a template that does not exist: lint must refuse
// it, naming it.
func brokenSpec() wfv1.WorkflowSpec {
	s := echoSpec()
	s.Templates = append(s.Templates, wfv1.Template{Name: "outer", Steps: []wfv1.ParallelSteps{
		{Steps: []wfv1.WorkflowStep{{Name: "a", Template: "nope"}}}}})
	return s
}

func meta(name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: labels}
}

// checkEcho checks that spec is echoSpec with the parameter's value msg.
func checkEcho(t *testing.T, what string, s wfv1.WorkflowSpec, msg string) {
	t.Helper()
	p := s.Arguments.Parameters
	if s.Entrypoint != "main" || len(s.Templates) != 1 || s.Templates[0].Container == nil || len(p) != 1 || p[0].Value == nil || p[0].Value.String() != msg {
		t.Errorf("%s: entrypoint %q, %d templates, parameters %v; want echoSpec with msg=%s", what, s.Entrypoint, len(s.Templates), p, msg)
	}
}

// TestWorkflowTemplateCRUD: create, AlreadyExists, get, list by selector,
// update, lint (valid, invalid), delete, NotFound.
func TestWorkflowTemplateCRUD(t *testing.T) {
	eachTransport(t, "kinds-wt", func(t *testing.T, e *env) {
		c := e.wt(t)
		one := &wfv1.WorkflowTemplate{ObjectMeta: meta("one", map[string]string{"sel": "yes"}), Spec: echoSpec()}
		got, err := c.CreateWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateCreateRequest{Namespace: e.ns, Template: one})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if got.Name != "one" || got.Namespace != e.ns || got.Labels["sel"] != "yes" || got.UID == "" {
			t.Errorf("create answered %s/%s labels %v uid %q", got.Namespace, got.Name, got.Labels, got.UID)
		}
		checkEcho(t, "create", got.Spec, "default")
		_, err = c.CreateWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateCreateRequest{Namespace: e.ns,
			Template: &wfv1.WorkflowTemplate{ObjectMeta: meta("two", map[string]string{"sel": "no"}), Spec: echoSpec()}})
		must(t, err)
		_, err = c.CreateWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateCreateRequest{Namespace: e.ns, Template: one})
		wantCode(t, "create of a duplicate", err, codes.AlreadyExists, "one")

		got, err = c.GetWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateGetRequest{Namespace: e.ns, Name: "one"})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		checkEcho(t, "get", got.Spec, "default")
		list, err := c.ListWorkflowTemplates(e.ctx, &templatepkg.WorkflowTemplateListRequest{Namespace: e.ns, ListOptions: &metav1.ListOptions{LabelSelector: "sel=yes"}})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != "one" {
			t.Errorf("list sel=yes: %d items, want one", len(list.Items))
		}

		got.Spec.Arguments.Parameters[0].Value = wfv1.AnyStringPtr("updated")
		got.Labels["updated"] = "yes"
		upd, err := c.UpdateWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateUpdateRequest{Namespace: e.ns, Name: "one", Template: got})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		checkEcho(t, "update", upd.Spec, "updated")
		if got, err = c.GetWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateGetRequest{Namespace: e.ns, Name: "one"}); err != nil {
			t.Fatalf("get after update: %v", err)
		}
		checkEcho(t, "get after update", got.Spec, "updated")
		if got.Labels["updated"] != "yes" {
			t.Errorf("get after update: labels %v", got.Labels)
		}

		lint, err := c.LintWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateLintRequest{Namespace: e.ns,
			Template: &wfv1.WorkflowTemplate{ObjectMeta: meta("lint", nil), Spec: echoSpec()}})
		if err != nil {
			t.Fatalf("lint of a valid template: %v", err)
		}
		if lint.Name != "lint" {
			t.Errorf("lint answered %q", lint.Name)
		}
		_, err = c.LintWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateLintRequest{Namespace: e.ns,
			Template: &wfv1.WorkflowTemplate{ObjectMeta: meta("lint", nil), Spec: brokenSpec()}})
		wantCode(t, "lint of a template calling a missing one", err, codes.InvalidArgument, "nope")
		if _, err := c.GetWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateGetRequest{Namespace: e.ns, Name: "lint"}); codeOf(err) != codes.NotFound {
			t.Errorf("lint stored the template: get answered %v", err)
		}

		if _, err := c.DeleteWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateDeleteRequest{Namespace: e.ns, Name: "one"}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		_, err = c.GetWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateGetRequest{Namespace: e.ns, Name: "one"})
		wantCode(t, "get after delete", err, codes.NotFound, "one")
		_, err = c.DeleteWorkflowTemplate(e.ctx, &templatepkg.WorkflowTemplateDeleteRequest{Namespace: e.ns, Name: "one"})
		wantCode(t, "delete of a deleted template", err, codes.NotFound, "one")
	})
}

// TestClusterWorkflowTemplateCRUD: as TestWorkflowTemplateCRUD, on the
// cluster scope (names carry the transport, as both run at once).
func TestClusterWorkflowTemplateCRUD(t *testing.T) {
	eachTransport(t, "kinds-cwt", func(t *testing.T, e *env) {
		c := e.cwt(t)
		name, sel := "cwt-one-"+e.name, "cwt-sel-"+e.name
		del := func(n string) (*clusterpkg.ClusterWorkflowTemplateDeleteResponse, error) {
			return c.DeleteClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateDeleteRequest{Name: n})
		}
		one := &wfv1.ClusterWorkflowTemplate{ObjectMeta: meta(name, map[string]string{sel: "yes"}), Spec: echoSpec()}
		got, err := c.CreateClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateCreateRequest{Template: one})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		t.Cleanup(func() { _, _ = del(name); _, _ = del(name + "-two") })
		if got.Name != name || got.Namespace != "" || got.Labels[sel] != "yes" || got.UID == "" {
			t.Errorf("create answered %q/%s labels %v uid %q", got.Namespace, got.Name, got.Labels, got.UID)
		}
		checkEcho(t, "create", got.Spec, "default")
		_, err = c.CreateClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateCreateRequest{
			Template: &wfv1.ClusterWorkflowTemplate{ObjectMeta: meta(name+"-two", map[string]string{sel: "no"}), Spec: echoSpec()}})
		must(t, err)
		_, err = c.CreateClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateCreateRequest{Template: one})
		wantCode(t, "create of a duplicate", err, codes.AlreadyExists, name)

		got, err = c.GetClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateGetRequest{Name: name})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		checkEcho(t, "get", got.Spec, "default")
		list, err := c.ListClusterWorkflowTemplates(e.ctx, &clusterpkg.ClusterWorkflowTemplateListRequest{ListOptions: &metav1.ListOptions{LabelSelector: sel + "=yes"}})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != name {
			t.Errorf("list %s=yes: %d items, want %s", sel, len(list.Items), name)
		}

		got.Spec.Arguments.Parameters[0].Value = wfv1.AnyStringPtr("updated")
		upd, err := c.UpdateClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateUpdateRequest{Name: name, Template: got})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		checkEcho(t, "update", upd.Spec, "updated")
		if got, err = c.GetClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateGetRequest{Name: name}); err != nil {
			t.Fatalf("get after update: %v", err)
		}
		checkEcho(t, "get after update", got.Spec, "updated")

		if _, err := c.LintClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateLintRequest{
			Template: &wfv1.ClusterWorkflowTemplate{ObjectMeta: meta(name+"-lint", nil), Spec: echoSpec()}}); err != nil {
			t.Errorf("lint of a valid template: %v", err)
		}
		_, err = c.LintClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateLintRequest{
			Template: &wfv1.ClusterWorkflowTemplate{ObjectMeta: meta(name+"-lint", nil), Spec: brokenSpec()}})
		wantCode(t, "lint of a template calling a missing one", err, codes.InvalidArgument, "nope")

		if _, err := del(name); err != nil {
			t.Fatalf("delete: %v", err)
		}
		_, err = c.GetClusterWorkflowTemplate(e.ctx, &clusterpkg.ClusterWorkflowTemplateGetRequest{Name: name})
		wantCode(t, "get after delete", err, codes.NotFound, name)
	})
}

// TestCronWorkflowCRUD: create, get, list by selector, update, lint
// (valid, invalid schedule), suspend, resume, delete.
func TestCronWorkflowCRUD(t *testing.T) {
	eachTransport(t, "kinds-cron", func(t *testing.T, e *env) {
		c := e.cron(t)
		cron := func(name, sel, schedule string) *wfv1.CronWorkflow {
			return &wfv1.CronWorkflow{ObjectMeta: meta(name, map[string]string{"sel": sel}),
				Spec: wfv1.CronWorkflowSpec{Schedules: []string{schedule}, WorkflowSpec: echoSpec()}}
		}
		got, err := c.CreateCronWorkflow(e.ctx, &cronpkg.CreateCronWorkflowRequest{Namespace: e.ns, CronWorkflow: cron("nightly", "yes", "0 0 1 1 *")})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if got.Name != "nightly" || got.Namespace != e.ns || !slices.Equal(got.Spec.Schedules, []string{"0 0 1 1 *"}) || got.Spec.Suspend {
			t.Errorf("create answered %s/%s schedules %v suspend %v", got.Namespace, got.Name, got.Spec.Schedules, got.Spec.Suspend)
		}
		checkEcho(t, "create", got.Spec.WorkflowSpec, "default")
		_, err = c.CreateCronWorkflow(e.ctx, &cronpkg.CreateCronWorkflowRequest{Namespace: e.ns, CronWorkflow: cron("other", "no", "0 0 1 1 *")})
		must(t, err)

		got, err = c.GetCronWorkflow(e.ctx, &cronpkg.GetCronWorkflowRequest{Namespace: e.ns, Name: "nightly"})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		checkEcho(t, "get", got.Spec.WorkflowSpec, "default")
		list, err := c.ListCronWorkflows(e.ctx, &cronpkg.ListCronWorkflowsRequest{Namespace: e.ns, ListOptions: &metav1.ListOptions{LabelSelector: "sel=yes"}})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != "nightly" {
			t.Errorf("list sel=yes: %d items, want nightly", len(list.Items))
		}

		got.Spec.Schedules = []string{"30 1 * * *"}
		upd, err := c.UpdateCronWorkflow(e.ctx, &cronpkg.UpdateCronWorkflowRequest{Namespace: e.ns, Name: "nightly", CronWorkflow: got})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if !slices.Equal(upd.Spec.Schedules, []string{"30 1 * * *"}) {
			t.Errorf("update answered schedules %v", upd.Spec.Schedules)
		}
		if got, err = c.GetCronWorkflow(e.ctx, &cronpkg.GetCronWorkflowRequest{Namespace: e.ns, Name: "nightly"}); err != nil {
			t.Errorf("get after update: %v", err)
		} else if !slices.Equal(got.Spec.Schedules, []string{"30 1 * * *"}) {
			t.Errorf("get after update: schedules %v", got.Spec.Schedules)
		}

		if _, err := c.LintCronWorkflow(e.ctx, &cronpkg.LintCronWorkflowRequest{Namespace: e.ns, CronWorkflow: cron("lint", "x", "0 0 1 1 *")}); err != nil {
			t.Errorf("lint of a valid cron workflow: %v", err)
		}
		_, err = c.LintCronWorkflow(e.ctx, &cronpkg.LintCronWorkflowRequest{Namespace: e.ns, CronWorkflow: cron("lint", "x", "not a schedule")})
		wantCode(t, "lint of a bad schedule", err, codes.InvalidArgument, "not a schedule")

		sus, err := c.SuspendCronWorkflow(e.ctx, &cronpkg.CronWorkflowSuspendRequest{Namespace: e.ns, Name: "nightly"})
		if err != nil {
			t.Errorf("suspend: %v", err)
		} else if !sus.Spec.Suspend {
			t.Errorf("suspend answered spec.suspend false")
		}
		res, err := c.ResumeCronWorkflow(e.ctx, &cronpkg.CronWorkflowResumeRequest{Namespace: e.ns, Name: "nightly"})
		if err != nil {
			t.Errorf("resume: %v", err)
		} else if res.Spec.Suspend {
			t.Errorf("resume answered spec.suspend true")
		}

		if _, err := c.DeleteCronWorkflow(e.ctx, &cronpkg.DeleteCronWorkflowRequest{Namespace: e.ns, Name: "nightly"}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		_, err = c.GetCronWorkflow(e.ctx, &cronpkg.GetCronWorkflowRequest{Namespace: e.ns, Name: "nightly"})
		wantCode(t, "get after delete", err, codes.NotFound, "nightly")
	})
}
