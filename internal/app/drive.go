package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

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

// Election configures leader election among the replicas that drive
// workflows (braid controller, braid server --run-controller).
type Election struct {
	// Enabled takes the Lease before driving; false drives at once.
	Enabled bool
	// Namespace of the Lease; "": InstallNamespace().
	Namespace string
	// Name of the Lease.
	Name string
	// Identity is this replica's in the Lease; "": the host name.
	Identity string
}

// Drive drives workflows while this replica holds the Lease (or always,
// without election) until ctx ends. Losing the Lease is an error: the
// process should exit and start over. k must have been opened
// WithController.
func (k *Kube) Drive(ctx context.Context, e Election) error {
	mgr, err := k.newManager()
	if err != nil {
		return err
	}
	log := k.log
	if !e.Enabled {
		return drive(ctx, mgr, k.Store, log)
	}
	lock, err := e.lock(k.Client)
	if err != nil {
		return err
	}
	// The Manager runs here, not in the callback: Run may return (ctx
	// done) before its callback goroutine starts, and then nothing drives.
	leading := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: true, Name: e.Name,
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
		err = drive(lctx, mgr, k.Store, log)
		<-done
	}
	if ctx.Err() == nil {
		return errors.Join(fmt.Errorf("lost the Lease %s: stopping", lock.Describe()), err)
	}
	return err
}

// lock is the Lease the replicas compete for.
func (e Election) lock(client kubernetes.Interface) (*resourcelock.LeaseLock, error) {
	ns := e.Namespace
	if ns == "" {
		ns = InstallNamespace()
	}
	id := e.Identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("leader election identity: %w (set --leader-election-identity)", err)
		}
		id = host
	}
	return &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: e.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}, nil
}

// InstallNamespace is the namespace braid runs in: the pod's, in a
// cluster; else default.
func InstallNamespace() string {
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
