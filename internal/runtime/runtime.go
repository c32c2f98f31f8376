package runtime

import (
	"context"

	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Run is one step to start: the engine's Launch and where it belongs.
type Run struct {
	// ID is unique within the runtime: "<workflow uid>-<node id>". Start is
	// idempotent by ID.
	ID          string
	Namespace   string
	Workflow    string
	WorkflowUID string
	// Launch is what to run: the node, its template, result capture,
	// deadlines and environment.
	step.Launch
	// Spec is the workflow's spec, read-only: the workflow-wide pod settings
	// (volumes, volumeClaimTemplates, podGC, serviceAccountName, ...).
	// Runtimes that have no pods may ignore it; it may be nil in tests.
	Spec *v1alpha1.WorkflowSpec
	// Artifacts says where output artifacts without a location of their own
	// are saved, and whether the main log is saved too; nil: the step may
	// have no such outputs.
	Artifacts *step.ArtifactPlan
}

// StepEvent reports a step's progress: Running once started, then one of
// Succeeded, Failed or Error.
type StepEvent struct {
	RunID       string
	WorkflowUID string
	NodeID      string
	step.Result
}

// Runtime runs steps.
type Runtime interface {
	// Start starts the run; starting a run that exists already does nothing.
	Start(ctx context.Context, run Run) error
	// Kill stops the run and everything it started (SIGTERM, then SIGKILL
	// after a grace period). Killing a finished or unknown run does nothing.
	Kill(ctx context.Context, runID string) error
	// Status returns the latest event of a run, and false if it is unknown.
	Status(ctx context.Context, runID string) (StepEvent, bool, error)
	// Events delivers every event once, in order per run. It never blocks the
	// runtime: events queue until read.
	Events() <-chan StepEvent
}
