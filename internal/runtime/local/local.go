package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/image"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("local runtime: closed")

// Messages of the final events, as Argo words them.
const (
	// MsgDeadline: the absolute Deadline passed (the workflow's
	// activeDeadlineSeconds or the template's timeout).
	MsgDeadline = "Step exceeded its deadline"
	// MsgActiveDeadline: the step ran longer than its ActiveDeadline (the
	// template's activeDeadlineSeconds).
	MsgActiveDeadline = "Pod was active on the node longer than the specified deadline"
	// MsgKilled: Kill stopped the step.
	MsgKilled = "workflow shutdown"
	// MsgClosed: Close stopped the step.
	MsgClosed = "the local runtime was closed while the step ran"
	// MsgLost: a run started by an earlier Runtime on the same DataDir has
	// no result: the process that owned it (braid run, or the supervisor)
	// stopped while it ran, and the step died with it. Argo's message for a
	// pod that vanished.
	MsgLost = "pod deleted"
)

// Config configures a Runtime. Only DataDir is required.
type Config struct {
	// DataDir holds the runs (see the package documentation).
	DataDir string
	// Images is the image table; nil means executor.BuiltinImages(Braid).
	// A caller with a config file passes
	// executor.MergeImageTable(executor.BuiltinImages(braid), fromFile).
	Images executor.ImageTable
	// Braid is the braid executable, which the built-in images' shims call;
	// "" means os.Executable().
	Braid string
	// KillGrace is the time between SIGTERM and SIGKILL; 0 means 10s.
	KillGrace time.Duration
	// Environ is the environment every step on the host's root starts
	// from ("KEY=value"), before its container's env and the run's ARGO_*
	// variables; nil means what a container gives: PATH (braid's) and HOME
	// (the step's user's), and nothing else (environ.go). Never pass
	// braid's own environment: it holds the BRAID_SECRET_* credentials.
	Environ []string
	// MaxCachedRuns is how many finished runs Status answers from memory;
	// older ones are read back from their result.json. 0 means 10000.
	MaxCachedRuns int
	// Logger receives the runtime's own messages; nil discards them.
	Logger *slog.Logger
	// Clock gives the times of events and deadlines; nil means time.Now.
	Clock func() time.Time
	// Artifacts moves input and output artifacts. nil: only raw input
	// artifacts load (any other location ends the step Error), and output
	// artifacts are not saved.
	Artifacts *artifact.Drivers
	// Isolation says whether each step gets a root view of its own (an
	// overlay of the host's root, in a mount namespace of its own): one of
	// IsolationNone (for ""), IsolationAuto and IsolationRequired. See
	// sandbox.go.
	Isolation string
	// ImagesDir holds images as OCI layouts or archives (package image):
	// with a root view, a step whose image is there runs on the image's
	// root file system (image.go). "" means none: every step sees the
	// host's root.
	ImagesDir string
}

// Runtime runs steps as host processes. It is safe for concurrent use.
type Runtime struct {
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	images   executor.ImageTable
	runsDir  string
	idx      *runIndex
	shimsDir string
	devNull  *os.File
	basePath string // PATH of Environ
	paths    executor.PathCache
	// privateTmp: this process may give steps a /tmp of their own (it is
	// root and mount(8) exists).
	privateTmp bool
	// sandbox gives every step a root view of its own; nil when steps run
	// on the host's file system.
	sandbox *sandbox
	// imageStore finds and unpacks the images of ImagesDir; nil without
	// one.
	imageStore *image.Store
	// cgroups makes the cgroups that hold every step's processes and
	// enforce resources.limits (cgroup.go); nil where they are not
	// available (New warned).
	cgroups *cgroups

	events *runtime.Queue
	wg     sync.WaitGroup // one per Start in progress, per input load and per step process
	// ctx bounds the loading and saving of artifacts; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	closed   bool
	runs     map[string]*step
	finished []string // IDs of finished runs, oldest first, for eviction
	dirs     map[string]bool
	shims    map[string]*shim
}

var _ runtime.Runtime = (*Runtime)(nil)

