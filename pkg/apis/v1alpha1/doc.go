// Package v1alpha1 holds braid's Go types for the Argo Workflows API
// (group argoproj.io, version v1alpha1): Workflow, WorkflowTemplate,
// ClusterWorkflowTemplate, CronWorkflow and WorkflowEventBinding, with every
// nested spec and status type.
//
// # What this package owns
//
//   - The wire format. Every JSON field name is the one Argo Workflows v4.1.2
//     uses, so a spec written for Argo decodes here unchanged and a Workflow
//     braid writes can be read by Argo's own clients. When a name here and a
//     name in Argo disagree, this package is wrong.
//   - The kind constants, the scheme registration (AddToScheme) and the
//     generated DeepCopy methods (zz_generated.deepcopy.go) that make the kinds
//     usable with apimachinery, client-go and controller-runtime.
//   - A few pure helpers that every caller would otherwise rewrite: NodeID,
//     the NodePhase/WorkflowPhase predicates, (*Template).Type, and the
//     AnyString and Item value types.
//
// # What it must not do
//
// It imports nothing from braid's internal packages, reads no configuration,
// performs no I/O and holds no engine logic: validation, template resolution
// and phase decisions belong to internal/spec and internal/engine. It depends
// only on the standard library, k8s.io/api and k8s.io/apimachinery.
//
// # Go shapes that differ from Argo's
//
// The JSON is Argo's; a few Go shapes are not, so that a decode and encode
// loses nothing:
//
//   - Optional booleans whose false is meaningful (suspend, failFast,
//     archiveLogs, optional, realtime, ...) are *bool, and empty objects that
//     mean something (suspend: {}, archive: {none: {}}, supplied: {}) are
//     pointers to empty structs.
//   - parallelism (workflow and template) is an IntOrString: braid also
//     accepts a string holding an integer.
//   - A steps group is ParallelSteps, a plain []WorkflowStep.
//   - Parameter values are AnyString, withItems entries are Item, and plugin
//     templates are Plugin, which keeps its JSON text as written.
//   - The legacy singular forms schedule, synchronization.semaphore and
//     synchronization.mutex are kept so that older specs still decode.
//
// # Generated files
//
// zz_generated.deepcopy.go and the CRD manifests in manifests/base/crds are
// produced by hack/gen.sh (controller-gen); do not edit them by hand.
//
// +kubebuilder:object:generate=true
// +groupName=argoproj.io
package v1alpha1
