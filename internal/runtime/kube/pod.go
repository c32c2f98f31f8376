package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/executor/emissary"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Labels and annotations of a step's pod.
const (
	LabelWorkflow      = "workflows.argoproj.io/workflow"
	LabelRunID         = "braid.dev/run-id" // a hash of the run ID (label values hold 63 characters)
	AnnotationRunID    = "braid.dev/run-id" // the run ID itself
	AnnotationNodeID   = "workflows.argoproj.io/node-id"
	AnnotationNodeName = "workflows.argoproj.io/node-name"
	// MainContainer is the name of the container that runs the template.
	MainContainer = "main"
	// InitContainer copies braid into the shared volume.
	InitContainer = "braid-init"
	binVolume     = "braid-bin"
)

// runLabel is the value of LabelRunID: a hash of the run ID.
func runLabel(runID string) string {
	sum := sha256.Sum256([]byte(runID))
	return hex.EncodeToString(sum[:16])
}

// podBuilder holds what every pod shares.
type podBuilder struct {
	braidImage string
	braidPath  string
	images     executor.ImageTable
}

// build returns the pod of a container or script run.
func (b podBuilder) build(run runtime.Run) (*apiv1.Pod, error) {
	tmpl := run.Template
	if msg := unsupported(tmpl); msg != "" {
		return nil, userError(msg)
	}
	work, err := b.workContainers(run)
	if err != nil {
		return nil, err
	}
	mirror := mirrorMounts(tmpl, work)
	pod := &apiv1.Pod{
		ObjectMeta: b.meta(run),
		Spec: apiv1.PodSpec{
			RestartPolicy:                apiv1.RestartPolicyNever,
			ServiceAccountName:           tmpl.ServiceAccountName,
			AutomountServiceAccountToken: tmpl.AutomountServiceAccountToken,
			NodeSelector:                 maps.Clone(tmpl.NodeSelector),
			Affinity:                     tmpl.Affinity.DeepCopy(),
			Tolerations:                  slices.Clone(tmpl.Tolerations),
			SchedulerName:                tmpl.SchedulerName,
			PriorityClassName:            tmpl.PriorityClassName,
			HostAliases:                  slices.Clone(tmpl.HostAliases),
			SecurityContext:              tmpl.SecurityContext.DeepCopy(),
			Resources:                    tmpl.PodResources.DeepCopy(),
			ResourceClaims:               slices.Clone(tmpl.ResourceClaims),
			Volumes: append(deepVolumes(tmpl.Volumes), apiv1.Volume{Name: binVolume,
				VolumeSource: apiv1.VolumeSource{EmptyDir: &apiv1.EmptyDirVolumeSource{}}}),
			InitContainers: []apiv1.Container{b.initContainer()},
			Containers:     work,
		},
	}
	if s := activeDeadlineSeconds(run.ActiveDeadline); s != nil {
		pod.Spec.ActiveDeadlineSeconds = s
	}
	for _, c := range tmpl.InitContainers {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, userContainer(c, mirror))
	}
	for _, c := range tmpl.Sidecars {
		sc, err := b.sidecar(c, mirror, work)
		if err != nil {
			return nil, err
		}
		pod.Spec.Containers = append(pod.Spec.Containers, sc)
	}
	annotateRoles(pod, tmpl, work)
	if err := applyWorkflowSpec(pod, run); err != nil { // podspec.go
		return nil, err
	}
	if tmpl.PodSpecPatch != "" {
		if err := applyPodSpecPatch(pod, tmpl.PodSpecPatch); err != nil {
			return nil, userError(err.Error())
		}
	}
	setKillGrace(pod)
	return pod, nil
}

// setKillGrace tells each container the emissary wraps to give its child
// the pod's terminationGracePeriodSeconds between SIGTERM and SIGKILL, as
// Argo gives a sidecar it stops, when the pod sets one.
func setKillGrace(pod *apiv1.Pod) {
	g := pod.Spec.TerminationGracePeriodSeconds
	if g == nil || *g <= 0 {
		return
	}
	grace := (time.Duration(*g) * time.Second).String()
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if len(c.Command) > 0 && c.Command[0] == emissaryCommand()[0] {
			c.Env = append(c.Env, apiv1.EnvVar{Name: emissary.EnvKillGrace, Value: grace})
		}
	}
}

