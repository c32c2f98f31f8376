package kube

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/executor/emissary"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Messages of results the pod could not report itself.
const (
	MsgPodDeleted = "pod deleted"
	MsgKilled     = "workflow shutdown"
)

// waits are the bounded waits on a pod that cannot start.
type waits struct {
	pull          time.Duration // an image that cannot be pulled
	unschedulable time.Duration // a pod the scheduler cannot place
}

// observation is what a pod says about its run.
type observation struct {
	phase      v1alpha1.NodePhase // "" or Pending: nothing to report yet
	message    string
	exitCode   *int32
	outputs    *v1alpha1.Outputs
	startedAt  time.Time
	finishedAt time.Time
	// full is where the complete result lies when the message was too big.
	full *v1alpha1.ArtifactLocation
	// recheck: look at the pod again after this long (a bounded wait runs).
	recheck time.Duration
	// mainDone: the main container ended (its sidecars may still run).
	mainDone bool
	// podIP and hostNode say where the pod runs, once known.
	podIP, hostNode string
	// containers: a containerSet's containers, one by one.
	containers []step.Container
}

func (o observation) final() bool { return o.phase.Completed() }

// observe reads the run's state from its pod at now. It is pure.
func observe(pod *apiv1.Pod, now time.Time, w waits) observation {
	o := observeWork(pod, now, w)
	o.podIP, o.hostNode = pod.Status.PodIP, pod.Spec.NodeName
	if _, ok := pod.Annotations[AnnotationContainers]; ok {
		o.containers = containerStates(pod)
	}
	return o
}

// containerStates reads each work container of a containerSet's pod: Pending
// until it runs, Running, then its end as the emissary reported it.
func containerStates(pod *apiv1.Pod) []step.Container {
	names := workNames(pod)
	out := make([]step.Container, 0, len(names))
	for _, n := range names {
		cs := step.Container{Name: n, Phase: v1alpha1.NodePending}
		s := containerStatus(pod.Status.ContainerStatuses, n)
		switch {
		case s == nil:
		case s.State.Terminated != nil:
			ob := terminated(s.State.Terminated, n)
			cs.Phase, cs.Message, cs.ExitCode = ob.phase, ob.message, ob.exitCode
			cs.StartedAt, cs.FinishedAt = ob.startedAt, ob.finishedAt
		case s.State.Running != nil:
			cs.Phase, cs.StartedAt = v1alpha1.NodeRunning, s.State.Running.StartedAt.Time
		}
		out = append(out, cs)
	}
	return out
}

// sameContainers reports whether two readings of a containerSet's
// containers show the same phases.
func sameContainers(a, b []step.Container) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Phase != b[i].Phase {
			return false
		}
	}
	return true
}

// observeWork reads the work containers (main, or a containerSet's): the
// result once they all ended, else Running once one runs (a daemon: once
// the pod is Ready), else why the pod does not start.
func observeWork(pod *apiv1.Pod, now time.Time, w waits) observation {
	names := workNames(pod)
	ended := 0
	var running *apiv1.ContainerStateRunning
	for _, n := range names {
		s := containerStatus(pod.Status.ContainerStatuses, n)
		switch {
		case s == nil:
		case s.State.Terminated != nil:
			ended++
		case s.State.Running != nil && (running == nil || s.State.Running.StartedAt.Before(&running.StartedAt)):
			running = s.State.Running
		}
	}
	if ended == len(names) {
		if len(names) == 1 && names[0] == MainContainer {
			o := terminated(containerStatus(pod.Status.ContainerStatuses, MainContainer).State.Terminated, MainContainer)
			return sidecarFailure(pod, o)
		}
		return sidecarFailure(pod, setResult(pod, names))
	}
	if pod.Status.Phase == apiv1.PodFailed {
		return podFailed(pod, now)
	}
	if o, ok := cannotStart(pod, now, w); ok {
		return o
	}
	if running != nil && (!isDaemon(pod) || podReady(pod)) {
		return observation{phase: v1alpha1.NodeRunning, startedAt: running.StartedAt.Time}
	}
	return observation{phase: v1alpha1.NodePending}
}

