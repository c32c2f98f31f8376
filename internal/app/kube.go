package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/controller"
	"github.com/braidwf/braid/internal/executor"
	kuberuntime "github.com/braidwf/braid/internal/runtime/kube"
	"github.com/braidwf/braid/internal/server"
	kubestore "github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/internal/store/postgres"
)

// The Kubernetes store is a server.Store that can count and update status;
// the PostgreSQL archive is a server.Archive.
var (
	_ server.Store         = (*kubestore.Store)(nil)
	_ server.Counter       = (*kubestore.Store)(nil)
	_ server.StatusUpdater = (*kubestore.Store)(nil)
	_ server.Archive       = (*postgres.Store)(nil)
)

// KubeConfig says which cluster braid on Kubernetes uses, and what it
// builds there.
type KubeConfig struct {
	// Kubeconfig is the kubeconfig file; "": $KUBECONFIG, else the
	// in-cluster config, else ~/.kube/config.
	Kubeconfig string
	// ExecutorImage holds braid at /bin/braid, copied into every step's pod.
	ExecutorImage string
	// OffloadDSN is the PostgreSQL database where node status too large for
	// the Workflow object is kept; "": $BRAID_OFFLOAD_DSN, else none.
	OffloadDSN string
	// ArchiveDSN is the PostgreSQL database of the workflow archive; "":
	// $BRAID_ARCHIVE_DSN, else no archive.
	ArchiveDSN string
	// Namespace is the one namespace a namespaced braid manages; "": all.
	Namespace string
	// DataDir and ConfigFile find the config file, as for EmbeddedConfig.
	DataDir, ConfigFile string
	// Getenv reads the environment; nil: os.Getenv.
	Getenv func(string) string
	// Logger receives the log; nil: discard.
	Logger *slog.Logger
	// WithController also starts the pod runtime and builds the controller,
	// for whoever drives workflows.
	WithController bool
}

// Kube is braid on a Kubernetes cluster: the CRD store, and, for whoever
// drives workflows, the pod runtime and the controller. A nil field is a
// part that is off.
type Kube struct {
	Config *config.Config
	// Rest is braid's own client config: client auth mode's reviews take
	// its address and CA.
	Rest      *rest.Config
	Client    kubernetes.Interface
	Store     *kubestore.Store
	Artifacts *artifact.Drivers
	// Offload keeps big node status; nil: none configured.
	Offload *kubestore.PGOffloader
	// Archive is the workflow archive; nil: none configured.
	Archive *postgres.Store
	// Runtime and Controller drive workflows; nil unless opened
	// WithController.
	Runtime    *kuberuntime.Runtime
	Controller *controller.Controller

	namespace string
	log       *slog.Logger
}

// OpenKube connects to the cluster and opens the store (and the offload
// and archive databases when configured); WithController it also starts
// the pod runtime and builds the controller.
func OpenKube(ctx context.Context, c KubeConfig) (*Kube, error) {
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.Logger == nil {
		c.Logger = warnLogger()
	}
	cfg, err := config.Load(config.Sources{DataDirFlag: c.DataDir, ConfigFlag: c.ConfigFile, Getenv: c.Getenv})
	if err != nil {
		return nil, err
	}
	rc, err := restConfig(c.Kubeconfig, c.Getenv)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	k := &Kube{Config: cfg, Rest: rc, Client: client, namespace: c.Namespace, log: c.Logger}
	if dsn := cmp.Or(c.OffloadDSN, c.Getenv("BRAID_OFFLOAD_DSN")); dsn != "" {
		if k.Offload, err = kubestore.OpenPGOffloader(ctx, dsn); err != nil {
			return nil, fmt.Errorf("open the node status offload database: %w", err)
		}
	}
	opts := kubestore.Options{Config: rc, Namespace: c.Namespace, Logger: c.Logger.With("component", "kube-store")}
	if k.Offload != nil {
		opts.Offloader = k.Offload
	}
	if k.Store, err = kubestore.New(opts); err != nil {
		return nil, errors.Join(err, k.Close())
	}
	if dsn := cmp.Or(c.ArchiveDSN, c.Getenv("BRAID_ARCHIVE_DSN")); dsn != "" {
		if k.Archive, err = postgres.OpenWith(ctx, dsn, postgres.Options{Logger: c.Logger.With("component", "archive")}); err != nil {
			return nil, errors.Join(fmt.Errorf("open the workflow archive database: %w", err), k.Close())
		}
	}
	k.Artifacts = kubeArtifactDrivers(cfg, client)
	if !c.WithController {
		return k, nil
	}
	if err := k.startController(c.ExecutorImage); err != nil {
		return nil, errors.Join(err, k.Close())
	}
	return k, nil
}

