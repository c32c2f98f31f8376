// Package kube runs steps as pods (runtime.Runtime, plus Status for the
// controller's Manager).
//
// Start builds one pod per run (pod.go): an init container (braid-init,
// the braid image) copies the static braid binary into an emptyDir at
// /var/run/braid; the main container is the template's, its command
// wrapped as `/var/run/braid/braid exec emissary -- COMMAND...` (an image
// without a command in the template takes its entrypoint from the image
// table, DefaultImages), with ARGO_TEMPLATE, the run's Env, the emissary's
// settings and one secretKeyRef variable per artifact secret; Argo's
// labels and annotations, braid.dev/run-id, an ownerReference to the
// Workflow; the template's serviceAccountName, volumes, nodeSelector,
// affinity, tolerations, metadata, resources, securityContext, init
// containers and sidecars; activeDeadlineSeconds; then podSpecPatch as a
// strategic merge patch. Start is idempotent by run ID; a pod of the same
// name left by an earlier run is replaced.
//
// Results come back in the main container's termination message, written
// by package internal/executor/emissary (its protocol.go is the contract),
// so the pod needs no API access. A shared pod informer (label
// braid.dev/run-id) drives everything (events.go, observe.go): Running
// when the main container runs, the final event when it ends; a pod that
// cannot start ends Error after a bounded wait (an image that is not
// present, a missing secret, an unschedulable pod) and is deleted; a pod
// deleted from under the runtime ends Error "pod deleted". Sidecars run
// under the emissary too (role sidecar), which stops them once main has
// written its marker in the shared volume; a sidecar that still runs
// 25 s after main ended (one not wrapped) is stopped by lowering the pod's
// activeDeadlineSeconds to 1, so the pod and its logs stay. A containerSet
// is one pod whose containers each run under the emissary (containerset.go:
// dependencies, skips and in-place retries; the result is main's, the
// phase that of the first container that failed); a daemon is Running
// once the pod is Ready. Every event carries the pod's IP and node. Status answers
// from memory or the informer's cache (after a restart); Kill deletes the
// pod with a grace period and reports Failed at once.
//
// Logs (logs.go): PodLogs, which needs no Runtime, serves the API server a
// step's log as a file: the pod's work containers' logs fetched through the
// API (a finished pod's once, a running pod's at most twice a second), and
// once the pod is gone, the log the emissary shipped to the artifact
// repository (where it is, the wiring says: ShippedLog).
//
// Per workflow (controller.WorkflowHooks, pvc.go): WorkflowStarted creates
// the PVCs of volumeClaimTemplates, owned by the Workflow and recorded in
// status.persistentVolumeClaims; WorkflowCompleted deletes them per
// volumeClaimGC (OnWorkflowSuccess by default, as Argo) and the pods that
// podGC collects at the workflow's end. podGC (podgc.go) marks each pod it
// selects with Argo's annotation, so OnPodCompletion and OnPodSuccess are
// decided from the pod alone, after its result is taken; a
// deleteDelayDuration defers the delete. The pod-level fields Argo takes
// from the workflow and the template (podspec.go): spec.podPriorityClassName,
// schedulerName, hostAliases, dnsConfig, securityContext, the workflow's
// volumes, automountServiceAccountToken and podMetadata.
//
// A resource template (resource.go, resource_exec.go, resource_wait.go)
// runs in the controller, not in a pod: client-go dynamic, impersonating
// the workflow's service account, does get, create, apply (server-side),
// delete, replace or patch, sets the ownerReference when asked, and
// evaluates successCondition and failureCondition (condition.go, label
// selector syntax over the object's fields) on a watch; a request RBAC
// denies ends the node Error with the API's message.
//
// # Imports
//
// It imports client-go, internal/runtime, internal/step, internal/executor
// (the image table, data templates), the emissary protocol,
// internal/artifact (reading back what pods saved) and internal/config
// (the environment variable of a secret).
//
// # Must not import
//
// The engine, the controller, a store, the server, the CLI or the wiring
// (internal/app): the controller drives it through runtime.Runtime.
package kube
