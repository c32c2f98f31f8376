package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/braidwf/braid/internal/runtime"
	apiv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// pvcProtection is the finalizer the apiserver puts on every PVC; the
// controller that removes it (kube-controller-manager's) waits until no pod
// uses the claim, and a completed pod still counts. Like Argo, the runtime
// removes it from the PVCs it deletes.
const pvcProtection = "kubernetes.io/pvc-protection"

// claimName is the PVC of a volumeClaimTemplate, named as Argo names it.
func claimName(workflow, claim string) string { return workflow + "-" + claim }

// permanentError is a failure that retrying does not cure (a bad claim
// template, a PVC owned by someone else, a denied request). The controller
// recognises it by its Permanent method and ends the workflow Error.
type permanentError struct{ err error }

func (e permanentError) Error() string   { return e.err.Error() }
func (e permanentError) Unwrap() error   { return e.err }
func (e permanentError) Permanent() bool { return true }

// WorkflowStarted creates the PVCs of the workflow's volumeClaimTemplates
// before its first pod, each named <workflow>-<claim>, labelled with the
// workflow and owned by it, and returns them for
// status.persistentVolumeClaims (the controller writes it). It is
// idempotent: a PVC that exists and is owned by this workflow is reused
// (a restarted controller, a retried workflow).
func (rt *Runtime) WorkflowStarted(ctx context.Context, wf *v1alpha1.Workflow) (runtime.WorkflowResources, error) {
	claims := wf.ExecSpec().VolumeClaimTemplates
	if len(claims) == 0 || wf.Status.Phase.Completed() {
		return runtime.WorkflowResources{PersistentVolumeClaims: wf.Status.PersistentVolumeClaims}, nil
	}
	vols, err := rt.createClaims(ctx, wf, claims)
	return runtime.WorkflowResources{PersistentVolumeClaims: vols}, err
}

// createClaims creates (or finds) the PVC of each claim template and
// returns their volumes.
func (rt *Runtime) createClaims(ctx context.Context, wf *v1alpha1.Workflow, claims []apiv1.PersistentVolumeClaim) ([]apiv1.Volume, error) {
	pvcs := rt.cfg.Client.CoreV1().PersistentVolumeClaims(wf.Namespace)
	vols := make([]apiv1.Volume, 0, len(claims))
	for i, tmpl := range claims {
		if tmpl.Name == "" {
			return nil, permanentError{fmt.Errorf("volumeClaimTemplates[%d].metadata.name is required", i)}
		}
		pvc := claimFor(wf, &tmpl)
		_, err := pvcs.Create(ctx, pvc, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var old *apiv1.PersistentVolumeClaim
			if old, err = pvcs.Get(ctx, pvc.Name, metav1.GetOptions{}); err == nil && !claimOwned(old, wf) {
				return nil, permanentError{fmt.Errorf("%s pvc already exists with different ownerreference", pvc.Name)}
			}
		}
		if err != nil {
			err = fmt.Errorf("create pvc %s/%s: %w", wf.Namespace, pvc.Name, err)
			if isUserFault(err) {
				return nil, permanentError{err}
			}
			return nil, err
		}
		vols = append(vols, apiv1.Volume{Name: tmpl.Name, VolumeSource: apiv1.VolumeSource{
			PersistentVolumeClaim: &apiv1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}})
	}
	return vols, nil
}

// claimFor is the PVC of one claim template.
func claimFor(wf *v1alpha1.Workflow, tmpl *apiv1.PersistentVolumeClaim) *apiv1.PersistentVolumeClaim {
	pvc := tmpl.DeepCopy()
	pvc.Name = claimName(wf.Name, tmpl.Name)
	pvc.Namespace = wf.Namespace
	pvc.ResourceVersion, pvc.UID = "", ""
	pvc.Status = apiv1.PersistentVolumeClaimStatus{}
	if pvc.Labels == nil {
		pvc.Labels = map[string]string{}
	}
	pvc.Labels[LabelWorkflow] = wf.Name
	if wf.UID != "" {
		yes := true
		pvc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow",
			Name: wf.Name, UID: wf.UID, Controller: &yes}}
	}
	return pvc
}