// New returns a Runtime that keeps its runs under cfg.DataDir.
func New(cfg Config) (*Runtime, error) {
	if cfg.DataDir == "" {
		return nil, fmt.Errorf("local runtime: DataDir is required")
	}
	dataDir, err := realDir(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("local runtime: %w", err)
	}
	cfg.DataDir = dataDir
	if cfg.Braid == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("local runtime: find the braid executable: %w", err)
		}
		cfg.Braid = exe
	}
	if cfg.Images == nil {
		cfg.Images = executor.BuiltinImages(cfg.Braid)
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 10 * time.Second
	}
	if cfg.MaxCachedRuns <= 0 {
		cfg.MaxCachedRuns = 10000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	rt := &Runtime{
		cfg:      cfg,
		log:      cfg.Logger,
		now:      cfg.Clock,
		images:   cfg.Images,
		runsDir:  filepath.Join(dataDir, "runs"),
		shimsDir: filepath.Join(dataDir, "shims"),
		runs:     make(map[string]*step),
		dirs:     make(map[string]bool),
		shims:    make(map[string]*shim),
	}
	if cfg.ImagesDir != "" {
		rt.imageStore = image.NewStore(cfg.ImagesDir, filepath.Join(dataDir, rootfsDir))
	}
	rt.privateTmp = canPrivateTmp()
	// The data directory holds every step's files and log: braid's user's
	// only (steps run as that user, or as root, or in a user namespace
	// mapped to it). One that exists keeps its mode: braid's CLI tightens it.
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("local runtime: %w", err)
	}
	if err := os.MkdirAll(rt.runsDir, 0o755); err != nil {
		return nil, fmt.Errorf("local runtime: %w", err)
	}
	if rt.sandbox, err = rt.newSandbox(cfg.Isolation); err != nil {
		return nil, fmt.Errorf("local runtime: %w", err)
	}
	if rt.cfg.Environ == nil {
		inUserns := rt.sandbox != nil && rt.sandbox.userns != nil
		rt.cfg.Environ = baseEnviron(os.Getenv("PATH"), os.Geteuid(), inUserns)
	}
	rt.basePath = envValue(rt.cfg.Environ, "PATH")
	if rt.idx, err = openIndex(rt.runsDir); err != nil {
		return nil, fmt.Errorf("local runtime: %w", err)
	}
	if rt.devNull, err = os.Open(os.DevNull); err != nil {
		rt.idx.close()
		return nil, fmt.Errorf("local runtime: %w", err)
	}
	rt.initCgroups() // last: it starts a goroutine that Close stops
	rt.events = runtime.NewQueue(256)
	rt.ctx, rt.cancel = context.WithCancel(context.Background())
	return rt, nil
}

// Start starts the run. Starting a run this Runtime knows, or one that an
// earlier Runtime started on the same DataDir, does nothing. A step that
// cannot run (a bad command, an unsupported template type, a secret) is
// reported as an Error event, not as an error: Start returns an error only
// when the runtime itself fails (the data directory is not writable), and
// then it may be called again.
func (rt *Runtime) Start(ctx context.Context, run runtime.Run) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if run.ID == "" {
		return fmt.Errorf("local runtime: a run needs an ID")
	}
	s := &step{id: run.ID, wfUID: run.WorkflowUID, nodeID: run.NodeID, dir: rt.stepDir(run), done: make(chan struct{})}
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return ErrClosed
	}
	if _, ok := rt.runs[run.ID]; ok {
		rt.mu.Unlock()
		return nil
	}
	rt.runs[run.ID] = s
	rt.wg.Add(1) // so that Close waits for a Start in progress
	rt.mu.Unlock()
	defer rt.wg.Done()

	known, err := rt.createDir(run, s.dir)
	if err != nil {
		rt.mu.Lock()
		delete(rt.runs, run.ID)
		rt.mu.Unlock()
		return fmt.Errorf("local runtime: start %s: %w", run.ID, err)
	}
	if known {
		// An earlier Runtime started it: Status reads it back from disk.
		ev, _ := rt.idx.result(run.ID)
		s.mu.Lock()
		s.last, s.exited = ev, true
		s.mu.Unlock()
		close(s.done)
		rt.retire(run.ID)
		return nil
	}
	rt.launch(s, run)
	return nil
}

