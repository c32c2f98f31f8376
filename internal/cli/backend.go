package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/file"
	"github.com/braidwf/braid/internal/artifact/git"
	httpart "github.com/braidwf/braid/internal/artifact/http"
	"github.com/braidwf/braid/internal/artifact/raw"
	"github.com/braidwf/braid/internal/artifact/s3"
	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/controller"
	"github.com/braidwf/braid/internal/executor"
	kuberuntime "github.com/braidwf/braid/internal/runtime/kube"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/server/auth/kubeauth"
	kubestore "github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/internal/store/postgres"
)

// The backends of braid server and braid controller.
const (
	backendEmbedded = "embedded"
	backendKube     = "kube"
)

// backendFlags choose where workflows are kept and where steps run.
type backendFlags struct {
	backend       string
	kubeconfig    string
	executorImage string
	offloadDSN    string
	archiveDSN    string
	namespaced    bool
	managedNS     string
}

func (b *backendFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&b.backend, "backend", backendEmbedded,
		"embedded (SQLite store, steps as host processes) or kube (CRDs in a Kubernetes cluster, steps as pods)")
	fl.StringVar(&b.kubeconfig, "kubeconfig", "",
		"with --backend kube: the kubeconfig file (default $KUBECONFIG, else the in-cluster config, else ~/.kube/config)")
	fl.StringVar(&b.executorImage, "executor-image", "",
		"with --backend kube: the image holding braid at /bin/braid, copied into every step's pod (default braid:dev)")
	fl.StringVar(&b.offloadDSN, "offload-dsn", "",
		"with --backend kube: a PostgreSQL DSN where node status too large for the Workflow object is kept (default $BRAID_OFFLOAD_DSN)")
	fl.StringVar(&b.archiveDSN, "archive-dsn", "",
		"with --backend kube: a PostgreSQL DSN where completed workflows are archived and the archive is served (default $BRAID_ARCHIVE_DSN; none: no archive)")
	fl.BoolVar(&b.namespaced, "namespaced", false,
		"with --backend kube: watch and serve one namespace only (--managed-namespace), needing only namespaced RBAC")
	fl.StringVar(&b.managedNS, "managed-namespace", "",
		"with --namespaced: the namespace to manage (default the namespace braid runs in, else default)")
}

// namespace is the one namespace a namespaced braid manages, or "" for all.
func (b backendFlags) namespace() string {
	if !b.namespaced {
		return ""
	}
	if b.managedNS != "" {
		return b.managedNS
	}
	return installNamespace()
}

func (b backendFlags) validate() error {
	switch b.backend {
	case backendEmbedded:
		if b.kubeconfig != "" || b.executorImage != "" || b.offloadDSN != "" || b.archiveDSN != "" || b.namespaced || b.managedNS != "" {
			return errors.New("--kubeconfig, --executor-image, --offload-dsn, --archive-dsn, --namespaced and --managed-namespace need --backend kube")
		}
		return nil
	case backendKube:
		if b.managedNS != "" && !b.namespaced {
			return errors.New("--managed-namespace needs --namespaced")
		}
		return nil
	}
	return fmt.Errorf("--backend %q: want %s or %s", b.backend, backendEmbedded, backendKube)
}

// kubeBackend is braid on a Kubernetes cluster: the CRD store, and, for
// whoever drives workflows, the pod runtime and the controller.
type kubeBackend struct {
	cfg     *config.Config
	rest    *rest.Config // the server's own: client mode's reviews take its address and CA
	client  kubernetes.Interface
	store   *kubestore.Store
	offload *kubestore.PGOffloader // nil: none configured
	archive *postgres.Store        // nil: no archive configured
	rt      *kuberuntime.Runtime   // nil unless opened withController
	ctl     *controller.Controller // nil unless opened withController
	drivers *artifact.Drivers
}

// kubeOpen says what openKube builds.
type kubeOpen struct {
	flags          backendFlags
	dataDir        string // only for the config file's default place
	configFile     string
	getenv         func(string) string
	log            *slog.Logger
	withController bool
}

