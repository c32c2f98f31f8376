package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/artifact/git"
	httpart "github.com/braidwf/braid/internal/artifact/http"
	"github.com/braidwf/braid/internal/artifact/raw"
	"github.com/braidwf/braid/internal/artifact/s3"
	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/controller"
	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// embedded is braid on one machine: the SQLite store, the local runtime and
// the controller, all under one data directory.
type embedded struct {
	cfg     *config.Config
	live    *config.Live    // the semaphore limits, which braid server reads again when the file changes
	limits  *embeddedLimits // the sync API's limits (in the store) over live's
	store   *sqlite.Store
	rt      *local.Runtime
	ctl     *controller.Controller
	drivers *artifact.Drivers
}

// openEmbedded opens braid on this machine; each override changes the
// loaded config (a flag that wins over the config file).
func openEmbedded(ctx context.Context, dataDir, configFile string, overrides ...func(*config.Config)) (*embedded, error) {
	cfg, err := config.Load(config.Sources{DataDirFlag: dataDir, ConfigFlag: configFile})
	if err != nil {
		return nil, err
	}
	for _, o := range overrides {
		o(cfg)
	}
	log := warnLogger()
	if err := makeDataDir(cfg.DataDir, log); err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, cfg.StorePath(), sqlite.Options{})
	if err != nil {
		return nil, fmt.Errorf("open the embedded store: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("find the braid binary: %w", err), st.Close())
	}
	drivers := artifactDrivers(cfg)
	rt, err := local.New(local.Config{
		DataDir:   cfg.DataDir,
		Images:    executor.MergeImageTable(executor.BuiltinImages(self), cfg.Images),
		Braid:     self,
		Artifacts: drivers,
		Isolation: cmp.Or(cfg.Isolation, local.IsolationAuto),
		ImagesDir: cmp.Or(cfg.ImagesDir, filepath.Join(cfg.DataDir, "images")),
		Logger:    log,
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start the local runtime: %w", err), st.Close())
	}
	live := config.NewLive(cfg)
	limits := &embeddedLimits{store: st, live: live}
	ctl, err := controller.New(controller.Options{Store: st, Runtime: rt, Repositories: artifactRepositories(cfg), Artifacts: drivers,
		Limits: engineLimits(cfg.Limits), Logger: log.With("component", "controller"),
		Retention: controller.Retention(cfg.RetentionPolicy), Memos: st, WorkflowDefaults: cfg.WorkflowDefaults,
		ArchiveTTL:     archiveTTL(cfg),
		ForgetWorkflow: func(ns, wf string) error { return local.RemoveWorkflowFiles(cfg.DataDir, ns, wf) },
		Admission: controller.Admission{ConfigMapValue: limits.configMapValue, DatabaseLimit: limits.databaseLimit,
			Parallelism: cfg.Parallelism, NamespaceParallelism: cfg.NamespaceParallelism}})
	if err != nil {
		return nil, errors.Join(err, rt.Close(), st.Close())
	}
	limits.changed = ctl.LimitsChanged
	return &embedded{cfg: cfg, live: live, limits: limits, store: st, rt: rt, ctl: ctl, drivers: drivers}, nil
}

// engineLimits is the engine's part of config.yaml's limits:.
func engineLimits(l config.Limits) engine.Limits {
	l = l.WithDefaults()
	return engine.Limits{MaxNodes: l.MaxNodes, MaxDepth: l.MaxDepth, MaxLoopItems: l.MaxLoopItems,
		MaxParameterBytes: l.MaxParameterBytes, MaxResultBytes: l.MaxResultBytes, MaxNodesPerPass: l.MaxNodesPerPass,
		Expression: expr.Budget{Time: l.ExprTimeout(), Bytes: int64(l.MaxExpressionBytes)}}
}

// warnLogger logs braid's warnings on one machine to stderr.
func warnLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// makeDataDir creates the data directory for braid's user only (0700): it
// holds the store, every step's files and log, and the file artifact
// repository. One that exists with looser bits is tightened, with a
// warning; one braid's user cannot change (another user's) is left as it
// is, with a warning.
func makeDataDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	perm := info.Mode().Perm()
	if perm&0o077 == 0 {
		return nil
	}
	special := info.Mode() & (os.ModeSetgid | os.ModeSticky)
	if err := os.Chmod(dir, special|perm&0o700); err != nil {
		log.Warn("the data directory is open to other users and cannot be made private", "dir", dir, "mode", fmt.Sprintf("%04o", perm), "err", err)
		return nil
	}
	log.Warn("the data directory was open to other users: made it private (0700)", "dir", dir, "was", fmt.Sprintf("%04o", perm))
	return nil
}

func (e *embedded) run(ctx context.Context, wf *v1alpha1.Workflow, templates engine.TemplateResolver,
	observe controller.Observer, shutdown <-chan v1alpha1.ShutdownStrategy) (*v1alpha1.Workflow, error) {
	if wf.Name == "" {
		prefix := wf.GenerateName
		if prefix == "" {
			prefix = "workflow-"
		}
		wf.Name = sqlite.GenerateName(prefix)
	}
	return e.ctl.Run(ctx, controller.RunRequest{Workflow: wf, Templates: templates, Observe: observe, Shutdown: shutdown})
}

// Close stops the runtime (and any step still running) and closes the store.
func (e *embedded) Close() error {
	return errors.Join(e.rt.Close(), e.store.Close())
}

// artifactDrivers are the artifact drivers of one machine: the file
// repository under the data directory, and s3, git, http and raw, with
// secrets from the config file or the environment.
func artifactDrivers(cfg *config.Config) *artifact.Drivers {
	return &artifact.Drivers{
		File: file.New(cfg.ArtifactsDir()),
		Raw:  raw.New(),
		HTTP: httpart.New(cfg, ""),
		S3:   s3.New(cfg, ""),
		Git:  git.New(cfg, ""),
	}
}

// artifactRepositories are the configured repositories (the file
// repository when none is configured).
func artifactRepositories(cfg *config.Config) artifact.Repositories {
	return artifact.Repositories{Default: cfg.ArtifactRepository, Named: cfg.ArtifactRepositories}
}

// archiveTTL is the config's persistence.archiveTTL, which Load checked.
func archiveTTL(cfg *config.Config) time.Duration {
	d, _ := cfg.Persistence.TTL()
	return d
}
