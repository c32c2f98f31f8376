package local

import (
	"context"
	"os"
	"path/filepath"
)

// LogFiles opens the kept logs of the steps run on a data directory: the
// file each step's combined stdout and stderr went to, which outlives the
// step, the Runtime and its workflow (until RemoveWorkflowFiles). It
// reads files only, so a reader that runs no steps (the API server, braid
// logs) needs no Runtime. It is what the API server reads step logs
// through (server.StepLogs).
type LogFiles struct {
	runsDir string
}

// NewLogFiles reads the logs kept under dataDir.
func NewLogFiles(dataDir string) *LogFiles {
	return &LogFiles{runsDir: filepath.Join(dataDir, "runs")}
}

// Open opens the log of the workflow's step that ran as pod, as it is now:
// a running step's log grows, and the file read on shows what it gained.
// A step that has not started, or ended before it had a log, has none:
// the error wraps fs.ErrNotExist.
func (l *LogFiles) Open(_ context.Context, namespace, workflow, pod string) (*os.File, error) {
	return os.Open(logPath(l.runsDir, namespace, workflow, pod))
}

// logPath is where the log of a workflow's step is kept under runsDir:
// runs/<namespace>/<workflow>/<pod>/main.log, as stepDir places it.
func logPath(runsDir, namespace, workflow, pod string) string {
	return filepath.Join(workflowDir(runsDir, namespace, workflow), pathPart(pod), logFile)
}