// openKube connects to the cluster and opens the store; withController it
// also starts the pod runtime and builds the controller.
func openKube(ctx context.Context, o kubeOpen) (*kubeBackend, error) {
	cfg, err := config.Load(config.Sources{DataDirFlag: o.dataDir, ConfigFlag: o.configFile, Getenv: o.getenv})
	if err != nil {
		return nil, err
	}
	rc, err := restConfig(o.flags.kubeconfig, o.getenv)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	k := &kubeBackend{cfg: cfg, rest: rc, client: client}
	if dsn := o.flags.offloadDSN; dsn != "" || o.getenv("BRAID_OFFLOAD_DSN") != "" {
		if dsn == "" {
			dsn = o.getenv("BRAID_OFFLOAD_DSN")
		}
		if k.offload, err = kubestore.OpenPGOffloader(ctx, dsn); err != nil {
			return nil, fmt.Errorf("open the node status offload database: %w", err)
		}
	}
	opts := kubestore.Options{Config: rc, Namespace: o.flags.namespace(), Logger: o.log.With("component", "kube-store")}
	if k.offload != nil {
		opts.Offloader = k.offload
	}
	if k.store, err = kubestore.New(opts); err != nil {
		return nil, errors.Join(err, k.Close())
	}
	if dsn := firstNonEmpty(o.flags.archiveDSN, o.getenv("BRAID_ARCHIVE_DSN")); dsn != "" {
		if k.archive, err = postgres.OpenWith(ctx, dsn, postgres.Options{Logger: o.log.With("component", "archive")}); err != nil {
			return nil, errors.Join(fmt.Errorf("open the workflow archive database: %w", err), k.Close())
		}
	}
	k.drivers = kubeArtifactDrivers(cfg, client)
	if !o.withController {
		return k, nil
	}
	if err := k.startController(o, rc); err != nil {
		return nil, errors.Join(err, k.Close())
	}
	return k, nil
}

// startController starts the pod runtime and builds the controller on it.
func (k *kubeBackend) startController(o kubeOpen, rc *rest.Config) error {
	images := executor.MergeImageTable(kuberuntime.DefaultImages(), k.cfg.Images)
	rt, err := kuberuntime.New(kuberuntime.Config{Client: k.client, Rest: rc, Namespace: o.flags.namespace(), BraidImage: o.flags.executorImage,
		Images: images, Artifacts: k.drivers, Logger: o.log.With("component", "kube-runtime")})
	if err != nil {
		return fmt.Errorf("start the pod runtime: %w", err)
	}
	k.rt = rt
	cms := &configMapValues{client: k.client, cfg: k.cfg}
	k.ctl, err = controller.New(controller.Options{Store: k.store, Runtime: rt, Logger: o.log, Limits: engineLimits(k.cfg.Limits),
		Repositories: artifactRepositories(k.cfg), Artifacts: k.drivers,
		Memos:     kubestore.NewMemos(k.client, nil, o.flags.namespace()),
		Retention: controller.Retention(k.cfg.RetentionPolicy), WorkflowDefaults: k.cfg.WorkflowDefaults,
		ArchiveTTL: archiveTTL(k.cfg),
		Admission: controller.Admission{ConfigMapValue: cms.value, DatabaseLimit: kubeDatabaseLimit(k.archive, config.NewLive(k.cfg)),
			Parallelism: k.cfg.Parallelism, NamespaceParallelism: k.cfg.NamespaceParallelism}})
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return nil
}

// newManager is the controller's Manager on the cluster's workflows.
func (k *kubeBackend) newManager() (*controller.Manager, error) {
	if k.ctl == nil {
		return nil, errors.New("the Kubernetes backend was opened without a controller")
	}
	mgr, err := k.ctl.NewManager(k.workflows(), controller.StoreTemplates(k.store))
	if err != nil {
		return nil, err
	}
	// The pod's /tmp (an emptyDir in manifests/base) outlives a container
	// restart, such as after an OOM kill.
	mgr.SetQuarantine(controller.Quarantine{Journal: filepath.Join(os.TempDir(), "braid-controller", "crash-journal.json"),
		After: k.cfg.Limits.WithDefaults().QuarantineAfterCrashes})
	return mgr, nil
}

