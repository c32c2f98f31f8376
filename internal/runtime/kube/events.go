package kube

import (
	"context"
	"fmt"
	"io"
	"time"

	apiv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/executor/emissary"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// maxFull bounds what is read of a result saved as braid-result.json.
const maxFull = 64 << 20

// onPod follows a pod's change: Running once the main container runs, the
// final event once it ended (or the pod cannot start), and a recheck when
// a bounded wait runs.
func (rt *Runtime) onPod(obj any) {
	pod, ok := obj.(*apiv1.Pod)
	if !ok || pod.Annotations[AnnotationRunID] == "" {
		return
	}
	st := rt.state(pod)
	o := observe(pod, rt.now(), rt.waits)
	rt.mu.Lock()
	if st.final {
		stop := o.mainDone && !st.stopped && sidecarsRunning(pod) && pod.DeletionTimestamp == nil
		st.stopped = st.stopped || stop
		rt.mu.Unlock()
		if stop {
			rt.stopSidecarsLater(pod)
		}
		return
	}
	if o.recheck > 0 && st.timer == nil {
		key, _ := cache.MetaNamespaceKeyFunc(pod)
		st.timer = time.AfterFunc(o.recheck, func() { rt.recheck(st, key) })
	}
	switch {
	case o.final():
		st.final = true // claimed: no other handler reports it
		rt.mu.Unlock()
		rt.report(st, pod, o)
	case o.phase == v1alpha1.NodeRunning && (st.last.Phase == "" || !sameContainers(st.last.Containers, o.containers)):
		ev := st.event(o)
		st.last = ev
		rt.mu.Unlock()
		rt.events.Push(ev)
	default:
		rt.mu.Unlock()
	}
}

// report emits the final event of a run claimed by onPod, reading a big
// result back from the repository, and cleans up the pod: sidecars are
// stopped, a pod that cannot start is deleted.
func (rt *Runtime) report(st *runState, pod *apiv1.Pod, o observation) {
	if o.full != nil {
		ctx, cancel := context.WithTimeout(artifact.WithNamespace(context.Background(), pod.Namespace), time.Minute)
		o = rt.loadFull(ctx, o)
		cancel()
	}
	rt.mu.Lock()
	ev := st.event(o)
	st.last = ev
	if st.timer != nil {
		st.timer.Stop()
	}
	stop := !st.stopped && sidecarsRunning(pod) && pod.DeletionTimestamp == nil
	st.stopped = st.stopped || stop
	rt.mu.Unlock()
	rt.events.Push(ev)
	mainStarted := containerStatus(pod.Status.ContainerStatuses, MainContainer) != nil &&
		containerStatus(pod.Status.ContainerStatuses, MainContainer).State.Waiting == nil
	switch {
	case pod.DeletionTimestamp != nil:
	case !mainStarted && pod.Status.Phase == apiv1.PodPending:
		go rt.deletePod(pod.Namespace, pod.Name, pod.UID)
	case stop:
		rt.stopSidecarsLater(pod)
	}
	rt.collectPod(pod, ev) // podgc.go: after the result is taken and reported
}

// recheck looks at the pod again when a bounded wait ends.
func (rt *Runtime) recheck(st *runState, key string) {
	rt.mu.Lock()
	st.timer = nil
	rt.mu.Unlock()
	obj, exists, err := rt.informer.GetStore().GetByKey(key)
	if err == nil && exists {
		rt.onPod(obj)
	}
}

// onDelete ends a run whose pod was deleted before it reported: with the
// pod's last state when that was final, else Error "pod deleted".
func (rt *Runtime) onDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*apiv1.Pod)
	if !ok || pod.Annotations[AnnotationRunID] == "" {
		return
	}
	st := rt.state(pod)
	o := observe(pod, rt.now(), rt.waits)
	rt.mu.Lock()
	if st.final {
		rt.mu.Unlock()
		return
	}
	st.final = true
	rt.mu.Unlock()
	if !o.final() {
		o = observation{phase: v1alpha1.NodeError, message: MsgPodDeleted, finishedAt: rt.now()}
	}
	pod = pod.DeepCopy()
	pod.DeletionTimestamp = &metav1.Time{Time: rt.now()} // nothing left to clean up
	rt.report(st, pod, o)
}

// state returns the run's state, creating it for a pod this runtime did
// not start (one found after a restart).
func (rt *Runtime) state(pod *apiv1.Pod) *runState {
	id := pod.Annotations[AnnotationRunID]
	rt.mu.Lock()
	defer rt.mu.Unlock()
	st := rt.runs[id]
	if st == nil {
		st = &runState{id: id, ns: pod.Namespace, pod: pod.Name, nodeID: pod.Annotations[AnnotationNodeID]}
		for _, ref := range pod.OwnerReferences {
			if ref.Kind == "Workflow" {
				st.wfUID = string(ref.UID)
			}
		}
		rt.runs[id] = st
	}
	return st
}

