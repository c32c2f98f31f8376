package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/braidwf/braid/internal/runtime"
)

// followPoll is how often a following reader looks for more output.
const followPoll = 50 * time.Millisecond

// Logs returns the run's combined stdout and stderr, read from its log
// file, so that logs outlive the run and the Runtime. With follow, the
// reader waits for more output until the run ends (or ctx is done, which
// ends the stream with ctx's error). A run the Runtime has never seen, on
// this DataDir, is runtime.ErrUnknownRun.
func (rt *Runtime) Logs(ctx context.Context, runID string, follow bool) (io.ReadCloser, error) {
	rt.mu.Lock()
	s := rt.runs[runID]
	rt.mu.Unlock()
	var dir string
	var done <-chan struct{}
	switch {
	case s != nil:
		dir, done = s.dir, s.done
	default:
		d, ok := rt.idx.dir(runID)
		if !ok {
			return nil, fmt.Errorf("logs of %s: %w", runID, runtime.ErrUnknownRun)
		}
		dir = d
	}
	path := filepath.Join(dir, logFile)
	running := done != nil && !isClosed(done)
	if !follow || !running {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			// Started but failed before it had a log (a bad command).
			return io.NopCloser(eofReader{}), nil
		}
		if err != nil {
			return nil, fmt.Errorf("logs of %s: %w", runID, err)
		}
		return f, nil
	}
	return &follower{ctx: ctx, path: path, done: done, closed: make(chan struct{})}, nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// follower reads a log file as it grows, until the run is done. Read is
// for one goroutine; Close may be called from another to end a blocked Read.
type follower struct {
	ctx    context.Context
	path   string
	done   <-chan struct{}
	closed chan struct{}
	once   sync.Once
	timer  *time.Timer // Read's only

	mu sync.Mutex // guards f against a concurrent Close
	f  *os.File
}

func (r *follower) Read(p []byte) (int, error) {
	for {
		if n, wait, err := r.readOnce(p); !wait {
			return n, err
		}
		if err := r.sleep(); err != nil {
			return 0, err
		}
	}
}

// readOnce reads what there is; wait reports that there was nothing yet.
func (r *follower) readOnce(p []byte) (n int, wait bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if isClosed(r.closed) {
		return 0, false, os.ErrClosed
	}
	finished := isClosed(r.done)
	if r.f == nil {
		f, err := os.Open(r.path)
		switch {
		case err == nil:
			r.f = f
		case !errors.Is(err, fs.ErrNotExist):
			return 0, false, err
		case finished:
			return 0, false, io.EOF
		default:
			return 0, true, nil
		}
	}
	n, err = r.f.Read(p)
	if n > 0 || (err != nil && err != io.EOF) {
		return n, false, err
	}
	if finished {
		// Everything was written before done was closed, and this read,
		// after done, found nothing more.
		return 0, false, io.EOF
	}
	return 0, true, nil
}

// sleep waits for the poll interval, the run's end, ctx or Close.
func (r *follower) sleep() error {
	if r.timer == nil {
		r.timer = time.NewTimer(followPoll)
	} else {
		r.timer.Reset(followPoll)
	}
	select {
	case <-r.timer.C:
	case <-r.done:
	case <-r.ctx.Done():
		return r.ctx.Err()
	case <-r.closed:
		return os.ErrClosed
	}
	return nil
}

func (r *follower) Close() error {
	r.once.Do(func() { close(r.closed) })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