// terminated reads a work container's end: the emissary's message, or
// why there is none.
func terminated(t *apiv1.ContainerStateTerminated, name string) observation {
	o := observation{mainDone: true, startedAt: t.StartedAt.Time, finishedAt: t.FinishedAt.Time}
	code := t.ExitCode
	m, err := emissary.ParseMessage(t.Message)
	if err != nil {
		o.exitCode = &code
		switch t.Reason {
		case "OOMKilled":
			o.phase, o.message = v1alpha1.NodeFailed, fmt.Sprintf("OOMKilled (exit code %d)", code)
		default:
			o.phase = v1alpha1.NodeError
			o.message = fmt.Sprintf("the %s container ended without a result (%s, exit code %d)", name, reasonOf(t.Reason, t.Message), code)
		}
		return o
	}
	o.phase, o.message, o.exitCode, o.outputs = m.FinalPhase(), m.Message, m.ExitCode, m.Outputs
	o.full = m.Full
	if m.StartedAt != nil {
		o.startedAt = *m.StartedAt
	}
	if m.FinishedAt != nil {
		o.finishedAt = *m.FinishedAt
	}
	if t.Reason == "OOMKilled" && o.phase != v1alpha1.NodeSucceeded {
		o.phase, o.message = v1alpha1.NodeFailed, fmt.Sprintf("OOMKilled (exit code %s)", itoa(o.exitCode))
	}
	return o
}

func reasonOf(reason, msg string) string {
	switch {
	case reason == "" && msg == "":
		return "no reason given"
	case msg == "":
		return reason
	case reason == "":
		return msg
	}
	return reason + ": " + msg
}

// podFailed reads a pod that failed before its main container ended.
func podFailed(pod *apiv1.Pod, now time.Time) observation {
	o := observation{mainDone: true, finishedAt: now}
	switch pod.Status.Reason {
	case "DeadlineExceeded":
		o.phase, o.message = v1alpha1.NodeFailed, emissary.MsgActiveDeadline
	default:
		o.phase = v1alpha1.NodeError
		o.message = "pod failed: " + reasonOf(pod.Status.Reason, pod.Status.Message)
		if init := failedInit(pod); init != "" {
			o.message = init
		}
	}
	return o
}

// failedInit describes an init container that ended in error, or "".
func failedInit(pod *apiv1.Pod) string {
	for _, s := range pod.Status.InitContainerStatuses {
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("init container %s failed (%s, exit code %d)", s.Name, reasonOf(t.Reason, t.Message), t.ExitCode)
		}
	}
	return ""
}

