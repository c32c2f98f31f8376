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
// performs no I/O and holds no engine logic (defaults, validation, template
// resolution and phase decisions live in internal/spec and internal/engine).
// It depends only on the standard library, k8s.io/api and
// k8s.io/apimachinery.
//
// # Generated files
//
// zz_generated.deepcopy.go and the CRD manifests in manifests/base/crds are
// produced by hack/gen.sh (controller-gen); do not edit them by hand.
//
// +kubebuilder:object:generate=true
// +groupName=argoproj.io
package v1alpha1
