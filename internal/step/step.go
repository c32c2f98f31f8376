package step

import (
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Launch is one Pod node to start: the engine plans it (its Status already
// holds the node, Pending), and a runtime runs it.
type Launch struct {
	NodeID string
	// NodeName is the node's name (for logs and the runtime's records).
	NodeName string
	PodName  string
	// Template is the fully substituted leaf template, a private copy: its
	// inputs hold the bound values. A script keeps its source; the runtime
	// stages it and appends the staged path to the args (rule 11.1).
	// Resource, http, plugin, data and containerSet templates are launched
	// too: the runtime refuses the types it cannot run.
	Template *v1alpha1.Template
	// IncludeResult asks the runtime to capture stdout (the last 256 KiB,
	// one trailing newline removed) as outputs.result (rule 11.3).
	IncludeResult bool
	// ActiveDeadline counts from the moment the step starts (template
	// activeDeadlineSeconds); Deadline is absolute: the earliest of the
	// template timeout (from the node's creation), the workflow's
	// activeDeadlineSeconds (not for exit handlers) and a retry
	// backoff.maxDuration. Zero values mean none. When either passes, the
	// runtime kills the step and reports it Failed.
	ActiveDeadline time.Duration
	Deadline       time.Time
	// Env is extra environment for the step: ARGO_POD_NAME, ARGO_NODE_ID,
	// ARGO_NODE_NAME, ARGO_WORKFLOW_NAME, ARGO_WORKFLOW_UID,
	// ARGO_INCLUDE_SCRIPT_OUTPUT and, with a deadline, ARGO_DEADLINE (RFC 3339).
	Env map[string]string
	// OnExit is true for a step that is part of an exit handler: a Stop
	// shutdown and the workflow deadline spare it.
	OnExit bool
}

// ArtifactPlan is the artifact repository of one step, resolved by the
// controller (the workflow's artifactRepositoryRef, else the default). Its
// JSON is what the Kubernetes runtime hands the emissary in a pod.
type ArtifactPlan struct {
	// Repository is what locations without connection settings of their own
	// inherit (bucket, endpoint, credentials, the kind: s3, file, ...), and
	// where outputs without a location are saved. nil: no repository.
	Repository *v1alpha1.ArtifactRepository `json:"repository,omitempty"`
	// Key is the prefix of the step's outputs, keyFormat already applied:
	// an output is saved at <Key>/<name>.tgz (or <Key>/<name> unarchived).
	Key string `json:"key,omitempty"`
	// ArchiveLogs saves the main container's log as the output artifact
	// LogArtifact at <Key>/main.log, unless the template's
	// archiveLocation.archiveLogs says otherwise.
	ArchiveLogs bool `json:"archiveLogs,omitempty"`
}

// LogArtifact is the name of the output artifact holding a step's main log
// when its logs are archived.
const LogArtifact = "main-logs"

// Result is what a runtime reports about one Pod node, and what the engine
// merges into the node.
type Result struct {
	// Phase is Running (started), Succeeded, Failed or Error. Running only
	// moves a Pending node on; other phases are ignored.
	Phase v1alpha1.NodePhase
	// Message is the node's message; for a Failed step with an empty message
	// and a non-zero exit code, the engine writes "main: Error (exit code N)".
	Message  string
	ExitCode *int32
	// Outputs holds the output parameters with their values, the result
	// (when it was captured) and the artifacts. The engine fills in each
	// declared output's globalName when the report leaves it out.
	Outputs *v1alpha1.Outputs
	// StartedAt is informational: the node keeps the startedAt it got when it
	// was created, as in Argo, so that time spent Pending counts against a
	// template timeout. FinishedAt becomes the node's finishedAt (now when
	// zero).
	StartedAt  time.Time
	FinishedAt time.Time
	// PodIP and HostNode say where the step runs, once known: PodIP is a
	// daemon's address ({{steps.NAME.ip}}), HostNode the node's hostNodeName.
	PodIP    string
	HostNode string
	// Containers are the states of a containerSet's containers, in the
	// template's order, as far as they are known; nil for other steps. They
	// become the phases of the step's Container nodes.
	Containers []Container
}

// Container is one container of a containerSet step, which Argo shows as a
// node of type Container under the step's node.
type Container struct {
	Name string
	// Phase is Pending, Running, Succeeded, Failed, Error, or Omitted (the
	// container was skipped because a dependency did not succeed).
	Phase      v1alpha1.NodePhase
	Message    string
	ExitCode   *int32
	StartedAt  time.Time
	FinishedAt time.Time
}