// cannotStart finds a pod that will not start by itself: an image that is
// not present (at once for ErrImageNeverPull and InvalidImageName, after
// the pull wait for a pull that keeps failing), a container config error
// (a missing secret) after the same wait, and a pod the scheduler cannot
// place after the unschedulable wait. While a wait runs it asks to be
// looked at again when it ends.
func cannotStart(pod *apiv1.Pod, now time.Time, w waits) (observation, bool) {
	age := now.Sub(pod.CreationTimestamp.Time)
	statuses := append(append([]apiv1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		wt := s.State.Waiting
		if wt == nil {
			continue
		}
		switch wt.Reason {
		case "ErrImageNeverPull", "InvalidImageName":
			return imageError(s.Image, wt), true
		case "ErrImagePull", "ImagePullBackOff":
			if age >= w.pull {
				return imageError(s.Image, wt), true
			}
			return observation{phase: v1alpha1.NodePending, recheck: w.pull - age}, true
		case "CreateContainerConfigError", "CreateContainerError":
			if age >= w.pull {
				return observation{phase: v1alpha1.NodeError, mainDone: true,
					message: fmt.Sprintf("container %s cannot be created: %s", s.Name, reasonOf(wt.Reason, wt.Message))}, true
			}
			return observation{phase: v1alpha1.NodePending, recheck: w.pull - age}, true
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == apiv1.PodScheduled && c.Status == apiv1.ConditionFalse && c.Reason == apiv1.PodReasonUnschedulable {
			if age >= w.unschedulable {
				return observation{phase: v1alpha1.NodeError, mainDone: true,
					message: fmt.Sprintf("pod unschedulable for %s: %s", w.unschedulable, c.Message)}, true
			}
			return observation{phase: v1alpha1.NodePending, recheck: w.unschedulable - age}, true
		}
	}
	return observation{}, false
}

func imageError(image string, wt *apiv1.ContainerStateWaiting) observation {
	return observation{phase: v1alpha1.NodeError, mainDone: true,
		message: fmt.Sprintf("image %s is not present: %s", image, reasonOf(wt.Reason, wt.Message))}
}

func containerStatus(ss []apiv1.ContainerStatus, name string) *apiv1.ContainerStatus {
	for i := range ss {
		if ss[i].Name == name {
			return &ss[i]
		}
	}
	return nil
}

// sidecarsRunning reports whether a container other than the work
// containers still runs.
func sidecarsRunning(pod *apiv1.Pod) bool {
	work := workNames(pod)
	for _, s := range pod.Status.ContainerStatuses {
		if !slices.Contains(work, s.Name) && s.State.Terminated == nil {
			return true
		}
	}
	return false
}

// sidecarFailure fails a run whose work containers succeeded when a
// sidecar had already ended by itself with an exit code other than 0, 137
// or 143 (Argo's rule; a sidecar the emissary stopped exits 0).
func sidecarFailure(pod *apiv1.Pod, o observation) observation {
	if o.phase != v1alpha1.NodeSucceeded {
		return o
	}
	work := workNames(pod)
	for _, s := range pod.Status.ContainerStatuses {
		t := s.State.Terminated
		if slices.Contains(work, s.Name) || t == nil || t.ExitCode == 0 || t.ExitCode == 137 || t.ExitCode == 143 {
			continue
		}
		o.phase, o.message = v1alpha1.NodeFailed, fmt.Sprintf("%s: %s (exit code %d)", s.Name, cmpOr(t.Reason, "Error"), t.ExitCode)
		return o
	}
	return o
}

// setResult combines the ends of a containerSet's containers: the outputs
// are main's (Argo saves them only for the container named main); the
// phase is main's unless another container failed first, in which case it
// is that container's phase and message; containers skipped because a
// dependency failed are named in the message.
func setResult(pod *apiv1.Pod, names []string) observation {
	var main, failing *observation
	var skipped []string
	var started, finished time.Time
	for _, n := range names {
		ob := terminated(containerStatus(pod.Status.ContainerStatuses, n).State.Terminated, n)
		if !ob.startedAt.IsZero() && (started.IsZero() || ob.startedAt.Before(started)) {
			started = ob.startedAt
		}
		if ob.finishedAt.After(finished) {
			finished = ob.finishedAt
		}
		switch ob.phase {
		case v1alpha1.NodeOmitted:
			skipped = append(skipped, n)
		case v1alpha1.NodeFailed, v1alpha1.NodeError:
			if failing == nil || n == MainContainer {
				failing = &ob
			}
		}
		if n == MainContainer {
			main = &ob
		}
	}
	o := observation{phase: v1alpha1.NodeSucceeded}
	if main != nil {
		o = *main
	}
	if failing != nil && o.phase != v1alpha1.NodeFailed && o.phase != v1alpha1.NodeError {
		o.phase, o.message, o.exitCode = failing.phase, failing.message, failing.exitCode
	}
	if o.phase == v1alpha1.NodeOmitted {
		o.phase = v1alpha1.NodeFailed
	}
	if len(skipped) > 0 {
		o.message = strings.TrimPrefix(o.message+"; skipped: "+strings.Join(skipped, ", "), "; ")
	}
	o.mainDone, o.startedAt, o.finishedAt = true, started, finished
	return o
}
