package kube

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/executor/emissary"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Annotations that tell the runtime how to read a pod it finds again after
// a restart.
const (
	// AnnotationContainers lists, comma-separated, the containers whose ends
	// make the run's result (a containerSet's); absent: MainContainer alone.
	AnnotationContainers = "braid.dev/containers"
	// AnnotationDaemon marks the pod of a daemon template: it is Running
	// once the pod is Ready.
	AnnotationDaemon = "braid.dev/daemon"
)

// workContainers are the containers that make the run's result: main, or
// each container of a containerSet, all wrapped by the emissary.
func (b podBuilder) workContainers(run runtime.Run) ([]apiv1.Container, error) {
	cs := run.Template.ContainerSet
	if cs == nil {
		main, err := b.mainContainer(run)
		if err != nil {
			return nil, err
		}
		return []apiv1.Container{*main}, nil
	}
	if len(cs.Containers) == 0 {
		return nil, userError("the containerSet has no containers")
	}
	out := make([]apiv1.Container, 0, len(cs.Containers))
	for i := range cs.Containers {
		c := *cs.Containers[i].Container.DeepCopy()
		if c.Name == "" || c.Name == InitContainer {
			return nil, userError(fmt.Sprintf("containerSet container %d: the name %q cannot be used", i, c.Name))
		}
		c.VolumeMounts = append(c.VolumeMounts, deepMounts(cs.VolumeMounts)...)
		w, err := b.wrap(run, c, emissary.RoleContainer)
		var ue userError
		switch {
		case errors.As(err, &ue):
			return nil, userError(fmt.Sprintf("containerSet container %s: %v", c.Name, err))
		case err != nil:
			return nil, fmt.Errorf("containerSet container %s: %w", c.Name, err)
		}
		out = append(out, *w)
	}
	return out, nil
}

func deepMounts(ms []apiv1.VolumeMount) []apiv1.VolumeMount {
	out := make([]apiv1.VolumeMount, 0, len(ms))
	for i := range ms {
		out = append(out, *ms[i].DeepCopy())
	}
	return out
}

// mirrorMounts are the mounts mirrorVolumeMounts copies: main's (the
// template's container or script), or a containerSet's shared ones.
func mirrorMounts(tmpl *v1alpha1.Template, work []apiv1.Container) []apiv1.VolumeMount {
	if tmpl.ContainerSet != nil {
		return deepMounts(tmpl.ContainerSet.VolumeMounts)
	}
	var out []apiv1.VolumeMount
	for _, m := range work[0].VolumeMounts {
		if m.Name != binVolume {
			out = append(out, m)
		}
	}
	return out
}

// sidecar is a template's sidecar wrapped by the emissary in the sidecar
// role: it is stopped (SIGTERM, then SIGKILL) once every work container
// has ended, as Argo's wait container kills the sidecars.
func (b podBuilder) sidecar(u v1alpha1.UserContainer, mirror []apiv1.VolumeMount, work []apiv1.Container) (apiv1.Container, error) {
	c := userContainer(u, mirror)
	for _, w := range work {
		if c.Name == w.Name || c.Name == InitContainer {
			return c, userError(fmt.Sprintf("sidecar %s: the name is taken by another container of the pod", c.Name))
		}
	}
	argv, err := b.argv(&c)
	if err != nil {
		return c, userError(fmt.Sprintf("sidecar %s: %v", c.Name, err))
	}
	names := make([]string, 0, len(work))
	for _, w := range work {
		names = append(names, w.Name)
	}
	c.Command = append(emissaryCommand(), argv...)
	c.Args = nil
	c.Env = append(slices.Clone(c.Env),
		apiv1.EnvVar{Name: emissary.EnvContainerName, Value: c.Name},
		apiv1.EnvVar{Name: emissary.EnvRole, Value: emissary.RoleSidecar},
		apiv1.EnvVar{Name: emissary.EnvStopAfter, Value: strings.Join(names, ",")})
	c.VolumeMounts = append(c.VolumeMounts, binMount())
	return c, nil
}

// annotateRoles records what observe needs to read the pod: the work
// containers of a containerSet, and whether it is a daemon.
func annotateRoles(pod *apiv1.Pod, tmpl *v1alpha1.Template, work []apiv1.Container) {
	if tmpl.ContainerSet != nil {
		names := make([]string, 0, len(work))
		for _, w := range work {
			names = append(names, w.Name)
		}
		pod.Annotations[AnnotationContainers] = strings.Join(names, ",")
	}
	if tmpl.Daemon != nil && *tmpl.Daemon {
		pod.Annotations[AnnotationDaemon] = "true"
	}
}

// workNames are the containers of a step's pod that run the user's
// commands (AnnotationContainers): main, or a containerSet's containers in
// the template's order.
func workNames(pod *apiv1.Pod) []string {
	v := pod.Annotations[AnnotationContainers]
	if v == "" {
		return []string{MainContainer}
	}
	return strings.Split(v, ",")
}

func isDaemon(pod *apiv1.Pod) bool { return pod.Annotations[AnnotationDaemon] == "true" }

// podReady reports the pod's Ready condition: every container runs and
// passed its readiness probe.
func podReady(pod *apiv1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == apiv1.PodReady {
			return c.Status == apiv1.ConditionTrue
		}
	}
	return false
}
