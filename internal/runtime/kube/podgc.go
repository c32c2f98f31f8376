package kube

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// AnnotationPodGC marks a pod that spec.podGC collects, with Argo's value
// "<strategy>/<delay>" (OnPodCompletion/0s). Only the pods that
// podGC.labelSelector selects carry it, so the runtime decides from the
// pod alone, also after a restart.
const AnnotationPodGC = "workflows.argoproj.io/pod-gc-strategy"

// markForGC annotates the pod when gc collects it.
func markForGC(pod *apiv1.Pod, gc *v1alpha1.PodGC) error {
	if gc == nil || gc.Strategy == v1alpha1.PodGCNone {
		return nil
	}
	delay, err := gcDelay(gc.DeleteDelayDuration)
	if err != nil {
		return err
	}
	sel := labels.Everything()
	if gc.LabelSelector != nil {
		if sel, err = metav1.LabelSelectorAsSelector(gc.LabelSelector); err != nil {
			return userError(fmt.Sprintf("podGC.labelSelector: %v", err))
		}
	}
	if !sel.Matches(labels.Set(pod.Labels)) {
		return nil
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[AnnotationPodGC] = string(gc.Strategy) + "/" + delay.String()
	return nil
}

// gcDelay parses podGC.deleteDelayDuration: a Go duration, or seconds.
func gcDelay(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, userError(fmt.Sprintf("podGC.deleteDelayDuration %q is not a duration", s))
	}
	return d, nil
}

// podGC reads a pod's AnnotationPodGC; ok is false for a pod not collected.
func podGC(pod *apiv1.Pod) (strategy v1alpha1.PodGCStrategy, delay time.Duration, ok bool) {
	v, found := pod.Annotations[AnnotationPodGC]
	if !found {
		return "", 0, false
	}
	s, d, _ := strings.Cut(v, "/")
	delay, err := time.ParseDuration(d)
	if err != nil {
		delay = 0
	}
	return v1alpha1.PodGCStrategy(s), delay, true
}

// collectPod deletes a pod whose run ended, when its podGC strategy is
// OnPodCompletion, or OnPodSuccess and the run Succeeded. The caller has
// taken the result from the pod and reported it already.
func (rt *Runtime) collectPod(pod *apiv1.Pod, ev runtime.StepEvent) {
	strategy, delay, ok := podGC(pod)
	if !ok || pod.DeletionTimestamp != nil || !ev.Phase.Completed() {
		return
	}
	switch {
	case strategy == v1alpha1.PodGCOnPodCompletion:
	case strategy == v1alpha1.PodGCOnPodSuccess && ev.Phase == v1alpha1.NodeSucceeded:
	default:
		return
	}
	rt.deleteLater(pod.Namespace, pod.Name, pod.UID, delay)
}

// collectWorkflowPods deletes the pods of a completed workflow whose
// strategy is OnWorkflowCompletion, or OnWorkflowSuccess and the workflow
// Succeeded. It reads the informer's cache.
func (rt *Runtime) collectWorkflowPods(wf *v1alpha1.Workflow) error {
	sel := labels.SelectorFromSet(labels.Set{LabelWorkflow: wf.Name})
	var pods []*apiv1.Pod
	err := cache.ListAllByNamespace(rt.informer.GetIndexer(), wf.Namespace, sel, func(obj any) {
		if p, ok := obj.(*apiv1.Pod); ok && ownedBy(p.OwnerReferences, wf.UID) {
			pods = append(pods, p)
		}
	})
	if err != nil {
		return fmt.Errorf("list the pods of %s/%s: %w", wf.Namespace, wf.Name, err)
	}
	for _, p := range pods {
		strategy, delay, ok := podGC(p)
		if !ok || p.DeletionTimestamp != nil {
			continue
		}
		switch {
		case strategy == v1alpha1.PodGCOnWorkflowCompletion:
		case strategy == v1alpha1.PodGCOnWorkflowSuccess && wf.Status.Phase == v1alpha1.WorkflowSucceeded:
		default:
			continue
		}
		rt.deleteLater(p.Namespace, p.Name, p.UID, delay)
	}
	return nil
}

// ownedBy: refs name the Workflow of uid. A pod without an owner (a test's,
// or a workflow with no uid) counts as owned.
func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	owned := false
	for _, r := range refs {
		if r.Kind == "Workflow" {
			if r.UID == uid {
				return true
			}
			owned = true
		}
	}
	return !owned
}

// deleteLater deletes the pod after delay, in the background.
func (rt *Runtime) deleteLater(ns, name string, uid types.UID, delay time.Duration) {
	del := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := rt.cfg.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			rt.log.Warn("pod GC: delete pod", "pod", ns+"/"+name, "err", err)
		}
	}
	if delay <= 0 {
		go del()
		return
	}
	time.AfterFunc(delay, del)
}
