package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	apiv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func claimWorkflow(t *testing.T, ns, name, uid, spec string) *v1alpha1.Workflow {
	return &v1alpha1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(uid)},
		Spec: *mustSpec(t, spec)}
}

const claimsSpec = `
volumeClaimTemplates:
- metadata: {name: work, labels: {size: small}}
  spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}
- metadata: {name: cache}
  spec: {accessModes: [ReadWriteOnce], storageClassName: "", resources: {requests: {storage: 2Mi}}}
`

// The PVCs of volumeClaimTemplates on a real apiserver: created owned and
// labelled, reused after a restart, refused when another owns the name,
// and deleted per volumeClaimGC. This node has no PV provisioner nor PV
// binder: the claims stay Pending, binding is not exercised here.
func TestKubeClaims(t *testing.T) {
	c, ca := kubeClient(t)
	ns := testNamespace(t, c, ca)
	rt := newRuntime(t, c, ns)
	ctx := context.Background()
	pvcs := c.CoreV1().PersistentVolumeClaims(ns)
	t.Cleanup(func() { _ = pvcs.DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}) })

	wf := claimWorkflow(t, ns, "claims", "uid-claims", claimsSpec)
	if err := workflowStarted(ctx, rt, wf); err != nil {
		t.Fatal(err)
	}
	if got := js(wf.Status.PersistentVolumeClaims); got != `[{"name":"work","persistentVolumeClaim":{"claimName":"claims-work"}},{"name":"cache","persistentVolumeClaim":{"claimName":"claims-cache"}}]` {
		t.Errorf("status.persistentVolumeClaims = %s", got)
	}
	for _, name := range []string{"claims-work", "claims-cache"} {
		pvc, err := pvcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pvc %s: %v", name, err)
		}
		refs := pvc.OwnerReferences
		if len(refs) != 1 || refs[0].Kind != "Workflow" || refs[0].UID != "uid-claims" || refs[0].Name != "claims" ||
			refs[0].Controller == nil || !*refs[0].Controller {
			t.Errorf("pvc %s owners = %s", name, js(refs))
		}
		if pvc.Labels[LabelWorkflow] != "claims" {
			t.Errorf("pvc %s labels = %v", name, pvc.Labels)
		}
	}
	work, _ := pvcs.Get(ctx, "claims-work", metav1.GetOptions{})
	if work.Labels["size"] != "small" || work.Spec.Resources.Requests.Storage().String() != "1Mi" {
		t.Errorf("claims-work = %s, want the template's labels and spec", js(work))
	}

	// A restarted controller calls it again: the PVCs are reused.
	again := claimWorkflow(t, ns, "claims", "uid-claims", claimsSpec)
	if err := workflowStarted(ctx, rt, again); err != nil {
		t.Fatalf("second WorkflowStarted: %v", err)
	}
	if len(again.Status.PersistentVolumeClaims) != 2 {
		t.Errorf("second WorkflowStarted recorded %d claims", len(again.Status.PersistentVolumeClaims))
	}
	// A workflow of the same name but another uid may not take them.
	other := claimWorkflow(t, ns, "claims", "uid-other", claimsSpec)
	assertPermanent(t, workflowStarted(ctx, rt, other), "already exists with different ownerreference")
	assertPermanent(t, workflowStarted(ctx, rt, claimWorkflow(t, ns, "noname", "uid-n", `
volumeClaimTemplates: [{spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}}]`)),
		"volumeClaimTemplates[0].metadata.name is required")
	assertPermanent(t, workflowStarted(ctx, rt, claimWorkflow(t, ns, "bad", "uid-b", `
volumeClaimTemplates: [{metadata: {name: x}, spec: {accessModes: [ReadWriteOnce]}}]`)), "create pvc")

	// The default strategy, OnWorkflowSuccess, keeps the PVCs of a failed workflow...
	wf.Status.Phase = v1alpha1.WorkflowFailed
	if err := workflowCompleted(ctx, rt, wf); err != nil {
		t.Fatal(err)
	}
	if _, err := pvcs.Get(ctx, "claims-work", metav1.GetOptions{}); err != nil {
		t.Errorf("claims-work after a failed workflow: %v, want it kept", err)
	}
	// ...and deletes those of a succeeded one, protection finalizer and all.
	wf.Status.Phase = v1alpha1.WorkflowSucceeded
	if err := workflowCompleted(ctx, rt, wf); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"claims-work", "claims-cache"} {
		if pvc, err := pvcs.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("pvc %s after success: %v (finalizers %v), want it gone", name, err, pvc.Finalizers)
		}
	}
	if wf.Status.PersistentVolumeClaims != nil {
		t.Errorf("status.persistentVolumeClaims = %s after the deletion, want none", js(wf.Status.PersistentVolumeClaims))
	}

	// OnWorkflowCompletion deletes them whatever the outcome.
	always := claimWorkflow(t, ns, "always", "uid-always", claimsSpec+"volumeClaimGC: {strategy: OnWorkflowCompletion}\n")
	if err := workflowStarted(ctx, rt, always); err != nil {
		t.Fatal(err)
	}
	always.Status.Phase = v1alpha1.WorkflowError
	if err := workflowCompleted(ctx, rt, always); err != nil {
		t.Fatal(err)
	}
	list, err := pvcs.List(ctx, metav1.ListOptions{LabelSelector: LabelWorkflow + "=always"})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("pvcs of an errored workflow with OnWorkflowCompletion: %d left (%v)", len(list.Items), err)
	}
	// A PVC of that name that the workflow does not own is never deleted.
	foreign := &apiv1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "always-work"},
		Spec: apiv1.PersistentVolumeClaimSpec{AccessModes: []apiv1.PersistentVolumeAccessMode{apiv1.ReadWriteOnce},
			Resources: apiv1.VolumeResourceRequirements{Requests: work.Spec.Resources.Requests}}}
	if _, err := pvcs.Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := workflowCompleted(ctx, rt, always); err != nil {
		t.Fatal(err)
	}
	if _, err := pvcs.Get(ctx, "always-work", metav1.GetOptions{}); err != nil {
		t.Errorf("a PVC the workflow does not own: %v, want it kept", err)
	}
}

func assertPermanent(t *testing.T, err error, msg string) {
	t.Helper()
	var p interface{ Permanent() bool }
	if err == nil || !strings.Contains(err.Error(), msg) || !errors.As(err, &p) || !p.Permanent() {
		t.Errorf("err = %v (%T), want a permanent error saying %q", err, err, msg)
	}
}

// workflowStarted calls WorkflowStarted and records what it returns in
// wf's status, as the controller does.
func workflowStarted(ctx context.Context, rt *Runtime, wf *v1alpha1.Workflow) error {
	res, err := rt.WorkflowStarted(ctx, wf)
	if err == nil {
		wf.Status.PersistentVolumeClaims = res.PersistentVolumeClaims
	}
	return err
}

// workflowCompleted calls WorkflowCompleted and records what it returns.
func workflowCompleted(ctx context.Context, rt *Runtime, wf *v1alpha1.Workflow) error {
	res, err := rt.WorkflowCompleted(ctx, wf)
	wf.Status.PersistentVolumeClaims = res.PersistentVolumeClaims
	return err
}
