// Package controller is the loop around the engine: it takes a snapshot of
// a workflow, calls engine.Reconcile, persists the new status (only the
// nodes that changed, and nothing when nothing changed), and only then
// carries out the plan on a runtime. It wakes on runtime events, on the
// timers the engine asks for, on changes others write to the store, and on
// shutdown requests; nothing polls on a fixed period.
//
// Run drives one workflow in this process (braid run). The Manager
// (manager.go) drives every stored workflow that is not completed (braid
// server): it watches the store, routes each runtime event to its
// workflow's driver, reloads a workflow when an API call changed it, and
// after a restart recovers each step in flight: a finished one is
// reported, one the runtime never started is launched again
// (engine.Snapshot.Relaunch), and one the runtime lost is reported Error.
//
// The interfaces it needs from a store and a runtime are declared here, by
// their consumer. A runtime that keeps resources per workflow (the
// Kubernetes runtime's PVCs and workflow-level pod GC) also implements
// WorkflowHooks (hooks.go), called before a workflow's first step and once
// its completion is persisted. The controller is the one place that writes
// a workflow's status. It must not import the server or any store or runtime
// implementation: cmd and cli wire those in.
package controller
