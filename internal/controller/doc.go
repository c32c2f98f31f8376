// Package controller is the loop around the engine: it takes a snapshot of
// a workflow, calls engine.Reconcile, persists the new status (only the
// nodes that changed), and only then carries out the plan on a runtime. It
// wakes on runtime events, on the timers the engine asks for, and on
// shutdown requests; nothing polls on a fixed period.
//
// The interfaces it needs from a store and a runtime are declared here, by
// their consumer. The controller is the one place that writes a workflow's
// status. It must not import the server or any store or runtime
// implementation: cmd and cli wire those in.
package controller
