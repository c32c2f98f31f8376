package kube

import (
	"fmt"
	"maps"
	"slices"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// applyWorkflowSpec merges the workflow-wide pod settings of run.Spec into
// a pod built from the template, as Argo does:
//   - the template's value wins for serviceAccountName,
//     automountServiceAccountToken, nodeSelector, affinity, tolerations,
//     schedulerName, priorityClassName (spec.podPriorityClassName),
//     securityContext, podResources and resourceClaims;
//   - hostAliases are the workflow's followed by the template's;
//   - imagePullSecrets, hostNetwork, dnsPolicy and dnsConfig come from the
//     workflow only (a template has none);
//   - podMetadata adds labels and annotations the pod does not have yet
//     (the template's metadata and braid's own keys win);
//   - a volume mounted by a container and not declared by the template
//     comes from spec.volumes, else from spec.volumeClaimTemplates (the PVC
//     <workflow>-<claim>); only the volumes mounted are added, as in Argo;
//   - podGC marks the pods it collects (podgc.go);
//   - spec.podSpecPatch is applied last; the template's is applied after it
//     by the caller.
//
// executor.serviceAccountName is accepted and ignored: braid's executor
// makes no API calls, so it needs no token. A nil Spec changes nothing. The
// errors are the user's (userError).
func applyWorkflowSpec(pod *apiv1.Pod, run runtime.Run) error {
	spec := run.Spec
	if spec == nil {
		return nil
	}
	mergeScheduling(&pod.Spec, spec)
	mergePodMetadata(pod, spec.PodMetadata)
	if err := addWorkflowVolumes(&pod.Spec, spec, run.Workflow); err != nil {
		return err
	}
	if err := markForGC(pod, spec.PodGC); err != nil {
		return err
	}
	if spec.PodSpecPatch != "" {
		if err := applyPodSpecPatch(pod, spec.PodSpecPatch); err != nil {
			return userError("the workflow's " + err.Error())
		}
	}
	return nil
}

// mergeScheduling fills the pod's spec from the workflow's where the
// template left it unset.
func mergeScheduling(ps *apiv1.PodSpec, spec *v1alpha1.WorkflowSpec) {
	if ps.ServiceAccountName == "" {
		ps.ServiceAccountName = spec.ServiceAccountName
	}
	if a := spec.AutomountServiceAccountToken; ps.AutomountServiceAccountToken == nil && a != nil && !*a {
		no := false
		ps.AutomountServiceAccountToken = &no
	}
	if len(ps.NodeSelector) == 0 && len(spec.NodeSelector) > 0 {
		ps.NodeSelector = maps.Clone(spec.NodeSelector)
	}
	if ps.Affinity == nil {
		ps.Affinity = spec.Affinity.DeepCopy()
	}
	if len(ps.Tolerations) == 0 && len(spec.Tolerations) > 0 {
		ps.Tolerations = slices.Clone(spec.Tolerations)
	}
	if ps.SchedulerName == "" {
		ps.SchedulerName = spec.SchedulerName
	}
	if ps.PriorityClassName == "" {
		ps.PriorityClassName = spec.PodPriorityClassName
	}
	if len(spec.HostAliases) > 0 {
		ps.HostAliases = append(slices.Clone(spec.HostAliases), ps.HostAliases...)
	}
	if ps.SecurityContext == nil {
		ps.SecurityContext = spec.SecurityContext.DeepCopy()
	}
	if ps.Resources == nil {
		ps.Resources = spec.PodResources.DeepCopy()
	}
	if len(ps.ResourceClaims) == 0 && len(spec.ResourceClaims) > 0 {
		ps.ResourceClaims = slices.Clone(spec.ResourceClaims)
	}
	if len(spec.ImagePullSecrets) > 0 {
		ps.ImagePullSecrets = append(slices.Clone(spec.ImagePullSecrets), ps.ImagePullSecrets...)
	}
	if spec.HostNetwork != nil {
		ps.HostNetwork = *spec.HostNetwork
	}
	if spec.DNSPolicy != nil {
		ps.DNSPolicy = *spec.DNSPolicy
	}
	if spec.DNSConfig != nil {
		ps.DNSConfig = spec.DNSConfig.DeepCopy()
	}
}

// mergePodMetadata adds spec.podMetadata's labels and annotations that the
// pod does not carry already.
func mergePodMetadata(pod *apiv1.Pod, md *v1alpha1.Metadata) {
	if md == nil {
		return
	}
	fill := func(dst *map[string]string, src map[string]string) {
		for k, v := range src {
			if *dst == nil {
				*dst = map[string]string{}
			}
			if _, ok := (*dst)[k]; !ok {
				(*dst)[k] = v
			}
		}
	}
	fill(&pod.Labels, md.Labels)
	fill(&pod.Annotations, md.Annotations)
}

// addWorkflowVolumes adds the workflow-level volumes the pod's containers
// mount and the pod does not declare.
func addWorkflowVolumes(ps *apiv1.PodSpec, spec *v1alpha1.WorkflowSpec, workflow string) error {
	have := map[string]bool{}
	for _, v := range ps.Volumes {
		have[v.Name] = true
	}
	claims := claimVolumes(spec, workflow)
	lookup := func(name string) *apiv1.Volume {
		for i := range spec.Volumes {
			if spec.Volumes[i].Name == name {
				return spec.Volumes[i].DeepCopy()
			}
		}
		for i := range claims {
			if claims[i].Name == name {
				return &claims[i]
			}
		}
		return nil
	}
	for _, c := range slices.Concat(ps.InitContainers, ps.Containers) {
		for _, m := range c.VolumeMounts {
			if have[m.Name] {
				continue
			}
			v := lookup(m.Name)
			if v == nil {
				return userError(fmt.Sprintf("volume '%s' not found in workflow spec", m.Name))
			}
			ps.Volumes = append(ps.Volumes, *v)
			have[m.Name] = true
		}
	}
	return nil
}

// claimVolumes are the pod volumes of the workflow's volumeClaimTemplates:
// each is named after its claim and mounts the PVC <workflow>-<claim>.
func claimVolumes(spec *v1alpha1.WorkflowSpec, workflow string) []apiv1.Volume {
	var out []apiv1.Volume
	for _, t := range spec.VolumeClaimTemplates {
		if t.Name == "" {
			continue
		}
		out = append(out, apiv1.Volume{Name: t.Name, VolumeSource: apiv1.VolumeSource{
			PersistentVolumeClaim: &apiv1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(workflow, t.Name)}}})
	}
	return out
}
