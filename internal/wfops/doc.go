// Package wfops applies the argo CLI's workflow operations (retry,
// resubmit, suspend, resume, stop, terminate, node set) to a Workflow.
//
// # What it owns
//
// The rules of each operation, as pure functions: which states allow it,
// which nodes it touches, and what the Workflow looks like afterwards.
// Every function takes a *v1alpha1.Workflow, leaves it untouched, and
// returns a modified deep copy (Resubmit returns a new object to create).
// The caller (internal/server) loads the Workflow, calls one function, and
// writes the result to the store with optimistic concurrency; on a conflict
// it reloads and calls again. The controller then drives the workflow on.
//
//   - selector.go: --node-field-selector, as pkg/nodeselector defines it,
//     made strict: an empty selector or an unsupported field is an
//     ErrBadRequest.
//   - retry.go, prune.go, downstream.go: argo retry. prune.go deletes the
//     nodes that must run again and reopens their ancestors; downstream.go
//     finds what depends on a restarted node in its DAG or steps.
//   - resubmit.go: argo resubmit [--memoized], and RenameNodes for the new
//     name the store assigns.
//   - suspend.go: argo suspend and argo resume.
//   - shutdown.go: argo stop and argo terminate.
//   - set.go: argo node set.
//   - params.go: -p NAME=VALUE overrides of spec.arguments.parameters.
//   - tree.go: walks over status.nodes (containers, subtrees) shared by
//     the above; errors.go: ErrBadRequest and ErrState.
//
// # Errors
//
// Every error wraps ErrBadRequest (a bad argument: gRPC InvalidArgument) or
// ErrState (not allowed in the workflow's current state: gRPC
// FailedPrecondition), with a message an Argo user understands.
//
// # What it must not do
//
// No I/O, no store, no runtime, no goroutines, no clock reads (callers pass
// now). It imports only pkg/apis/v1alpha1, pkg/nodeselector and
// k8s.io/apimachinery; never internal/engine, internal/store or
// internal/server. It kills nothing: a caller that needs to stop running
// steps does so itself.
package wfops
