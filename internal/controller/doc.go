// Package controller is the loop around the engine: it takes a snapshot of
// a workflow, calls engine.Reconcile, persists the new status (only the
// nodes that changed, and nothing when nothing changed), and only then
// carries out the pass's decisions: the lock decisions are committed, the
// memoization writes made, and the plan carried out on a runtime. It wakes
// on runtime events, on the timers the engine asks for, on changes others
// write to the store, and on shutdown requests; nothing polls on a fixed
// period.
//
// # One pass, one switch, one write
//
// A driver (run.go) turns each pass into an outcome with one switch
// (driver.after), as controller-runtime turns a Reconcile's result into a
// requeue: wait (for a report, a wake-up or RequeueAfter), done, reload
// (a conflict: someone else wrote the workflow), or backoff (any other
// system error, retried from 50ms doubling to 30s; braid run gives up
// after 6 tries). User errors never reach it: the engine records them in
// the status. A panic anywhere in a pass is recovered at that boundary.
//
// The snapshot is plain data (engine.Snapshot): the lock state is a copy of
// the part of the lock table the workflow needs, taken in a
// synclock.Session that keeps other workflows from taking a lock until the
// pass's decisions are committed; the memoization entries are those the
// previous pass asked for (engine.Result.Need), loaded for the next pass
// only.
//
// Every write of a workflow goes through driver.commit (write.go), which
// takes an update: a value that a decider returns. The deciders are the
// engine pass, admission (a workflow held back by parallelism or its
// locks), a workflow that cannot start, the runtime's WorkflowHooks, and
// artifact GC (artifact.Collect returns what it deleted); none of them
// changes the workflow itself. Each driver logs through its own logger,
// which carries the workflow's key; a Controller without a Logger logs to
// slog.Default(), never to nowhere.
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
// their consumer. Optional capabilities are typed Options fields, nil when
// off, never type assertions: Hooks (a runtime that keeps resources per
// workflow, the Kubernetes runtime's PVCs and workflow-level pod GC,
// hooks.go), Archive, Memos and MemoPruner. The controller is the one
// place that writes a workflow's status.
//
// # Must not import
//
// internal/server, internal/cli, internal/app, internal/wfops,
// internal/executor, or any store or runtime implementation
// (internal/store/..., internal/runtime/local, internal/runtime/kube):
// internal/app wires those in. It imports the engine, internal/runtime
// (the interface and its data types), internal/store (the interfaces),
// internal/artifact and internal/synclock.
package controller
