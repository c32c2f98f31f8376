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
// deleted from under the runtime ends Error "pod deleted". When main ends
// and sidecars still run, the pod's activeDeadlineSeconds is lowered to 1
// so the kubelet stops them and the pod and its logs stay. Status answers
// from memory or the informer's cache (after a restart); Kill deletes the
// pod with a grace period and reports Failed at once; Logs reads the pod's
// log through the API, then the log the emissary shipped to the artifact
// repository.
//
// It imports client-go, internal/executor (the image table), the emissary
// protocol, internal/artifact (reading back what pods saved) and
// internal/runtime; never the engine, the controller or a store.
package kube
