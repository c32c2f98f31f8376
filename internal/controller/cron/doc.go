// Package cron schedules CronWorkflows: it creates their Workflows when
// their schedules fire and keeps their status up to date. `braid server`
// runs one Scheduler beside the controller's Manager; `braid run` does not
// schedule.
//
// # What it owns
//
//   - The loop (scheduler.go): one goroutine that watches the CronWorkflows
//     and Workflows of a store, keeps one entry per CronWorkflow (its parsed
//     schedules, spec.schedules plus the legacy spec.schedule, in
//     spec.timezone or the machine's zone), and waits on an injected Clock
//     for the next due time. Nothing polls: it wakes on a store event, on
//     the next due time, or at most a minute apart so that a wall clock that
//     jumped is noticed. Sync lets a test wait until everything before it
//     was handled.
//   - A run (run.go): at a due time the CronWorkflow is read again; a
//     suspended one, or one whose `when` is false, is not run; under
//     concurrencyPolicy Forbid a run is skipped while a workflow is active,
//     under Replace the active workflows are terminated (as argo terminate,
//     which is what Argo does) and the new one created. The workflow is
//     spec.WorkflowFromCron: named <cron>-<unix seconds of the scheduled
//     time>, labelled workflows.argoproj.io/cron-workflow, annotated
//     workflows.argoproj.io/scheduled-time (RFC 3339), with
//     spec.workflowMetadata applied; a workflowTemplateRef is resolved and
//     the result validated as the API would. A failure sets the
//     SubmissionError condition; an invalid schedule or timezone the
//     SpecError condition, and nothing is created.
//   - Backfill (backfill.go): the times a CronWorkflow's schedules fire in
//     a range and the workflow made for each (<name>-<unix seconds>, the
//     scheduled-time annotation, the braid.dev/cron-backfill label, the
//     time as a parameter), shared by `braid cron backfill` and the
//     server's BackfillCronWorkflow.
//   - Missed runs: when the loop wakes late (the process was stopped or the
//     machine slept) only the latest due time runs. On start, a
//     CronWorkflow with startingDeadlineSeconds runs the latest time missed
//     since status.lastScheduledTime once, if it is within the deadline;
//     without a deadline, or before its first run, missed times are not
//     caught up (Argo's behaviour).
//   - Children (children.go): a workflow of status.active that completes is
//     removed from it and counted in status.succeeded or status.failed; one
//     deleted is removed. After a count, the oldest completed workflows
//     beyond successfulJobsHistoryLimit (default 3) and
//     failedJobsHistoryLimit (default 1) are deleted, and
//     stopStrategy.expression (expr-lang over cronworkflow.* and bare
//     succeeded/failed) is evaluated: when true the CronWorkflow gets
//     spec.suspend true and status.phase Stopped. Resuming it (suspend
//     false) makes its next run set the phase back to Active.
//   - Expressions (env.go): the cronworkflow.* variables; `when` has its
//     tags replaced ({{= }} with expr-lang) and is then evaluated with
//     govaluate semantics, as Argo.
//   - The Clock (clock.go): RealClock, and FakeClock for tests.
//
// Status writes read the CronWorkflow again and retry on a conflict, so an
// API call that changes the spec meanwhile is never lost.
//
// # Imports
//
// It imports the API types, internal/spec (building and validating the
// workflow), internal/expr, internal/store (kinds, events, errors) and
// internal/wfops, whose Terminate is what concurrencyPolicy Replace does to
// the workflows still running (the API's terminate, said once).
//
// # Must not import
//
// The executor, the server, the CLI or the wiring (internal/app), nor a
// store or runtime implementation: internal/app wires a store in. The server imports this
// package for Backfill; this package never imports the server.
package cron