// Kill stops the run and everything it started: SIGTERM to its process
// group, SIGKILL after the grace period. The final event is Failed with the
// message "workflow shutdown". Killing a finished or unknown run does
// nothing.
func (rt *Runtime) Kill(_ context.Context, runID string) error {
	rt.mu.Lock()
	s := rt.runs[runID]
	rt.mu.Unlock()
	if s != nil {
		rt.kill(s, MsgKilled)
	}
	return nil
}

// Status returns the run's latest event: Pending while it is being
// started, then Running, then its final event. A run that an earlier
// Runtime on the same DataDir started is read back from the index, and is
// Error (MsgLost) when it never finished.
func (rt *Runtime) Status(_ context.Context, runID string) (runtime.StepEvent, bool, error) {
	rt.mu.Lock()
	s := rt.runs[runID]
	rt.mu.Unlock()
	if s != nil {
		return s.event(), true, nil
	}
	ev, ok := rt.idx.result(runID)
	return ev, ok, nil
}

// Events delivers every event once: Running when a step's process has
// started, then its final event (Succeeded, Failed or Error). Events queue
// without bound until read. The channel is closed by Close.
func (rt *Runtime) Events() <-chan runtime.StepEvent { return rt.events.Out() }

// Close stops every running step (SIGTERM, then SIGKILL after the grace
// period), waits for them, and closes the Events channel; events not yet
// read are dropped (Status still answers from the index). The logs of
// finished runs stay on the DataDir (LogFiles reads them).
func (rt *Runtime) Close() error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil
	}
	rt.closed = true
	running := make([]*step, 0)
	for _, s := range rt.runs {
		running = append(running, s)
	}
	rt.mu.Unlock()
	for _, s := range running {
		rt.kill(s, MsgClosed)
	}
	rt.cancel() // artifacts being loaded or saved
	rt.wg.Wait()
	rt.cgroups.close()
	rt.events.Close()
	return errors.Join(rt.devNull.Close(), rt.idx.close())
}

// retire records that a run finished, and forgets the oldest finished runs
// beyond MaxCachedRuns (Status reads them back from disk).
func (rt *Runtime) retire(id string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.finished = append(rt.finished, id)
	if n := len(rt.finished) - rt.cfg.MaxCachedRuns; n > 0 {
		for _, old := range rt.finished[:n] {
			delete(rt.runs, old)
		}
		rt.finished = append(rt.finished[:0], rt.finished[n:]...)
	}
}

// emit queues an event and records it as the run's latest.
func (rt *Runtime) emit(s *step, ev runtime.StepEvent) {
	s.mu.Lock()
	s.last = ev
	s.mu.Unlock()
	rt.events.Push(ev)
}

// finish reports a run's final event, once: it is recorded in the index,
// then queued, and the run is marked done. Recording first means that a
// braid killed at any moment finds every result it may have acted on.
func (rt *Runtime) finish(s *step, ev runtime.StepEvent) {
	if err := rt.idx.finished(s.id, s.dir, ev); err != nil {
		rt.log.Warn("cannot write a step's result", "run", s.id, "err", err)
	}
	rt.emit(s, ev)
	close(s.done)
	rt.retire(s.id)
	rt.log.Debug("step finished", "run", s.id, "phase", ev.Phase, "message", ev.Message)
}

// fail reports a run that never started.
func (rt *Runtime) fail(s *step, phase v1alpha1.NodePhase, msg string) {
	now := rt.now()
	s.mu.Lock()
	s.exited = true
	if s.deadline != nil {
		s.deadline.Stop()
	}
	s.mu.Unlock()
	rt.record(s)
	ev := s.newEvent()
	ev.Phase, ev.Message, ev.StartedAt, ev.FinishedAt = phase, msg, now, now
	rt.finish(s, ev)
}

// realDir makes the data directory (for braid's user only, when it is
// new) and returns its absolute path with no symbolic link in it: the
// path a step's view hides, and the one its outputs are checked against.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// canPrivateTmp reports whether steps can get a private /tmp: binding a
// directory over /tmp in a new mount namespace needs root and mount(8).
func canPrivateTmp() bool {
	if os.Geteuid() != 0 {
		return false
	}
	_, err := exec.LookPath("mount")
	return err == nil
}
