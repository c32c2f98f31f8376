package emissary

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// The environment the Kubernetes runtime gives the main container, and the
// emissary reads.
const (
	// EnvTemplate holds the fully substituted template as JSON, as Argo's
	// executor receives it.
	EnvTemplate = "ARGO_TEMPLATE"
	// EnvIncludeResult is "true" when stdout is captured as outputs.result.
	EnvIncludeResult = "BRAID_INCLUDE_RESULT"
	// EnvArtifacts holds the run's artifact plan as JSON (step.ArtifactPlan).
	EnvArtifacts = "BRAID_ARTIFACTS"
	// EnvDeadline is the absolute deadline (RFC 3339, nanoseconds) after
	// which the child is killed and the step reported Failed (MsgDeadline).
	EnvDeadline = "BRAID_DEADLINE"
	// EnvActiveDeadline is a Go duration counted from the emissary's start
	// (the template's activeDeadlineSeconds; MsgActiveDeadline).
	EnvActiveDeadline = "BRAID_ACTIVE_DEADLINE"
	// EnvTerminationLog overrides where the result is written; tests set it.
	EnvTerminationLog = "BRAID_TERMINATION_LOG"
	// EnvStaging overrides the directory of the staged script and the
	// captured log (default StagingDir).
	EnvStaging = "BRAID_STAGING_DIR"
	// EnvContainerName is the container's name, as Argo's executor gets it.
	// When it is set, the emissary writes the marker CtrDir/<name>.done once
	// its child has ended (the exit code, or MarkerSkipped), which the
	// containers that depend on it and the pod's sidecars wait for.
	EnvContainerName = "ARGO_CONTAINER_NAME"
	// EnvRole is what the container is: "" for the main container of a
	// container or script template, RoleContainer or RoleSidecar.
	EnvRole = "BRAID_EMISSARY_ROLE"
	// EnvStopAfter lists, comma-separated, the containers whose markers stop
	// a sidecar: when all of them are there, its child gets SIGTERM, then
	// SIGKILL after the kill grace.
	EnvStopAfter = "BRAID_STOP_AFTER"
	// EnvCtrDir overrides CtrDir; tests set it.
	EnvCtrDir = "BRAID_CTR_DIR"
	// EnvKillGrace is the time between SIGTERM and SIGKILL when the emissary
	// stops its child (a sidecar's stop, a deadline), as a Go duration: the
	// pod's terminationGracePeriodSeconds when the workflow sets it.
	EnvKillGrace = "BRAID_KILL_GRACE"
)

// The roles of the containers the emissary wraps.
const (
	// RoleContainer is a container of a containerSet: it waits for its
	// dependencies' markers, is skipped (exit 0, phase Omitted) when one of
	// them did not succeed, and is retried in place per the set's
	// retryStrategy. Only the one named "main" loads inputs and reports
	// outputs, as in Argo.
	RoleContainer = "container"
	// RoleSidecar is a template's sidecar: it runs until the containers of
	// EnvStopAfter have ended, and a stop by the emissary is a success.
	RoleSidecar = "sidecar"
	// CtrDir holds the markers, on the shared volume.
	CtrDir = BinDir + "/ctr"
	// MarkerSkipped is the marker of a container that did not run.
	MarkerSkipped = "skipped"
	// ContainerSetMain is the container of a set whose inputs and outputs
	// are the template's.
	ContainerSetMain = "main"
)

const (
	// DefaultTerminationLog is the container's terminationMessagePath.
	DefaultTerminationLog = "/dev/termination-log"
	// BinDir is the shared emptyDir the init container copies braid into;
	// the main container runs BinDir/braid.
	BinDir = "/var/run/braid"
	// StagingDir holds the staged script and the captured main log.
	StagingDir = BinDir + "/staging"
	// MaxMessage is the most the kubelet keeps of a termination message.
	MaxMessage = 4096
	// ResultObject is the name, under the run's key, of the full result when
	// it does not fit in MaxMessage bytes.
	ResultObject = "braid-result.json"
	// LogObject is the name, under the run's key, of the shipped main log.
	LogObject = "main.log"
)

// Messages of the final results, worded as the local runtime's.
const (
	MsgDeadline       = "Step exceeded its deadline"
	MsgActiveDeadline = "Pod was active on the node longer than the specified deadline"
	// MsgSidecarStopped is a sidecar's message when the emissary stopped it.
	MsgSidecarStopped = "stopped: the main containers ended"
)

// Message is the termination message: the step's result as the emissary
// reports it to the runtime. It is the only channel from the pod back to
// braid; the emissary needs no API access.
type Message struct {
	// Phase is Succeeded, Failed or Error; "" is read as Succeeded for exit
	// code 0 and Failed otherwise.
	Phase    v1alpha1.NodePhase `json:"phase,omitempty"`
	ExitCode *int32             `json:"exitCode,omitempty"`
	Message  string             `json:"message,omitempty"`
	Outputs  *v1alpha1.Outputs  `json:"outputs,omitempty"`
	// StartedAt and FinishedAt are when the child started and ended, to the
	// nanosecond (a container status has whole seconds).
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// Log is where the main log was shipped, when it was.
	Log *v1alpha1.ArtifactLocation `json:"log,omitempty"`
	// Full is where the complete Message was saved when it did not fit in
	// MaxMessage bytes; Outputs then lacks what was too big.
	Full *v1alpha1.ArtifactLocation `json:"full,omitempty"`
}

// ParseMessage reads a termination message. An empty one is an error.
func ParseMessage(s string) (*Message, error) {
	if s == "" {
		return nil, fmt.Errorf("empty termination message")
	}
	var m Message
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("parse the termination message: %w", err)
	}
	return &m, nil
}

// FinalPhase is the step's phase: Phase, else by exit code.
func (m *Message) FinalPhase() v1alpha1.NodePhase {
	switch {
	case m.Phase != "":
		return m.Phase
	case m.ExitCode != nil && *m.ExitCode == 0:
		return v1alpha1.NodeSucceeded
	}
	return v1alpha1.NodeFailed
}