// WorkflowCompleted cleans up after a completed workflow: its PVCs per
// spec.volumeClaimGC (OnWorkflowSuccess, the default, keeps them when the
// workflow did not succeed, for a retry), and its pods per spec.podGC
// (OnWorkflowCompletion, OnWorkflowSuccess). The PVCs deleted leave
// status.persistentVolumeClaims.
func (rt *Runtime) WorkflowCompleted(ctx context.Context, wf *v1alpha1.Workflow) (runtime.WorkflowResources, error) {
	var errs []error
	if gc := wf.ExecSpec().PodGC; gc != nil && (gc.Strategy == v1alpha1.PodGCOnWorkflowCompletion || gc.Strategy == v1alpha1.PodGCOnWorkflowSuccess) {
		errs = append(errs, rt.collectWorkflowPods(wf))
	}
	kept, err := rt.deleteClaims(ctx, wf)
	errs = append(errs, err)
	return runtime.WorkflowResources{PersistentVolumeClaims: kept}, errors.Join(errs...)
}

// deleteClaims deletes the workflow's PVCs when volumeClaimGC says so, and
// returns the ones the status still records: those it could not delete.
func (rt *Runtime) deleteClaims(ctx context.Context, wf *v1alpha1.Workflow) ([]apiv1.Volume, error) {
	strategy := v1alpha1.VolumeClaimGCOnSuccess
	if gc := wf.ExecSpec().VolumeClaimGC; gc != nil && gc.Strategy != "" {
		strategy = gc.Strategy
	}
	if strategy == v1alpha1.VolumeClaimGCOnSuccess && wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		return wf.Status.PersistentVolumeClaims, nil
	}
	names := map[string]bool{}
	for _, v := range claimVolumes(&wf.Spec, wf.Name) {
		names[v.PersistentVolumeClaim.ClaimName] = true
	}
	for _, v := range wf.Status.PersistentVolumeClaims {
		if v.PersistentVolumeClaim != nil {
			names[v.PersistentVolumeClaim.ClaimName] = true
		}
	}
	var errs []error
	kept := []apiv1.Volume{}
	for _, v := range wf.Status.PersistentVolumeClaims {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		if err := rt.deleteClaim(ctx, wf, v.PersistentVolumeClaim.ClaimName); err != nil {
			errs = append(errs, err)
			kept = append(kept, v)
		}
		delete(names, v.PersistentVolumeClaim.ClaimName)
	}
	for _, name := range sortedKeys(names) { // created, but not recorded (a restart in between)
		errs = append(errs, rt.deleteClaim(ctx, wf, name))
	}
	if len(kept) == 0 {
		kept = nil
	}
	return kept, errors.Join(errs...)
}

// deleteClaim deletes one PVC of the workflow and removes its protection
// finalizer; a PVC that is gone, or that another owner holds, is left.
func (rt *Runtime) deleteClaim(ctx context.Context, wf *v1alpha1.Workflow, name string) error {
	pvcs := rt.cfg.Client.CoreV1().PersistentVolumeClaims(wf.Namespace)
	pvc, err := pvcs.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("delete pvc %s/%s: %w", wf.Namespace, name, err)
	case !claimOwned(pvc, wf):
		return nil
	}
	if pvc.DeletionTimestamp == nil {
		err = pvcs.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pvc.UID}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("delete pvc %s/%s: %w", wf.Namespace, name, err)
		}
		if pvc, err = pvcs.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return fmt.Errorf("delete pvc %s/%s: %w", wf.Namespace, name, err)
		}
	}
	if !slices.Contains(pvc.Finalizers, pvcProtection) {
		return nil
	}
	pvc.Finalizers = slices.DeleteFunc(pvc.Finalizers, func(f string) bool { return f == pvcProtection })
	if _, err := pvcs.Update(ctx, pvc, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove the %s finalizer of pvc %s/%s: %w", pvcProtection, wf.Namespace, name, err)
	}
	return nil
}

// claimOwned: the PVC names wf as its owner (any PVC for a workflow with no
// uid, in tests). A PVC of the same name that is not the workflow's is
// never reused nor deleted.
func claimOwned(pvc *apiv1.PersistentVolumeClaim, wf *v1alpha1.Workflow) bool {
	if wf.UID == "" {
		return true
	}
	return slices.ContainsFunc(pvc.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == wf.UID })
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
