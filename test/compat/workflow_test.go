package compat

import (
	"slices"
	"testing"

	"github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflow"
	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"google.golang.org/grpc/codes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWorkflowCreateGet: create answers the stored workflow, which runs;
// get reads it back whole, or only the `fields` asked for; a duplicate
// name is AlreadyExists, a missing one NotFound; serverDryRun stores
// nothing.
func TestWorkflowCreateGet(t *testing.T) {
	eachTransport(t, "wf-create", func(t *testing.T, e *env) {
		sent := podWorkflow("create-", map[string]string{"compat": "create"}, "sh", "-c", "echo hi")
		created := e.create(t, sent)
		if created.GenerateName != "create-" || created.Labels["compat"] != "create" || created.UID == "" || created.CreationTimestamp.IsZero() {
			t.Errorf("create answered generateName %q labels %v uid %q created %v", created.GenerateName, created.Labels, created.UID, created.CreationTimestamp)
		}
		if tl := created.Spec.Templates; created.Spec.Entrypoint != "main" || len(tl) != 1 || tl[0].Container == nil ||
			!slices.Equal(tl[0].Container.Command, []string{"sh", "-c", "echo hi"}) {
			t.Errorf("create answered spec %+v", created.Spec)
		}

		got := e.get(t, created.Name)
		if got.Name != created.Name || got.UID != created.UID || got.Spec.Entrypoint != "main" || len(got.Spec.Templates) != 1 {
			t.Errorf("get: %s uid %s entrypoint %q, %d templates; created %s uid %s", got.Name, got.UID, got.Spec.Entrypoint, len(got.Spec.Templates), created.Name, created.UID)
		}

		some, err := e.wf().GetWorkflow(e.ctx, &workflow.WorkflowGetRequest{Namespace: e.ns, Name: created.Name, Fields: "metadata.name,status.phase"})
		if err != nil {
			t.Fatalf("get with fields: %v", err)
		}
		if some.Name != created.Name || some.Spec.Entrypoint != "" || len(some.Spec.Templates) != 0 || len(some.Labels) != 0 {
			t.Errorf("get with fields metadata.name,status.phase: name %q entrypoint %q, %d templates, labels %v", some.Name, some.Spec.Entrypoint, len(some.Spec.Templates), some.Labels)
		}

		dup := podWorkflow("", nil, "true")
		dup.Name = created.Name
		_, err = e.wf().CreateWorkflow(e.ctx, &workflow.WorkflowCreateRequest{Namespace: e.ns, Workflow: dup})
		wantCode(t, "create of a duplicate name", err, codes.AlreadyExists, created.Name)

		_, err = e.wf().GetWorkflow(e.ctx, &workflow.WorkflowGetRequest{Namespace: e.ns, Name: "missing"})
		wantCode(t, "get of a missing workflow", err, codes.NotFound, "missing")

		dry := podWorkflow("", nil, "true")
		dry.Name = "dry-run"
		answered, err := e.wf().CreateWorkflow(e.ctx, &workflow.WorkflowCreateRequest{Namespace: e.ns, Workflow: dry, ServerDryRun: true})
		if err != nil {
			t.Fatalf("serverDryRun create: %v", err)
		}
		if answered.Name != "dry-run" || answered.Spec.Entrypoint != "main" {
			t.Errorf("serverDryRun create answered %q entrypoint %q", answered.Name, answered.Spec.Entrypoint)
		}
		_, err = e.wf().GetWorkflow(e.ctx, &workflow.WorkflowGetRequest{Namespace: e.ns, Name: "dry-run"})
		wantCode(t, "get after a serverDryRun create", err, codes.NotFound)

		e.waitPhase(t, created.Name, wfv1.WorkflowSucceeded)
	})
}

// TestWorkflowList: a label selector selects exactly the labelled
// workflows; pages of listOptions.limit, followed by their continue
// tokens, cover every item exactly once; `fields` trims the items.
func TestWorkflowList(t *testing.T) {
	eachTransport(t, "wf-list", func(t *testing.T, e *env) {
		var want []string
		for range 5 {
			want = append(want, e.create(t, suspended(podWorkflow("page-", map[string]string{"page": "yes"}, "true"))).Name)
		}
		e.create(t, suspended(podWorkflow("other-", map[string]string{"page": "no"}, "true")))
		slices.Sort(want)

		sel := &metav1.ListOptions{LabelSelector: "page=yes"}
		all, err := e.wf().ListWorkflows(e.ctx, &workflow.WorkflowListRequest{Namespace: e.ns, ListOptions: sel})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if got := slices.Sorted(slices.Values(names(all.Items))); !slices.Equal(got, want) {
			t.Errorf("list page=yes: %v, want %v", got, want)
		}

		var paged []string
		cont := ""
		for pages := 1; ; pages++ {
			if pages > 5 {
				t.Fatalf("more than 5 pages of 2 for 5 workflows: %v", paged)
			}
			page, err := e.wf().ListWorkflows(e.ctx, &workflow.WorkflowListRequest{Namespace: e.ns,
				ListOptions: &metav1.ListOptions{LabelSelector: "page=yes", Limit: 2, Continue: cont}})
			if err != nil {
				t.Fatalf("list page %d (continue %q): %v", pages, cont, err)
			}
			if len(page.Items) > 2 {
				t.Errorf("page %d has %d items, limit 2", pages, len(page.Items))
			}
			paged = append(paged, names(page.Items)...)
			cont = page.Continue
			if cont == "" {
				if pages != 3 {
					t.Errorf("%d pages of limit 2 for 5 workflows, want 3", pages)
				}
				break
			}
		}
		slices.Sort(paged)
		if !slices.Equal(paged, want) {
			t.Errorf("the pages hold %v, want each of %v once", paged, want)
		}

		trimmed, err := e.wf().ListWorkflows(e.ctx, &workflow.WorkflowListRequest{Namespace: e.ns, ListOptions: sel, Fields: "items.metadata.name"})
		if err != nil {
			t.Fatalf("list with fields: %v", err)
		}
		if len(trimmed.Items) != len(want) {
			t.Fatalf("list with fields items.metadata.name: %d items, want %d", len(trimmed.Items), len(want))
		}
		for _, wf := range trimmed.Items {
			if wf.Name == "" || wf.Spec.Entrypoint != "" || len(wf.Labels) != 0 {
				t.Errorf("list with fields items.metadata.name: item %q with entrypoint %q labels %v", wf.Name, wf.Spec.Entrypoint, wf.Labels)
			}
		}
	})
}

// TestWorkflowDelete: delete one by name, then "delete by selector" as the
// argo CLI does it (list by the label selector, delete each); what the
// selector does not select stays.
func TestWorkflowDelete(t *testing.T) {
	eachTransport(t, "wf-delete", func(t *testing.T, e *env) {
		one := e.create(t, suspended(podWorkflow("one-", nil, "true"))).Name
		for range 3 {
			e.create(t, suspended(podWorkflow("sel-", map[string]string{"del": "yes"}, "true")))
		}
		keep := e.create(t, suspended(podWorkflow("keep-", map[string]string{"del": "no"}, "true"))).Name

		if _, err := e.wf().DeleteWorkflow(e.ctx, &workflow.WorkflowDeleteRequest{Namespace: e.ns, Name: one}); err != nil {
			t.Fatalf("delete %s: %v", one, err)
		}
		_, err := e.wf().GetWorkflow(e.ctx, &workflow.WorkflowGetRequest{Namespace: e.ns, Name: one})
		wantCode(t, "get after delete", err, codes.NotFound, one)
		_, err = e.wf().DeleteWorkflow(e.ctx, &workflow.WorkflowDeleteRequest{Namespace: e.ns, Name: one})
		wantCode(t, "delete of a deleted workflow", err, codes.NotFound, one)

		sel := &metav1.ListOptions{LabelSelector: "del=yes"}
		list, err := e.wf().ListWorkflows(e.ctx, &workflow.WorkflowListRequest{Namespace: e.ns, ListOptions: sel})
		if err != nil {
			t.Fatalf("list del=yes: %v", err)
		}
		if len(list.Items) != 3 {
			t.Fatalf("list del=yes: %v, want 3 workflows", names(list.Items))
		}
		for _, wf := range list.Items {
			if _, err := e.wf().DeleteWorkflow(e.ctx, &workflow.WorkflowDeleteRequest{Namespace: e.ns, Name: wf.Name}); err != nil {
				t.Errorf("delete %s: %v", wf.Name, err)
			}
		}
		list, err = e.wf().ListWorkflows(e.ctx, &workflow.WorkflowListRequest{Namespace: e.ns, ListOptions: sel})
		if err != nil {
			t.Fatalf("list del=yes after the deletes: %v", err)
		}
		if len(list.Items) != 0 {
			t.Errorf("after deleting by selector, del=yes still lists %v", names(list.Items))
		}
		e.get(t, keep)
	})
}

// TestWorkflowLint: lint of a valid workflow answers it and stores
// nothing; of an invalid one, InvalidArgument naming the fault.
func TestWorkflowLint(t *testing.T) {
	eachTransport(t, "wf-lint", func(t *testing.T, e *env) {
		good := podWorkflow("lint-", nil, "true")
		got, err := e.wf().LintWorkflow(e.ctx, &workflow.WorkflowLintRequest{Namespace: e.ns, Workflow: good})
		if err != nil {
			t.Fatalf("lint of a valid workflow: %v", err)
		}
		if got.GenerateName != "lint-" || got.Spec.Entrypoint != "main" || len(got.Spec.Templates) != 1 {
			t.Errorf("lint answered generateName %q entrypoint %q with %d templates", got.GenerateName, got.Spec.Entrypoint, len(got.Spec.Templates))
		}
		bad := podWorkflow("lint-", nil, "true")
		bad.Spec.Entrypoint = "nope"
		_, err = e.wf().LintWorkflow(e.ctx, &workflow.WorkflowLintRequest{Namespace: e.ns, Workflow: bad})
		wantCode(t, "lint of an entrypoint that does not exist", err, codes.InvalidArgument, "nope")

		list, err := e.wf().ListWorkflows(e.ctx, &workflow.WorkflowListRequest{Namespace: e.ns})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != 0 {
			t.Errorf("lint stored workflows: %v", names(list.Items))
		}
	})
}
