package compat

import (
	"slices"
	"testing"

	"github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflow"
	archivepkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflowarchive"
	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"google.golang.org/grpc/codes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestArchivedWorkflows: finished workflows appear in the archive; list
// by label selector and in pages, get by uid, the label keys and values,
// resubmit, retry (AlreadyExists while the live workflow exists, as
// Argo's), delete.
func TestArchivedWorkflows(t *testing.T) {
	eachTransport(t, "archive", func(t *testing.T, e *env) {
		arch := e.archive(t)
		a := e.create(t, failUnless("arch-a-", map[string]string{"arch": "yes", "tier": "a"}))
		b := e.create(t, podWorkflow("arch-b-", map[string]string{"arch": "yes", "tier": "b"}, "echo", "archived"))
		e.waitPhase(t, a.Name, wfv1.WorkflowFailed)
		e.waitPhase(t, b.Name, wfv1.WorkflowSucceeded)
		sel := &metav1.ListOptions{LabelSelector: "arch=yes"}
		want := []string{a.Name, b.Name}
		slices.Sort(want)

		var list *wfv1.WorkflowList
		_ = poll(waitTimeout, func() error { // the check below says what is missing
			var err error
			list, err = arch.ListArchivedWorkflows(e.ctx, &archivepkg.ListArchivedWorkflowsRequest{Namespace: e.ns, ListOptions: sel})
			if err != nil {
				t.Fatalf("list the archive: %v", err)
			}
			if len(list.Items) != 2 {
				return errNotYet
			}
			return nil
		})
		if got := slices.Sorted(slices.Values(names(list.Items))); !slices.Equal(got, want) {
			t.Fatalf("the archive lists %v with arch=yes, want %v", got, want)
		}
		uids := map[string]string{}
		for _, wf := range list.Items {
			uids[wf.Name] = string(wf.UID)
			if !wf.Status.Phase.Completed() || wf.Namespace != e.ns {
				t.Errorf("archived %s/%s in phase %q", wf.Namespace, wf.Name, wf.Status.Phase)
			}
		}
		if uids[a.Name] != string(a.UID) || uids[b.Name] != string(b.UID) {
			t.Errorf("archived uids %v, live ones %s %s", uids, a.UID, b.UID)
		}

		var paged []string
		cont := ""
		for pages := 1; ; pages++ {
			page, err := arch.ListArchivedWorkflows(e.ctx, &archivepkg.ListArchivedWorkflowsRequest{Namespace: e.ns,
				ListOptions: &metav1.ListOptions{LabelSelector: "arch=yes", Limit: 1, Continue: cont}})
			if err != nil {
				t.Fatalf("list page %d: %v", pages, err)
			}
			if len(page.Items) != 1 {
				t.Errorf("archive page %d of limit 1 has %d items", pages, len(page.Items))
			}
			paged = append(paged, names(page.Items)...)
			if cont = page.Continue; cont == "" || pages >= 3 {
				break
			}
		}
		slices.Sort(paged)
		if !slices.Equal(paged, want) {
			t.Errorf("the archive's pages of 1 hold %v, want each of %v once", paged, want)
		}

		got, err := arch.GetArchivedWorkflow(e.ctx, &archivepkg.GetArchivedWorkflowRequest{Uid: string(b.UID), Namespace: e.ns})
		if err != nil {
			t.Fatalf("get archived %s: %v", b.UID, err)
		}
		if got.Name != b.Name || got.Status.Phase != wfv1.WorkflowSucceeded || got.Spec.Entrypoint != "main" || len(got.Status.Nodes) == 0 {
			t.Errorf("get archived %s: %s %s entrypoint %q with %d nodes", b.UID, got.Name, got.Status.Phase, got.Spec.Entrypoint, len(got.Status.Nodes))
		}
		_, err = arch.GetArchivedWorkflow(e.ctx, &archivepkg.GetArchivedWorkflowRequest{Uid: "00000000-0000-0000-0000-000000000000", Namespace: e.ns})
		wantCode(t, "get archived of an unknown uid", err, codes.NotFound)

		checkLabels(t, e, arch)
		archiveResubmitRetry(t, e, arch, a)

		if _, err := arch.DeleteArchivedWorkflow(e.ctx, &archivepkg.DeleteArchivedWorkflowRequest{Uid: string(b.UID), Namespace: e.ns}); err != nil {
			t.Fatalf("delete archived %s: %v", b.UID, err)
		}
		_, err = arch.GetArchivedWorkflow(e.ctx, &archivepkg.GetArchivedWorkflowRequest{Uid: string(b.UID), Namespace: e.ns})
		wantCode(t, "get archived after its delete", err, codes.NotFound)
	})
}

// checkLabels: the archive's label keys include arch and tier, and tier's
// values are a and b.
func checkLabels(t *testing.T, e *env, arch archivepkg.ArchivedWorkflowServiceClient) {
	t.Helper()
	keys, err := arch.ListArchivedWorkflowLabelKeys(e.ctx, &archivepkg.ListArchivedWorkflowLabelKeysRequest{Namespace: e.ns})
	if err != nil {
		t.Fatalf("label keys: %v", err)
	}
	if !slices.Contains(keys.Items, "arch") || !slices.Contains(keys.Items, "tier") {
		t.Errorf("label keys %v lack arch and tier", keys.Items)
	}
	values, err := arch.ListArchivedWorkflowLabelValues(e.ctx, &archivepkg.ListArchivedWorkflowLabelValuesRequest{Namespace: e.ns,
		ListOptions: &metav1.ListOptions{LabelSelector: "tier"}})
	if err != nil {
		t.Fatalf("label values: %v", err)
	}
	if got := slices.Sorted(slices.Values(values.Items)); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("label values of tier: %v, want [a b]", got)
	}
}

