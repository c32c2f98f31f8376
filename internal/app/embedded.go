package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/controller"
	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// EmbeddedConfig says where braid on one machine keeps its data.
type EmbeddedConfig struct {
	// DataDir is --data-dir; "": $BRAID_HOME, else ~/.braid.
	DataDir string
	// ConfigFile is --config; "": <data dir>/config.yaml.
	ConfigFile string
	// Isolation, when set, wins over the config file's isolation (braid
	// run --isolation).
	Isolation string
	// Logger receives the controller's and the runtime's log (braid
	// server's own log); nil: warnings and errors to stderr.
	Logger *slog.Logger
	// Supervised runs the steps in the data directory's supervisor, which
	// outlives this process (braid server); otherwise they run in this
	// process and end with it (braid run).
	Supervised bool
}

// Embedded is braid on one machine: the SQLite store, the local runtime and
// the controller, all under one data directory. Every field is set.
type Embedded struct {
	Config     *config.Config
	Store      *sqlite.Store
	Runtime    StepRuntime
	Controller *controller.Controller
	Artifacts  *artifact.Drivers

	live   *config.Live    // the semaphore limits, which Serve reads again when the file changes
	limits *embeddedLimits // the sync API's limits (in the store) over live's
}

// OpenEmbedded opens braid on this machine: it loads the config, makes the
// data directory private, opens the store, starts the local runtime and
// builds the controller.
func OpenEmbedded(ctx context.Context, c EmbeddedConfig) (*Embedded, error) {
	cfg, err := config.Load(config.Sources{DataDirFlag: c.DataDir, ConfigFlag: c.ConfigFile})
	if err != nil {
		return nil, err
	}
	if c.Isolation != "" {
		cfg.Isolation = c.Isolation
	}
	log := c.Logger
	if log == nil {
		log = warnLogger()
	}
	if err := makeDataDir(cfg.DataDir, log); err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, cfg.StorePath(), sqlite.Options{})
	if err != nil {
		return nil, fmt.Errorf("open the embedded store: %w", err)
	}
	drivers := artifactDrivers(cfg)
	rt, err := openStepRuntime(ctx, cfg, c, drivers, log)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	live := config.NewLive(cfg)
	limits := &embeddedLimits{store: st, live: live}
	ctl, err := controller.New(controller.Options{Store: st, Runtime: rt, Archive: st, MemoPruner: st,
		Repositories: ArtifactRepositories(cfg), Artifacts: drivers,
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
	return &Embedded{Config: cfg, Store: st, Runtime: rt, Controller: ctl, Artifacts: drivers, live: live, limits: limits}, nil
}

// openStepRuntime starts the local runtime, or connects to the supervisor
// with c.Supervised.
func openStepRuntime(ctx context.Context, cfg *config.Config, c EmbeddedConfig, drivers *artifact.Drivers, log *slog.Logger) (StepRuntime, error) {
	if c.Supervised {
		return dialSupervisor(ctx, cfg, c, log)
	}
	lc, err := localConfig(cfg, drivers, log)
	if err != nil {
		return nil, err
	}
	rt, err := local.New(lc)
	if err != nil {
		return nil, fmt.Errorf("start the local runtime: %w", err)
	}
	return rt, nil
}

// Run runs one workflow to its end in this process (braid run); a
// workflow without a name is named from its generateName, else
// "workflow-".
func (e *Embedded) Run(ctx context.Context, wf *v1alpha1.Workflow, templates engine.TemplateResolver,
	observe controller.Observer, shutdown <-chan v1alpha1.ShutdownStrategy) (*v1alpha1.Workflow, error) {
	if wf.Name == "" {
		wf.Name = store.GenerateName(cmp.Or(wf.GenerateName, "workflow-"))
	}
	return e.Controller.Run(ctx, controller.RunRequest{Workflow: wf, Templates: templates, Observe: observe, Shutdown: shutdown})
}

// newManager is the controller's Manager on the store. A workflow busy in
// N consecutive crashes is ended Error on start.
func (e *Embedded) newManager() (*controller.Manager, error) {
	mgr, err := e.Controller.NewManager(e.Store, controller.StoreTemplates(e.Store))
	if err != nil {
		return nil, err
	}
	mgr.SetQuarantine(controller.Quarantine{Journal: filepath.Join(e.Config.DataDir, "crash-journal.json"),
		After: e.Config.Limits.WithDefaults().QuarantineAfterCrashes})
	return mgr, nil
}

// embeddedServerOptions are the API server's options on the store of one machine:
// step logs from the data directory and the sync API's limits.
func embeddedServerOptions(cfg *config.Config, st *sqlite.Store, drivers *artifact.Drivers, limits *embeddedLimits) server.Options {
	dataDir := cfg.DataDir
	return server.Options{Store: st, Capabilities: sqliteCapabilities(st), Artifacts: drivers,
		StepLogs:       local.NewLogFiles(dataDir),
		ForgetWorkflow: func(ns, wf string) error { return local.RemoveWorkflowFiles(dataDir, ns, wf) },
		SyncLimits:     limits}
}

// Close stops the runtime (and any step still running) and closes the store.
func (e *Embedded) Close() error {
	return errors.Join(e.Runtime.Close(), e.Store.Close())
}