// meta is the pod's name, labels, annotations and owner.
func (b podBuilder) meta(run runtime.Run) metav1.ObjectMeta {
	tmpl := run.Template
	labels := maps.Clone(tmpl.Metadata.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelWorkflow] = run.Workflow
	labels[LabelRunID] = runLabel(run.ID)
	ann := map[string]string{}
	maps.Copy(ann, tmpl.Metadata.Annotations)
	maps.Copy(ann, tmpl.Annotations)
	ann[AnnotationRunID] = run.ID
	ann[AnnotationNodeID] = run.NodeID
	if name := run.Env["ARGO_NODE_NAME"]; name != "" {
		ann[AnnotationNodeName] = name
	}
	m := metav1.ObjectMeta{Name: run.PodName, Namespace: run.Namespace, Labels: labels, Annotations: ann}
	if run.WorkflowUID != "" {
		yes := true
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow",
			Name: run.Workflow, UID: types.UID(run.WorkflowUID), Controller: &yes}}
	}
	return m
}

// initContainer copies braid into the shared volume.
func (b podBuilder) initContainer() apiv1.Container {
	return apiv1.Container{
		Name:                     InitContainer,
		Image:                    b.braidImage,
		ImagePullPolicy:          apiv1.PullIfNotPresent,
		Command:                  []string{b.braidPath, "exec", "init", emissary.BinDir},
		VolumeMounts:             []apiv1.VolumeMount{{Name: binVolume, MountPath: emissary.BinDir}},
		TerminationMessagePolicy: apiv1.TerminationMessageReadFile,
	}
}

// mainContainer is the template's container with its command wrapped by
// the emissary and the run's environment added.
func (b podBuilder) mainContainer(run runtime.Run) (*apiv1.Container, error) {
	tmpl := run.Template
	var c apiv1.Container
	if tmpl.Script != nil {
		c = *tmpl.Script.Container.DeepCopy()
	} else {
		c = *tmpl.Container.DeepCopy()
	}
	c.Name = MainContainer
	return b.wrap(run, c, "")
}

// wrap runs c's command under the emissary in role (emissary.EnvRole),
// with the run's environment added.
func (b podBuilder) wrap(run runtime.Run, c apiv1.Container, role string) (*apiv1.Container, error) {
	argv, err := b.argv(&c)
	if err != nil {
		return nil, err
	}
	env, err := b.env(run, &c)
	if err != nil {
		return nil, err
	}
	env = append(env, apiv1.EnvVar{Name: emissary.EnvContainerName, Value: c.Name})
	if role != "" {
		env = append(env, apiv1.EnvVar{Name: emissary.EnvRole, Value: role})
	}
	c.Command = append(emissaryCommand(), argv...)
	c.Args = nil
	c.Env = env
	c.VolumeMounts = append(c.VolumeMounts, binMount())
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = apiv1.PullIfNotPresent
	}
	c.TerminationMessagePath = emissary.DefaultTerminationLog
	c.TerminationMessagePolicy = apiv1.TerminationMessageReadFile
	return &c, nil
}

func emissaryCommand() []string {
	return []string{emissary.BinDir + "/braid", "exec", "emissary", "--"}
}

func binMount() apiv1.VolumeMount {
	return apiv1.VolumeMount{Name: binVolume, MountPath: emissary.BinDir}
}

// argv is the user's command: the container's command and args, with the
// image's entrypoint (from the image table) when it sets no command.
func (b podBuilder) argv(c *apiv1.Container) ([]string, error) {
	if len(c.Command) > 0 {
		return append(slices.Clone(c.Command), c.Args...), nil
	}
	img, _, ok := b.images.Lookup(c.Image)
	if !ok || len(img.Command) == 0 && (len(img.Args) == 0 && len(c.Args) == 0) {
		return nil, userError(fmt.Sprintf("the container sets no command and the entrypoint of image %q is not known: set command in the template, or add the image under images in the config file", c.Image))
	}
	args := c.Args
	if len(args) == 0 {
		args = img.Args
	}
	return append(slices.Clone(img.Command), args...), nil
}

