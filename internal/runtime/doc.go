// Package runtime declares what a step runtime does: start a step, kill it
// and report its result. Implementations live below it: local/ runs steps
// as host processes (the embedded deployment), kube/ as pods (the
// Kubernetes deployment). Each also serves the kept logs of its steps to
// the API server (local.LogFiles, kube.PodLogs), through the narrow
// interface the server declares (server.StepLogs): reading a log needs no
// running Runtime.
//
// # What it owns
//
//   - The Runtime interface (runtime.go), with the Run it starts (the
//     engine's step.Launch plus where it belongs) and the StepEvents it
//     reports (a step.Result for one run).
//   - WorkflowResources (workflow.go): what a runtime keeps for a whole
//     workflow (its PVCs), returned as a value for the controller to write.
//   - Queue (queue.go): the in-order, never-blocking queue of StepEvents
//     that both runtimes deliver through (and the controller's Manager
//     uses per workflow).
//
// A runtime reports results; it never writes a Workflow (only the
// controller does).
//
// # Must not import
//
// It imports the API types and internal/step (the step data it shares with
// the engine and the executor) and nothing else of braid. It must not
// import its implementations, the executor, the engine, the store, the
// controller, the server or the CLI.
package runtime
