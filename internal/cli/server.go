package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/controller"
	cronsched "github.com/braidwf/braid/internal/controller/cron"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/server"
)

// configPoll is how often braid server looks for a change of its config file.
const configPoll = 2 * time.Second

type serverFlags struct {
	port       int
	address    string
	dataDir    string
	configFile string
	cpuProfile string
	// backend kube: the API on the cluster's CRDs; the Manager runs only
	// with runController (braid controller drives the workflows).
	backend       backendFlags
	runController bool
	election      electionFlags
	auth          authFlags
	tls           tlsFlags
}

func newServerCommand(s streams) *cobra.Command {
	f := serverFlags{}
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Start the API server (argo-server's gRPC and REST API on one port)",
		Long: `Start the API server on the embedded store under $BRAID_HOME (default ~/.braid,
or --data-dir). One port serves gRPC and HTTP/1.1: the same REST paths and JSON
as argo-server's /api/v1, plus /healthz and /readyz.

The server runs every workflow submitted to it, and on start every workflow
that a previous server left unfinished: steps that had completed are never
run again. The address is recorded in <data dir>/server.json, where the braid
CLI finds it when no --argo-server is given.

As argo-server, it serves TLS unless --secure=false: with --tls-cert and
--tls-key, else with a self-signed certificate kept in <data dir>/tls (with
--backend kube: <user cache dir>/braid/tls, else <--data-dir>/tls). The
certificate's SHA-256 fingerprint is recorded in server.json too, and the braid
CLI pins it when it talks to this server; other clients need -k (curl -k,
argo -k) or the certificate.

With --backend kube the server serves the same API on the custom resources of
a Kubernetes cluster (found from --kubeconfig, KUBECONFIG or the in-cluster
config) and reads step logs from the pods. It does not drive workflows: run
'braid controller --backend kube' for that, or give --run-controller to drive
them from this process too (it then takes part in the controller's leader
election, so that one replica drives).`,
		Example: `  braid server
  braid server --port 2746 --address 0.0.0.0
  curl -sk https://localhost:2746/api/v1/version
  braid server --tls-cert server.crt --tls-key server.key
  braid server --backend kube --kubeconfig ~/.kube/config`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServer(cmd.Context(), s, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.port, "port", 2746, "port to serve gRPC and HTTP on")
	fl.StringVar(&f.address, "address", "127.0.0.1", "address to bind (0.0.0.0 or \"\" for every interface)")
	fl.StringVar(&f.dataDir, "data-dir", "", "where the store lives (default $BRAID_HOME or ~/.braid)")
	fl.StringVar(&f.configFile, "config", "", "config file (default <data dir>/config.yaml)")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of braid itself to this file")
	_ = fl.MarkHidden("cpuprofile")
	f.backend.register(fl)
	fl.BoolVar(&f.runController, "run-controller", false,
		"with --backend kube: drive workflows in this process too (as braid controller does)")
	f.election.register(fl)
	f.auth.register(fl)
	f.tls.register(fl)
	return cmd
}

func runServer(ctx context.Context, s streams, f serverFlags) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := f.backend.validate(); err != nil {
		return err
	}
	if f.backend.backend == backendKube {
		return runKubeServer(ctx, s, f)
	}
	if f.runController {
		return errors.New("--run-controller needs --backend kube (the embedded server always drives its workflows)")
	}
	if f.cpuProfile != "" {
		stopProfile, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	e, err := openEmbedded(ctx, f.dataDir, f.configFile)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(s.err, nil))
	mgr, err := e.ctl.NewManager(e.store, controller.StoreTemplates(e.store))
	if err != nil {
		return errors.Join(err, e.Close())
	}
	dataDir := e.cfg.DataDir
	// A workflow busy in N consecutive crashes is ended Error on start.
	mgr.SetQuarantine(controller.Quarantine{Journal: filepath.Join(dataDir, "crash-journal.json"),
		After: e.cfg.Limits.WithDefaults().QuarantineAfterCrashes})
	tlsConfig, fingerprint, err := f.tls.serverTLS(func() (string, error) { return filepath.Join(dataDir, "tls"), nil }, f.address)
	if err != nil {
		return errors.Join(err, e.Close())
	}
	// Cookies (login, SSO) are Secure when the server speaks TLS.
	sa, err := f.auth.embeddedAuth(ctx, e.cfg, log, tlsConfig != nil)
	if err != nil {
		return errors.Join(err, e.Close())
	}
	opts := server.Options{Store: e.store, Logger: log, Artifacts: e.drivers, TLS: tlsConfig,
		LogPath:        func(ns, wf, pod string) string { return local.LogPath(dataDir, ns, wf, pod) },
		ForgetWorkflow: func(ns, wf string) error { return local.RemoveWorkflowFiles(dataDir, ns, wf) },
		Ready:          mgr.Ready, SyncLimits: e.limits}
	sa.apply(&opts)
	srv, err := server.New(opts)
	if err != nil {
		return errors.Join(err, e.Close())
	}
	l, err := net.Listen("tcp", net.JoinHostPort(f.address, strconv.Itoa(f.port)))
	if err != nil {
		return errors.Join(fmt.Errorf("listen: %w", err), e.Close())
	}
	info := config.ServerFile(dataDir)
	if err := config.WriteServerInfo(info, config.ServerInfo{Address: l.Addr().String(), PID: os.Getpid(),
		Secure: opts.TLS != nil, Fingerprint: fingerprint}); err != nil {
		log.Warn("cannot record the server's address", "file", info, "err", err)
	}
	defer os.Remove(info)
	if u := sa.loginURL(urlScheme(opts.TLS) + "://" + l.Addr().String()); u != "" {
		log.Info("open the UI and API in a browser, logged in once by this URL (or send the token 'braid auth token' prints)", "url", u)
	}

	mctx, cancel := context.WithCancel(ctx)
	mdone := make(chan error, 1)
	go func() { mdone <- mgr.Run(mctx) }()
	// Only the server schedules CronWorkflows (braid run does not).
	sched, err := cronsched.New(cronsched.Options{Store: e.store, Logger: log.With("component", "cron")})
	if err != nil {
		cancel()
		return errors.Join(err, <-mdone, e.Close())
	}
	cdone := make(chan error, 1)
	go func() { cdone <- sched.Run(mctx) }()
	// Semaphore limits follow the config file, as Argo's follow its ConfigMaps.
	go e.live.Watch(mctx, configPoll, log, func(*config.Config) { e.ctl.LimitsChanged() })
	serr := srv.Serve(ctx, l)
	cancel()
	return errors.Join(serr, <-mdone, <-cdone, e.Close())
}