// env is the container's environment plus the run's, the template and the
// settings the emissary reads, and the secrets its artifacts need.
func (b podBuilder) env(run runtime.Run, c *apiv1.Container) ([]apiv1.EnvVar, error) {
	tmplJSON, err := json.Marshal(run.Template)
	if err != nil {
		return nil, fmt.Errorf("encode the template: %w", err)
	}
	env := slices.Clone(c.Env)
	for _, k := range slices.Sorted(maps.Keys(run.Env)) {
		env = append(env, apiv1.EnvVar{Name: k, Value: escape(run.Env[k])})
	}
	env = append(env, apiv1.EnvVar{Name: emissary.EnvTemplate, Value: escape(string(tmplJSON))})
	if run.IncludeResult {
		env = append(env, apiv1.EnvVar{Name: emissary.EnvIncludeResult, Value: "true"})
	}
	var repo *v1alpha1.ArtifactRepository
	if a := run.Artifacts; a != nil {
		repo = a.Repository
		data, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encode the artifact plan: %w", err)
		}
		env = append(env, apiv1.EnvVar{Name: emissary.EnvArtifacts, Value: escape(string(data))})
	}
	if run.ActiveDeadline > 0 {
		env = append(env, apiv1.EnvVar{Name: emissary.EnvActiveDeadline, Value: run.ActiveDeadline.String()})
	}
	if !run.Deadline.IsZero() {
		env = append(env, apiv1.EnvVar{Name: emissary.EnvDeadline, Value: run.Deadline.UTC().Format(time.RFC3339Nano)})
	}
	refs, err := secretRefs(run.Template, repo)
	if err != nil {
		return nil, err
	}
	return append(env, refs...), nil
}

// escape protects a value from the kubelet's $(VAR) expansion: "$$" reads
// back as "$".
func escape(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// activeDeadlineSeconds is the pod's activeDeadlineSeconds, rounded up.
func activeDeadlineSeconds(d time.Duration) *int64 {
	if d <= 0 {
		return nil
	}
	s := int64((d + time.Second - 1) / time.Second)
	return &s
}

// userContainer is an init or sidecar container of the template.
func userContainer(u v1alpha1.UserContainer, mainMounts []apiv1.VolumeMount) apiv1.Container {
	c := *u.Container.DeepCopy()
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = apiv1.PullIfNotPresent
	}
	if u.MirrorVolumeMounts != nil && *u.MirrorVolumeMounts {
		for _, m := range mainMounts {
			if m.Name != binVolume {
				c.VolumeMounts = append(c.VolumeMounts, m)
			}
		}
	}
	return c
}

func deepVolumes(vs []apiv1.Volume) []apiv1.Volume {
	out := make([]apiv1.Volume, 0, len(vs)+1)
	for i := range vs {
		out = append(out, *vs[i].DeepCopy())
	}
	return out
}

// applyPodSpecPatch applies the template's podSpecPatch (JSON or YAML) to
// the pod's spec as a strategic merge patch, as Argo does.
func applyPodSpecPatch(pod *apiv1.Pod, patch string) error {
	js, err := yaml.YAMLToJSON([]byte(patch))
	if err != nil {
		return fmt.Errorf("podSpecPatch is neither JSON nor YAML: %w", err)
	}
	orig, err := json.Marshal(pod.Spec)
	if err != nil {
		return fmt.Errorf("podSpecPatch: %w", err)
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, js, apiv1.PodSpec{})
	if err != nil {
		return fmt.Errorf("podSpecPatch: %w", err)
	}
	var spec apiv1.PodSpec
	if err := json.Unmarshal(merged, &spec); err != nil {
		return fmt.Errorf("podSpecPatch: %w", err)
	}
	pod.Spec = spec
	return nil
}

// unsupported says why this runtime cannot run tmpl as a pod, or "".
func unsupported(tmpl *v1alpha1.Template) string {
	if tmpl == nil {
		return "the run has no template"
	}
	switch typ := tmpl.Type(); typ {
	case v1alpha1.TemplateTypeContainer, v1alpha1.TemplateTypeScript, v1alpha1.TemplateTypeContainerSet:
		return ""
	case v1alpha1.TemplateTypeResource, v1alpha1.TemplateTypeData:
		return "a pod cannot run resource and data templates: they run in the controller (resource.go, data.go)"
	case v1alpha1.TemplateTypeUnknown:
		return "the template must set exactly one of container, script, resource, suspend, http, plugin, containerSet, steps, dag and data"
	default:
		return fmt.Sprintf("the Kubernetes runtime cannot run %s templates yet", strings.ToLower(string(typ)))
	}
}

// userError is a run that can never start: a bad template.
type userError string

func (e userError) Error() string { return string(e) }

// itoa formats an int32 pointer for messages.
func itoa(p *int32) string {
	if p == nil {
		return "?"
	}
	return strconv.Itoa(int(*p))
}
