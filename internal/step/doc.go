// Package step holds the data that describes one step as it passes between
// the layers: what the engine decides to launch (Launch), where its output
// artifacts go (ArtifactPlan), and what a runtime reports about it (Result,
// Container). The engine plans Launches and reads Results; the controller
// hands each Launch to a runtime inside a runtime.Run and turns each
// runtime.StepEvent back into a Result; the runtimes and the executor run a
// Launch with its ArtifactPlan. Each of these is declared here once, so
// that nothing copies it field by field.
//
// It is pure data: no functions with behaviour, no I/O. It imports only
// pkg/apis and the standard library, so that every layer may import it.
package step
