package runtime

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Run is one step to start.
type Run struct {
	// ID is unique within the runtime: "<workflow uid>-<node id>". Start is
	// idempotent by ID.
	ID          string
	Namespace   string
	Workflow    string
	WorkflowUID string
	NodeID      string
	PodName     string
	// Template is the fully substituted leaf template.
	Template *v1alpha1.Template
	// Spec is the workflow's spec, read-only: the workflow-wide pod settings
	// (volumes, volumeClaimTemplates, podGC, serviceAccountName, ...).
	// Runtimes that have no pods may ignore it; it may be nil in tests.
	Spec *v1alpha1.WorkflowSpec
	// IncludeResult captures stdout (the last 256 KiB, one trailing newline
	// removed) as outputs.result.
	IncludeResult bool
	// ActiveDeadline counts from the start of the step; Deadline is absolute.
	// When either passes, the step is killed and reported Failed.
	ActiveDeadline time.Duration
	Deadline       time.Time
	Env            map[string]string
	// Artifacts says where output artifacts without a location of their own
	// are saved, and whether the main log is saved too; nil: the step may
	// have no such outputs.
	Artifacts *ArtifactPlan
}

// ArtifactPlan is the artifact repository of one run, resolved by the
// controller (the workflow's artifactRepositoryRef, else the default).
type ArtifactPlan struct {
	// Repository holds what output locations inherit: bucket, endpoint,
	// credentials, and the kind (s3, file, ...).
	Repository *v1alpha1.ArtifactRepository
	// Key is the prefix of this run's outputs, keyFormat already applied:
	// an output is saved at <Key>/<name>.tgz (or <Key>/<name> unarchived).
	Key string
	// ArchiveLogs saves the main container's log as the output artifact
	// "main-logs" (<Key>/main.log).
	ArchiveLogs bool
}

// StepEvent reports a step's progress: Running once started, then one of
// Succeeded, Failed or Error.
type StepEvent struct {
	RunID       string
	WorkflowUID string
	NodeID      string
	Phase       v1alpha1.NodePhase
	Message     string
	ExitCode    *int32
	Outputs     *v1alpha1.Outputs
	StartedAt   time.Time
	FinishedAt  time.Time
	// PodIP and HostNode say where the step runs, once known: a daemon's
	// address is {{steps.NAME.ip}}.
	PodIP    string
	HostNode string
	// Containers are the states of a containerSet's containers, in the
	// template's order, as far as they are known; nil for other steps.
	Containers []ContainerState
}

// ContainerState is one container of a containerSet step, which Argo shows
// as a node of type Container under the step's node.
type ContainerState struct {
	Name string
	// Phase is Pending, Running, Succeeded, Failed, Error, or Omitted (the
	// container was skipped because a dependency did not succeed).
	Phase      v1alpha1.NodePhase
	Message    string
	ExitCode   *int32
	StartedAt  time.Time
	FinishedAt time.Time
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
	// Logs streams the run's combined stdout and stderr; with follow it waits
	// for more until the run ends. Logs outlive the run.
	Logs(ctx context.Context, runID string, follow bool) (io.ReadCloser, error)
}

// ErrUnknownRun is returned by Logs for a run the runtime has never started.
var ErrUnknownRun = errors.New("unknown run")
