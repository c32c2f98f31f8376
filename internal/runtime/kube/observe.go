package kube

import (
	"fmt"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/executor/emissary"
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
	log  *v1alpha1.ArtifactLocation
	// recheck: look at the pod again after this long (a bounded wait runs).
	recheck time.Duration
	// mainDone: the main container ended (its sidecars may still run).
	mainDone bool
}

func (o observation) final() bool { return o.phase.Completed() }

// observe reads the run's state from its pod at now. It is pure.
func observe(pod *apiv1.Pod, now time.Time, w waits) observation {
	main := containerStatus(pod.Status.ContainerStatuses, MainContainer)
	if main != nil && main.State.Terminated != nil {
		return terminated(main.State.Terminated)
	}
	if pod.Status.Phase == apiv1.PodFailed {
		return podFailed(pod, now)
	}
	if o, ok := cannotStart(pod, now, w); ok {
		return o
	}
	if main != nil && main.State.Running != nil {
		return observation{phase: v1alpha1.NodeRunning, startedAt: main.State.Running.StartedAt.Time}
	}
	return observation{phase: v1alpha1.NodePending}
}

// terminated reads the main container's end: the emissary's message, or
// why there is none.
func terminated(t *apiv1.ContainerStateTerminated) observation {
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
			o.message = fmt.Sprintf("the main container ended without a result (%s, exit code %d)", reasonOf(t.Reason, t.Message), code)
		}
		return o
	}
	o.phase, o.message, o.exitCode, o.outputs = m.FinalPhase(), m.Message, m.ExitCode, m.Outputs
	o.full, o.log = m.Full, m.Log
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

// sidecarsRunning reports whether a container other than main still runs.
func sidecarsRunning(pod *apiv1.Pod) bool {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name != MainContainer && s.State.Terminated == nil {
			return true
		}
	}
	return false
}
