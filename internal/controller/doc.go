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
// No poison pill (recover.go, quarantine.go, ready.go):
//   - a panic in engine.Reconcile is recovered at the pass (driver.decide):
//     it is logged with its stack, counted (Controller.Panics), and ends
//     that workflow alone Error, "internal error: reconcile panicked: ...",
//     through the normal write path (its unfinished nodes end Error, its
//     steps are stopped). A panic elsewhere in a Manager's driver is
//     recovered at the driver goroutine and ends its workflow the same way;
//   - crash quarantine (Manager.SetQuarantine): a watchdog keeps a journal
//     file of the workflows a driver has been busy with for longer than
//     busyAfter (rewritten only when that set changes, never per
//     reconcile); a clean stop removes it. On start, a journal left behind
//     means the previous process died: each workflow it lists counts one
//     more consecutive crash, the others start again from zero, and one
//     at limits.quarantineAfterCrashes ends Error ("quarantined: ...")
//     before any reconcile (and is not archived: that may be what
//     crashed). An OOM kill therefore never becomes a crash loop;
//   - Manager.Ready answers "recovering N workflows" until every workflow
//     found unfinished at start has been loaded, recovered and reconciled
//     once (an API server's /readyz follows it).
//
// The interfaces it needs from a store and a runtime are declared here, by
// their consumer. A runtime that keeps resources per workflow (the
// Kubernetes runtime's PVCs and workflow-level pod GC) also implements
// WorkflowHooks (hooks.go), called before a workflow's first step and once
// its completion is persisted. The controller is the one place that writes
// a workflow's status. It must not import the server or any store or runtime
// implementation: cmd and cli wire those in.
package controller
