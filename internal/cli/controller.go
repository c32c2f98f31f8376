package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/braidwf/braid/internal/controller"
	cronsched "github.com/braidwf/braid/internal/controller/cron"
)

// Leader election timing: a replica that dies (without releasing the
// Lease) is replaced after leaseDuration at most.
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
	// inClusterNamespace holds the namespace of a pod's ServiceAccount.
	inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
)

// electionFlags configure leader election among the replicas that drive
// workflows (braid controller, braid server --run-controller).
type electionFlags struct {
	enabled   bool
	namespace string
	name      string
	identity  string
}

func (e *electionFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&e.enabled, "leader-elect", true,
		"take a Lease before driving workflows, so that only one replica drives them")
	fl.StringVar(&e.namespace, "leader-election-namespace", "",
		"namespace of the Lease (default the pod's namespace in a cluster, else default)")
	fl.StringVar(&e.name, "leader-election-name", "braid-controller", "name of the Lease")
	fl.StringVar(&e.identity, "leader-election-identity", "",
		"this replica's identity in the Lease; keep it stable across restarts (default the host name, which is the pod's name)")
}

type controllerFlags struct {
	backend    backendFlags
	election   electionFlags
	dataDir    string
	configFile string
}

func newControllerCommand(s streams) *cobra.Command {
	f := controllerFlags{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Drive the workflows of a Kubernetes cluster (the controller, without the API)",
		Long: `Drive every workflow of the cluster: steps run as pods, results come back in
their termination messages, and CronWorkflows are scheduled. It serves no API:
run 'braid server --backend kube' for that.

The cluster is found from --kubeconfig, KUBECONFIG, or the in-cluster config.
Replicas elect a leader through a Lease (--leader-election-name in
--leader-election-namespace); only the leader drives workflows. A replica that
restarts with the same identity takes its Lease back at once; one that loses
its Lease exits. After a restart, every step that was running is looked up
again, and no completed step runs again.

The config file (--config) gives the artifact repositories, the image table,
parallelism and retention, as for 'braid server'.`,
		Example: `  braid controller --backend kube
  braid controller --backend kube --kubeconfig ~/.kube/config --config /etc/braid/config.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runController(cmd.Context(), s, f)
		},
	}
	fl := cmd.Flags()
	f.backend.register(fl)
	f.election.register(fl)
	fl.StringVar(&f.dataDir, "data-dir", "", "where the default config file is looked for (default $BRAID_HOME or ~/.braid)")
	fl.StringVar(&f.configFile, "config", "", "config file (default <data dir>/config.yaml)")
	return cmd
}

func runController(ctx context.Context, s streams, f controllerFlags) error {
	if err := f.backend.validate(); err != nil {
		return err
	}
	if f.backend.backend != backendKube {
		return errors.New("braid controller needs --backend kube (with the embedded store, braid server drives the workflows itself)")
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(s.err, nil))
	k, err := openKube(ctx, kubeOpen{flags: f.backend, dataDir: f.dataDir, configFile: f.configFile,
		getenv: os.Getenv, log: log, withController: true})
	if err != nil {
		return err
	}
	err = driveElected(ctx, k, f.election, log)
	return errors.Join(err, k.Close())
}

// driveElected drives workflows while this replica holds the Lease (or
// always, without election) until ctx ends. Losing the Lease is an error:
// the process should exit and start over.
func driveElected(ctx context.Context, k *kubeBackend, e electionFlags, log *slog.Logger) error {
	mgr, err := k.newManager()
	if err != nil {
		return err
	}
	if !e.enabled {
		return drive(ctx, mgr, k.store, log)
	}
	lock, err := e.lock(k.client)
	if err != nil {
		return err
	}
	// The Manager runs here, not in the callback: Run may return (ctx
	// done) before its callback goroutine starts, and then nothing drives.
	leading := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: true, Name: e.name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) { leading <- lctx },
			OnStoppedLeading: func() { log.Info("not leading", "lease", lock.Describe()) },
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	log.Info("waiting for the Lease", "lease", lock.Describe(), "identity", lock.Identity())
	done := make(chan struct{})
	go func() { le.Run(ctx); close(done) }()
	select {
	case <-done:
		return nil // ctx ended before this replica led
	case lctx := <-leading:
		log.Info("leading: driving workflows", "lease", lock.Describe(), "identity", lock.Identity())
		err = drive(lctx, mgr, k.store, log)
		<-done
	}
	if ctx.Err() == nil {
		return errors.Join(fmt.Errorf("lost the Lease %s: stopping", lock.Describe()), err)
	}
	return err
}

// lock is the Lease the replicas compete for.
func (e electionFlags) lock(client kubernetes.Interface) (*resourcelock.LeaseLock, error) {
	ns := e.namespace
	if ns == "" {
		ns = installNamespace()
	}
	id := e.identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("leader election identity: %w (set --leader-election-identity)", err)
		}
		id = host
	}
	return &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: e.name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}, nil
}

// installNamespace is the namespace braid runs in: the pod's, in a
// cluster; else default.
func installNamespace() string {
	if data, err := os.ReadFile(inClusterNamespace); err == nil && strings.TrimSpace(string(data)) != "" {
		return strings.TrimSpace(string(data))
	}
	return "default"
}

// drive runs the Manager (every workflow that is not completed) and the
// CronWorkflow scheduler until ctx ends.
func drive(ctx context.Context, mgr *controller.Manager, st cronsched.Store, log *slog.Logger) error {
	sched, err := cronsched.New(cronsched.Options{Store: st, Logger: log.With("component", "cron")})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cdone := make(chan error, 1)
	go func() { cdone <- sched.Run(ctx) }()
	err = mgr.Run(ctx)
	cancel()
	return errors.Join(err, <-cdone)
}