// archiveResubmitRetry resubmits the archived Failed workflow a (a new
// workflow, which passes with pass=yes), then retries it: refused while a
// is live, then, a deleted, a is created again and reruns.
func archiveResubmitRetry(t *testing.T, e *env, arch archivepkg.ArchivedWorkflowServiceClient, a *wfv1.Workflow) {
	t.Helper()
	re, err := arch.ResubmitArchivedWorkflow(e.ctx, &archivepkg.ResubmitArchivedWorkflowRequest{Uid: string(a.UID), Namespace: e.ns,
		Name: a.Name, Parameters: []string{"pass=yes"}})
	if err != nil {
		t.Fatalf("resubmit archived: %v", err)
	}
	if re.Name == a.Name || re.Labels[labelResubmitted] != a.Name {
		t.Errorf("resubmit archived answered %q labels %v, want a new workflow from %s", re.Name, re.Labels, a.Name)
	}
	e.waitPhase(t, re.Name, wfv1.WorkflowSucceeded)

	retry := &archivepkg.RetryArchivedWorkflowRequest{Uid: string(a.UID), Namespace: e.ns, Name: a.Name, Parameters: []string{"pass=yes"}}
	_, err = arch.RetryArchivedWorkflow(e.ctx, retry)
	wantCode(t, "retry archived while the workflow is live", err, codes.AlreadyExists)
	if _, err := e.wf().DeleteWorkflow(e.ctx, &workflow.WorkflowDeleteRequest{Namespace: e.ns, Name: a.Name}); err != nil {
		t.Fatalf("delete the live %s: %v", a.Name, err)
	}
	got, err := arch.RetryArchivedWorkflow(e.ctx, retry)
	if err != nil {
		t.Fatalf("retry archived: %v", err)
	}
	if got.Name != a.Name || got.Status.Phase.Completed() {
		t.Errorf("retry archived answered %s in phase %q, want %s reopened", got.Name, got.Status.Phase, a.Name)
	}
	e.waitPhase(t, a.Name, wfv1.WorkflowSucceeded)
}
