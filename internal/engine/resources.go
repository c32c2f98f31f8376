package engine

import (
	"time"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Argo's resource duration (docs/resource-duration.md; util/resource): for
// each container of a pod, the whole seconds it ran times each resource it
// asked for, divided by that resource's base unit, summed over containers.
// A container's resources are its limits overridden by its requests; a
// container that asks for no cpu or memory counts as 100m cpu and 100Mi
// memory. A quantity counts as its integer value rounded up, so 100m cpu is
// 1 cpu. Base units: memory 100Mi, storage and ephemeral-storage 10Gi,
// anything else (cpu, GPUs) 1. The products are integers, as in Argo.
//
// The containers are those Argo puts in the pod: the main container (one per
// container of a containerSet; a resource or data template's main runs with
// the defaults), the template's init containers and sidecars, and Argo's
// "wait" container (defaults; resource and data pods have none). braid does
// not report each container's own run time, so each counts for the step's
// run time; Argo's "init" container, which only copies the executor and
// runs about no whole second, is left out.
var (
	defaultCPU    = resource.MustParse("100m")
	defaultMemory = resource.MustParse("100Mi")
)

// podResourcesDuration estimates a finished Pod node's resource usage.
func podResourcesDuration(t *v1alpha1.Template, ran time.Duration) v1alpha1.ResourcesDuration {
	secs := int64(ran / time.Second)
	if secs < 0 {
		secs = 0
	}
	out := v1alpha1.ResourcesDuration{}
	add := func(req apiv1.ResourceRequirements) {
		list := apiv1.ResourceList{apiv1.ResourceCPU: defaultCPU, apiv1.ResourceMemory: defaultMemory}
		for k, q := range req.Limits {
			list[k] = q
		}
		for k, q := range req.Requests {
			list[k] = q
		}
		for k, q := range list {
			out[k] += v1alpha1.ResourceDuration(q.Value() * secs / baseUnit(k))
		}
	}
	wait := true
	switch {
	case t == nil:
		add(apiv1.ResourceRequirements{})
	case t.Container != nil:
		add(t.Container.Resources)
	case t.Script != nil:
		add(t.Script.Resources)
	case t.ContainerSet != nil:
		for i := range t.ContainerSet.Containers {
			add(t.ContainerSet.Containers[i].Resources)
		}
	default: // resource, data: the executor is the main container
		add(apiv1.ResourceRequirements{})
		wait = false
	}
	if t != nil {
		for i := range t.InitContainers {
			add(t.InitContainers[i].Resources)
		}
		for i := range t.Sidecars {
			add(t.Sidecars[i].Resources)
		}
	}
	if wait {
		add(apiv1.ResourceRequirements{})
	}
	return out
}

// baseUnit is the quantity one resource-second is counted in.
func baseUnit(name apiv1.ResourceName) int64 {
	switch name {
	case apiv1.ResourceMemory:
		return 100 << 20
	case apiv1.ResourceStorage, apiv1.ResourceEphemeralStorage:
		return 10 << 30
	}
	return 1
}

// addDurations returns a + sign*b as a new map (nil when both are empty).
func addDurations(a, b v1alpha1.ResourcesDuration, sign int64) v1alpha1.ResourcesDuration {
	if len(b) == 0 {
		return a
	}
	out := make(v1alpha1.ResourcesDuration, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] += v1alpha1.ResourceDuration(sign) * v
	}
	return out
}

func sameDurations(a, b v1alpha1.ResourcesDuration) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