// workflows is the store the server and the Manager use: the cluster's
// custom resources, with the PostgreSQL archive when one is configured
// (they find it by its methods: server.Archive, controller.Archiver).
func (k *kubeBackend) workflows() kubeWorkflows {
	if k.archive == nil {
		return k.store
	}
	return archivedStore{Store: k.store, pgArchive: pgArchive{k.archive}}
}

// kubeWorkflows is what the server and the Manager need of the store.
type kubeWorkflows interface {
	server.Store
	controller.WatchStore
}

// archivedStore is the kube store with the archive's methods. Close is the
// kube store's (the shallower one); the kubeBackend closes the archive.
type archivedStore struct {
	*kubestore.Store
	pgArchive
}

// pgArchive holds the archive one level down, so that its field name does
// not clash with the kube store's.
type pgArchive struct{ *postgres.Store }

// firstNonEmpty returns the first of vs that is not "".
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// Close stops the runtime's and the store's informers (pods keep running)
// and closes the offload database.
func (k *kubeBackend) Close() error {
	var errs []error
	if k.rt != nil {
		errs = append(errs, k.rt.Close())
	}
	if k.store != nil {
		errs = append(errs, k.store.Close())
	}
	if k.offload != nil {
		k.offload.Close()
	}
	if k.archive != nil {
		errs = append(errs, k.archive.Close())
	}
	return errors.Join(errs...)
}

// restConfig finds the cluster: --kubeconfig, else $KUBECONFIG, else the
// in-cluster config (a pod's ServiceAccount), else ~/.kube/config.
func restConfig(flag string, getenv func(string) string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	switch {
	case flag != "":
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: flag}
	case getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		rules.Precedence = filepath.SplitList(getenv(clientcmd.RecommendedConfigPathEnvVar))
	default:
		if rc, err := rest.InClusterConfig(); err == nil {
			return withUserAgent(rc), nil
		}
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("find the Kubernetes cluster (--kubeconfig, KUBECONFIG or in-cluster config): %w", err)
	}
	return withUserAgent(rc), nil
}

func withUserAgent(rc *rest.Config) *rest.Config {
	if rc.UserAgent == "" {
		rc.UserAgent = "braid"
	}
	if rc.QPS == 0 {
		rc.QPS, rc.Burst = 200, 400
	}
	return rc
}

// kubeArtifactDrivers are the drivers the controller and the server read
// and delete artifacts with on a cluster; secrets come from the config
// file or environment first, then from Kubernetes Secrets.
func kubeArtifactDrivers(cfg *config.Config, client kubernetes.Interface) *artifact.Drivers {
	sec := &kubeSecrets{client: client, cfg: cfg}
	return &artifact.Drivers{
		File: file.New(cfg.ArtifactsDir()),
		Raw:  raw.New(),
		HTTP: httpart.New(sec, ""),
		S3:   s3.New(sec, ""),
		Git:  git.New(sec, ""),
	}
}

// kubeSecrets resolves secret references: the config file's secrets and
// the environment (config.SecretEnv), then the Secret in the namespace.
type kubeSecrets struct {
	client kubernetes.Interface
	cfg    *config.Config
}

func (s *kubeSecrets) Secret(ctx context.Context, namespace, name, key string) (string, error) {
	v, cerr := s.cfg.Secret(ctx, namespace, name, key)
	if cerr == nil || namespace == "" {
		return v, cerr
	}
	sec, err := s.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("secret %s/%s: %w", namespace, name, err)
	}
	data, ok := sec.Data[key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %q", namespace, name, key)
	}
	return string(data), nil
}

