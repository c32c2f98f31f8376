package cli

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/app"
)

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
	// inProcess runs the steps in the server's process instead of the data
	// directory's supervisor: they end with the server.
	inProcess bool
	election  app.Election
	auth      authFlags
	tls       tlsFlags
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
run again. Steps run in the data directory's supervisor ('braid supervisor',
started detached by the first server that needs it), so that they go on
running while the server restarts, even after a kill -9; the server reports
their results when it is back. The address is recorded in <data dir>/server.json, where the braid
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
	fl.BoolVar(&f.inProcess, "in-process-steps", false,
		"run the steps in this process, not in the data directory's supervisor: they end with the server")
	fl.BoolVar(&f.runController, "run-controller", false,
		"with --backend kube: drive workflows in this process too (as braid controller does)")
	registerElection(fl, &f.election)
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
	log := slog.New(slog.NewTextHandler(s.err, nil))
	e, err := app.OpenEmbedded(ctx, app.EmbeddedConfig{DataDir: f.dataDir, ConfigFile: f.configFile, Logger: log,
		Supervised: !f.inProcess})
	if err != nil {
		return err
	}
	dataDir := e.Config.DataDir
	tlsConfig, fingerprint, err := f.tls.serverTLS(func() (string, error) { return filepath.Join(dataDir, "tls"), nil }, f.address)
	if err != nil {
		return errors.Join(err, e.Close())
	}
	// Cookies (login, SSO) are Secure when the server speaks TLS.
	sa, err := f.auth.embeddedAuth(ctx, e.Config, log, tlsConfig != nil)
	if err != nil {
		return errors.Join(err, e.Close())
	}
	err = e.Serve(ctx, app.Listen{Address: f.address, Port: f.port, TLS: tlsConfig, Fingerprint: fingerprint,
		Logger: log, Configure: sa.apply,
		Listening: func(addr string) {
			if u := sa.loginURL(urlScheme(tlsConfig) + "://" + addr); u != "" {
				log.Info("open the UI and API in a browser, logged in once by this URL (or send the token 'braid auth token' prints)", "url", u)
			}
		}})
	return errors.Join(err, e.Close())
}

// runKubeServer serves the API on the cluster's custom resources; with
// --run-controller it drives workflows too, under leader election.
func runKubeServer(ctx context.Context, s streams, f serverFlags) error {
	log := slog.New(slog.NewTextHandler(s.err, nil))
	k, err := app.OpenKube(ctx, f.backend.kubeConfig(f.dataDir, f.configFile, log, f.runController))
	if err != nil {
		return err
	}
	closeAll := func(errs ...error) error { return errors.Join(append(errs, k.Close())...) }
	tlsCfg, _, err := f.tls.serverTLS(func() (string, error) { return kubeCertDir(f.dataDir) }, f.address)
	if err != nil {
		return closeAll(err)
	}
	sa, err := f.auth.kubeAuth(k.Rest, log, tlsCfg != nil)
	if err != nil {
		return closeAll(err)
	}
	var drive *app.Election
	if f.runController {
		drive = &f.election
	}
	return closeAll(k.Serve(ctx, app.Listen{Address: f.address, Port: f.port, TLS: tlsCfg, Logger: log,
		Configure: sa.apply}, drive))
}