// finish ends a run with res (a run that never got a pod, or a kill).
func (rt *Runtime) finish(st *runState, res step.Result) {
	rt.mu.Lock()
	if st.final && st.last.Phase.Completed() {
		rt.mu.Unlock()
		return
	}
	st.final = true
	if st.timer != nil {
		st.timer.Stop()
	}
	now := rt.now()
	if res.StartedAt.IsZero() {
		res.StartedAt = now
	}
	res.FinishedAt = now
	ev := st.eventOf(res)
	st.last = ev
	rt.mu.Unlock()
	rt.events.Push(ev)
}

// eventOf is the run's event with the result res.
func (st *runState) eventOf(res step.Result) runtime.StepEvent {
	return runtime.StepEvent{RunID: st.id, WorkflowUID: st.wfUID, NodeID: st.nodeID, Result: res}
}

// event is the StepEvent of an observation. Call with rt.mu held.
func (st *runState) event(o observation) runtime.StepEvent {
	ev := st.eventOf(step.Result{Phase: o.phase, Message: o.message, ExitCode: o.exitCode, Outputs: o.outputs,
		StartedAt: o.startedAt, FinishedAt: o.finishedAt, PodIP: o.podIP, HostNode: o.hostNode, Containers: o.containers})
	if ev.StartedAt.IsZero() {
		ev.StartedAt = st.last.StartedAt
	}
	return ev
}

// loadFull replaces a slim result by the full one the emissary saved.
func (rt *Runtime) loadFull(ctx context.Context, o observation) observation {
	fail := func(err error) observation {
		o.phase, o.full = v1alpha1.NodeError, nil
		o.message = fmt.Sprintf("read the step's result from %s: %v", emissary.ResultObject, err)
		return o
	}
	if rt.cfg.Artifacts == nil {
		return fail(fmt.Errorf("the runtime has no artifact drivers"))
	}
	drv, err := rt.cfg.Artifacts.For(o.full)
	if err != nil {
		return fail(err)
	}
	r, err := drv.OpenStream(ctx, &v1alpha1.Artifact{Name: emissary.ResultObject, ArtifactLocation: *o.full})
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxFull))
	if err != nil {
		return fail(err)
	}
	m, err := emissary.ParseMessage(string(data))
	if err != nil {
		return fail(err)
	}
	o.phase, o.message, o.exitCode, o.outputs, o.full = m.FinalPhase(), m.Message, m.ExitCode, m.Outputs, nil
	return o
}

// sidecarStopWait is how long the sidecars of a pod whose work containers
// ended have to stop before stopPod: their emissaries stop them within the
// kill grace (10 s) of noticing main's marker; only a container that is not
// wrapped (one added by a podSpecPatch or injected by an admission
// webhook), or the sidecars of a main that died without its marker, wait
// this long.
const sidecarStopWait = 25 * time.Second

// stopSidecarsLater stops the pod's sidecars after sidecarStopWait if they
// still run then.
func (rt *Runtime) stopSidecarsLater(pod *apiv1.Pod) {
	key, _ := cache.MetaNamespaceKeyFunc(pod)
	uid := pod.UID
	time.AfterFunc(sidecarStopWait, func() {
		obj, exists, err := rt.informer.GetStore().GetByKey(key)
		if err != nil || !exists {
			return
		}
		p, ok := obj.(*apiv1.Pod)
		if ok && p.UID == uid && p.DeletionTimestamp == nil && sidecarsRunning(p) {
			rt.stopPod(p.Namespace, p.Name, uid)
		}
	})
}

// stopPod ends the sidecars of a pod whose main container ended, as Argo
// kills them: activeDeadlineSeconds lowered to 1 makes the kubelet stop
// every container, and the pod (and its logs) stay.
func (rt *Runtime) stopPod(ns, name string, uid types.UID) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	patch := fmt.Sprintf(`{"metadata":{"uid":%q},"spec":{"activeDeadlineSeconds":1}}`, uid)
	_, err := rt.cfg.Client.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		rt.log.Warn("stop sidecars", "pod", ns+"/"+name, "err", err)
	}
}

// deletePod deletes a pod that will never run (its result is reported).
func (rt *Runtime) deletePod(ns, name string, uid types.UID) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zero := int64(0)
	err := rt.cfg.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
		Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		rt.log.Warn("delete a pod that cannot start", "pod", ns+"/"+name, "err", err)
	}
}