// configMapValues resolves a semaphore's ConfigMap limit: the config
// file's ConfigMaps first, then the ConfigMap in the cluster.
type configMapValues struct {
	client kubernetes.Interface
	cfg    *config.Config
}

func (c *configMapValues) value(namespace, name, key string) (string, bool) {
	if v, ok := c.cfg.ConfigMapValue(namespace, name, key); ok {
		return v, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cm, err := c.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", false
	}
	v, ok := cm.Data[key]
	return v, ok
}

// kubeAuth builds braid server's auth on a cluster, as argo-server's
// --auth-mode: client (the default) takes each caller's Kubernetes token,
// which the apiserver authenticates (SelfSubjectReview) and authorizes by
// RBAC (SelfSubjectAccessReview) with that token (internal/server/auth/kubeauth);
// server gives every caller the server's own rights (its kubeconfig or
// ServiceAccount).
func (a authFlags) kubeAuth(rc *rest.Config, log *slog.Logger, secure bool) (*serverAuth, error) {
	modes, err := auth.ParseModes(a.modes)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	if slices.Contains(modes, auth.ModeSSO) {
		return nil, &exitError{code: 2, err: errors.New("--auth-mode sso is not available with --backend kube yet: use client or server")}
	}
	c := auth.Config{Modes: modes, Audit: log.With("component", "audit"),
		TokenHint: "a Kubernetes token, e.g. kubectl create token SERVICEACCOUNT"}
	if slices.Contains(modes, auth.ModeClient) {
		k, err := kubeauth.New(rc, kubeauth.Options{})
		if err != nil {
			return nil, fmt.Errorf("client auth mode: %w", err)
		}
		c.Client, c.Authorizer = k, k
	}
	gk, err := auth.NewGatekeeper(c)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	web, base, err := a.newUI()
	if err != nil {
		return nil, err
	}
	return &serverAuth{gk: gk, http: auth.HTTPConfig{SecureCookies: secure}, ui: web, baseHref: base,
		browser: auth.BrowserConfig{AllowedHosts: a.allowedHosts, AllowedOrigins: a.allowedOrigins}}, nil
}

// runKubeServer serves the API on the cluster's custom resources; with
// --run-controller it drives workflows too, under leader election.
func runKubeServer(ctx context.Context, s streams, f serverFlags) error {
	log := slog.New(slog.NewTextHandler(s.err, nil))
	k, err := openKube(ctx, kubeOpen{flags: f.backend, dataDir: f.dataDir, configFile: f.configFile,
		getenv: os.Getenv, log: log, withController: f.runController})
	if err != nil {
		return err
	}
	logs, err := newPodLogFiles(k.client, log, k.shippedLogs())
	if err != nil {
		return errors.Join(err, k.Close())
	}
	closeAll := func(errs ...error) error { return errors.Join(append(errs, logs.Close(), k.Close())...) }
	tlsCfg, _, err := f.tls.serverTLS(func() (string, error) { return kubeCertDir(f.dataDir) }, f.address)
	if err != nil {
		return closeAll(err)
	}
	sa, err := f.auth.kubeAuth(k.rest, log, tlsCfg != nil)
	if err != nil {
		return closeAll(err)
	}
	opts := server.Options{Store: k.workflows(), Logger: log, Artifacts: k.drivers, LogPath: logs.path, TLS: tlsCfg,
		SyncLimits: kubeLimits{configMaps: kubestore.NewConfigMapLimits(k.client), db: k.archive}}
	sa.apply(&opts)
	srv, err := server.New(opts)
	if err != nil {
		return closeAll(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(f.address, strconv.Itoa(f.port)))
	if err != nil {
		return closeAll(fmt.Errorf("listen: %w", err))
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ddone := make(chan error, 1)
	if f.runController {
		go func() { ddone <- driveElected(sctx, k, f.election, log) }()
	} else {
		ddone <- nil
	}
	serr := srv.Serve(ctx, l)
	cancel()
	return closeAll(serr, <-ddone)
}
