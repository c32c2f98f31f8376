package app

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/runtime/supervisor"
	"github.com/braidwf/braid/internal/version"
)

// StepRuntime is the runtime of braid on one machine: the local runtime in
// this process (braid run), or the client of the data directory's
// supervisor (braid server).
type StepRuntime interface {
	runtime.Runtime
	Close() error
}

// SupervisorConfig is `braid supervisor`'s.
type SupervisorConfig struct {
	DataDir    string
	ConfigFile string
	// Isolation, when set, wins over the config file's.
	Isolation string
	// IdleTimeout: see supervisor.Options.
	IdleTimeout time.Duration
	Logger      *slog.Logger
}

// ServeSupervisor runs the supervisor of a data directory until ctx ends
// or it is idle (package supervisor). It returns supervisor.ErrRunning
// when one runs already.
func ServeSupervisor(ctx context.Context, c SupervisorConfig) error {
	cfg, err := config.Load(config.Sources{DataDirFlag: c.DataDir, ConfigFlag: c.ConfigFile})
	if err != nil {
		return err
	}
	if c.Isolation != "" {
		cfg.Isolation = c.Isolation
	}
	log := cmp.Or(c.Logger, warnLogger())
	if err := makeDataDir(cfg.DataDir, log); err != nil {
		return err
	}
	// The lock first: a second supervisor exits before it builds a runtime
	// (which would probe the kernel and reap cgroups for nothing).
	lock, err := supervisor.LockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	warned := &warnings{Handler: log.Handler(), mu: &sync.Mutex{}, msgs: new([]string)}
	lc, err := localConfig(cfg, artifactDrivers(cfg), slog.New(warned))
	if err != nil {
		lock.Close()
		return err
	}
	rt, err := local.New(lc)
	if err != nil {
		lock.Close()
		return fmt.Errorf("start the local runtime: %w", err)
	}
	return supervisor.Serve(ctx, rt, supervisor.Options{DataDir: cfg.DataDir, Version: buildID(),
		IdleTimeout: c.IdleTimeout, Logger: log, Warnings: warned.said(), Lock: lock})
}

// warnings passes log records on and keeps the text of the warnings, for
// the supervisor to tell the server what its runtime said at its start.
type warnings struct {
	slog.Handler
	mu   *sync.Mutex
	msgs *[]string
}

func (w *warnings) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
			return true
		})
		w.mu.Lock()
		if len(*w.msgs) < 20 {
			*w.msgs = append(*w.msgs, b.String())
		}
		w.mu.Unlock()
	}
	return w.Handler.Handle(ctx, r)
}

func (w *warnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &warnings{Handler: w.Handler.WithAttrs(attrs), mu: w.mu, msgs: w.msgs}
}

func (w *warnings) WithGroup(name string) slog.Handler {
	return &warnings{Handler: w.Handler.WithGroup(name), mu: w.mu, msgs: w.msgs}
}

func (w *warnings) said() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), *w.msgs...)
}

// localConfig is the local runtime's config on the data directory of cfg.
func localConfig(cfg *config.Config, drivers *artifact.Drivers, log *slog.Logger) (local.Config, error) {
	self, err := os.Executable()
	if err != nil {
		return local.Config{}, fmt.Errorf("find the braid binary: %w", err)
	}
	return local.Config{
		DataDir:   cfg.DataDir,
		Images:    executor.MergeImageTable(executor.BuiltinImages(self), cfg.Images),
		Braid:     self,
		Artifacts: drivers,
		Isolation: cmp.Or(cfg.Isolation, local.IsolationAuto),
		ImagesDir: cmp.Or(cfg.ImagesDir, filepath.Join(cfg.DataDir, "images")),
		Logger:    log,
	}, nil
}

// dialSupervisor connects braid server to the supervisor of its data
// directory, starting one (`braid supervisor`, detached, logging to
// <data dir>/supervisor.log) when none runs.
func dialSupervisor(ctx context.Context, cfg *config.Config, c EmbeddedConfig, log *slog.Logger) (StepRuntime, error) {
	spawn := func() error { return spawnSupervisor(cfg.DataDir, c.ConfigFile) }
	cl, err := supervisor.Dial(ctx, supervisor.ClientConfig{DataDir: cfg.DataDir, Version: buildID(), Spawn: spawn,
		Logger: log.With("component", "supervisor-client")})
	if err != nil {
		return nil, fmt.Errorf("the step supervisor: %w (its log: %s)", err, filepath.Join(cfg.DataDir, supervisor.LogName))
	}
	return cl, nil
}

// spawnSupervisor starts `braid supervisor` for dataDir in a session of
// its own, so that it outlives this process, with braid's environment
// (the artifact repositories' credentials) and its output appended to
// supervisor.log. Its exit is reaped in the background.
func spawnSupervisor(dataDir, configFile string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(dataDir, supervisor.LogName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"supervisor", "--data-dir", dataDir}
	if configFile != "" {
		args = append(args, "--config", configFile)
	}
	cmd := exec.Command(self, args...)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// buildID names this build of braid: its version, and the size and time
// of its executable, so that a supervisor left by an older build of the
// same version is told apart.
func buildID() string {
	id := version.Get().Version
	if self, err := os.Executable(); err == nil {
		if st, err := os.Stat(self); err == nil {
			id += fmt.Sprintf(" (%d bytes, %s)", st.Size(), st.ModTime().UTC().Format(time.RFC3339Nano))
		}
	}
	return id
}
