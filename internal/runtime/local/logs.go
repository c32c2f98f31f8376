package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
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
//
// The log is opened only when it is a regular file, not through a link: a
// step that can write its own directory (isolation none) could otherwise
// make the API serve any file braid can read, or a FIFO that blocks it.
func (l *LogFiles) Open(_ context.Context, namespace, workflow, pod string) (*os.File, error) {
	path := logPath(l.runsDir, namespace, workflow, pod)
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if err == syscall.ELOOP {
			err = errNotRegular
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotRegular}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// errNotRegular: a step's log was replaced by something else than a file.
var errNotRegular = errors.New("the step's log is not a regular file (a link, or a special file): refused")

// logPath is where the log of a workflow's step is kept under runsDir:
// runs/<namespace>/<workflow>/<pod>/main.log, as stepDir places it.
func logPath(runsDir, namespace, workflow, pod string) string {
	return filepath.Join(workflowDir(runsDir, namespace, workflow), pathPart(pod), logFile)
}