// startController starts the pod runtime and builds the controller on it.
func (k *Kube) startController(executorImage string) error {
	images := executor.MergeImageTable(kuberuntime.DefaultImages(), k.Config.Images)
	rt, err := kuberuntime.New(kuberuntime.Config{Client: k.Client, Rest: k.Rest, Namespace: k.namespace, BraidImage: executorImage,
		Images: images, Artifacts: k.Artifacts, Logger: k.log.With("component", "kube-runtime")})
	if err != nil {
		return fmt.Errorf("start the pod runtime: %w", err)
	}
	k.Runtime = rt
	cms := &configMapValues{client: k.Client, cfg: k.Config}
	var archive controller.Archiver // nil unless a database is configured
	if k.Archive != nil {
		archive = k.Archive
	}
	k.Controller, err = controller.New(controller.Options{Store: k.Store, Runtime: rt, Hooks: rt, Archive: archive,
		Logger: k.log, Limits: engineLimits(k.Config.Limits),
		Repositories: ArtifactRepositories(k.Config), Artifacts: k.Artifacts,
		Memos:     kubestore.NewMemos(k.Client, nil, k.namespace),
		Retention: controller.Retention(k.Config.RetentionPolicy), WorkflowDefaults: k.Config.WorkflowDefaults,
		ArchiveTTL: archiveTTL(k.Config),
		Admission: controller.Admission{ConfigMapValue: cms.value, DatabaseLimit: kubeDatabaseLimit(k.Archive, config.NewLive(k.Config)),
			Parallelism: k.Config.Parallelism, NamespaceParallelism: k.Config.NamespaceParallelism}})
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return nil
}

// newManager is the controller's Manager on the cluster's workflows.
func (k *Kube) newManager() (*controller.Manager, error) {
	if k.Controller == nil {
		return nil, errors.New("the Kubernetes backend was opened without a controller")
	}
	mgr, err := k.Controller.NewManager(k.Store, controller.StoreTemplates(k.Store))
	if err != nil {
		return nil, err
	}
	// The pod's /tmp (an emptyDir in manifests/base) outlives a container
	// restart, such as after an OOM kill.
	mgr.SetQuarantine(controller.Quarantine{Journal: filepath.Join(os.TempDir(), "braid-controller", "crash-journal.json"),
		After: k.Config.Limits.WithDefaults().QuarantineAfterCrashes})
	return mgr, nil
}

// serverOptions are the API server's options on the cluster: the custom
// resources, the archive when configured, and the semaphore limits in
// ConfigMaps and the archive's database.
func (k *Kube) serverOptions() server.Options {
	caps := server.Capabilities{Counter: k.Store, StatusUpdater: k.Store}
	if k.Archive != nil {
		caps.Archive = k.Archive
	}
	return server.Options{Store: k.Store, Capabilities: caps, Artifacts: k.Artifacts,
		SyncLimits: kubeLimits{configMaps: kubestore.NewConfigMapLimits(k.Client), db: k.Archive}}
}

// Close stops the runtime's and the store's informers (pods keep running)
// and closes the offload and archive databases.
func (k *Kube) Close() error {
	var errs []error
	if k.Runtime != nil {
		errs = append(errs, k.Runtime.Close())
	}
	if k.Store != nil {
		errs = append(errs, k.Store.Close())
	}
	if k.Offload != nil {
		k.Offload.Close()
	}
	if k.Archive != nil {
		errs = append(errs, k.Archive.Close())
	}
	return errors.Join(errs...)
}
