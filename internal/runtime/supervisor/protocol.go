package supervisor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/braidwf/braid/internal/runtime"
)

// Operations of a request.
const (
	opHello    = "hello"
	opStart    = "start"
	opKill     = "kill"
	opStatus   = "status"
	opShutdown = "shutdown"
)

// request is one message from a client.
type request struct {
	Seq   uint64       `json:"seq"`
	Op    string       `json:"op"`
	Run   *runtime.Run `json:"run,omitempty"`
	RunID string       `json:"runID,omitempty"`
	Hello *hello       `json:"hello,omitempty"`
}

// reply answers the request of the same Seq; Seq 0 is an event pushed by
// the supervisor.
type reply struct {
	Seq   uint64             `json:"seq"`
	Err   string             `json:"err,omitempty"`
	Known bool               `json:"known,omitempty"`
	Event *runtime.StepEvent `json:"event,omitempty"`
	Hello *hello             `json:"hello,omitempty"`
}

// hello introduces the two ends.
type hello struct {
	// Version is braid's build (the client's, or the supervisor's).
	Version string `json:"version"`
	// Instance is the supervisor's process's random ID: a new one means the
	// steps of the old one are gone.
	Instance string `json:"instance,omitempty"`
	PID      int    `json:"pid,omitempty"`
	// Running is how many steps the supervisor has in flight.
	Running int `json:"running,omitempty"`
	// Warnings are the supervisor's warnings from its start.
	Warnings []string `json:"warnings,omitempty"`
}

// maxMessage bounds one message on the socket (a run carries its
// template and its workflow's spec).
const maxMessage = 64 << 20

// Files of the supervisor in the data directory.
const (
	socketName = "supervisor.sock"
	lockName   = "supervisor.lock"
	// LogName is the supervisor's own log, appended to.
	LogName = "supervisor.log"
	// PIDName holds the running supervisor's process ID.
	PIDName = "supervisor.pid"
)

// maxSocketPath is the longest path a unix socket address holds.
const maxSocketPath = 107

// SocketPath is where the supervisor of dataDir listens: in the data
// directory, or, when that path is too long for a unix socket address, in
// a directory of braid's user's own under the system's temporary directory,
// named by a hash of the data directory.
func SocketPath(dataDir string) string {
	p := filepath.Join(dataDir, socketName)
	if len(p) <= maxSocketPath {
		return p
	}
	sum := sha256.Sum256([]byte(dataDir))
	return filepath.Join(os.TempDir(), fmt.Sprintf("braid-%d", os.Geteuid()), hex.EncodeToString(sum[:8])+".sock")
}
