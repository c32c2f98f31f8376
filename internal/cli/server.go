package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/store/sqlite"
)

type serverFlags struct {
	port       int
	address    string
	dataDir    string
	configFile string
}

func newServerCommand(s streams) *cobra.Command {
	f := serverFlags{}
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Start the API server (argo-server's gRPC and REST API on one port)",
		Long: `Start the API server on the embedded store under $BRAID_HOME (default ~/.braid,
or --data-dir). One port serves gRPC and HTTP/1.1: the same REST paths and JSON
as argo-server's /api/v1, plus /healthz and /readyz.

Served so far: WorkflowService Create, Get, List, Delete and Lint, and
InfoService GetInfo and GetVersion. Workflows created through the server are
validated and stored, but not run yet: running them through the server comes
next (use braid run to run a workflow now).`,
		Example: `  braid server
  braid server --port 2746 --address 0.0.0.0
  curl -s localhost:2746/api/v1/version`,
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
	return cmd
}

func runServer(ctx context.Context, s streams, f serverFlags) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := config.Load(config.Sources{DataDirFlag: f.dataDir, ConfigFlag: f.configFile})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	log := slog.New(slog.NewTextHandler(s.err, nil))
	st, err := sqlite.Open(ctx, cfg.StorePath(), sqlite.Options{Logger: log})
	if err != nil {
		return fmt.Errorf("open the embedded store: %w", err)
	}
	srv, err := server.New(server.Options{Store: st, Logger: log})
	if err != nil {
		return errors.Join(err, st.Close())
	}
	l, err := net.Listen("tcp", net.JoinHostPort(f.address, strconv.Itoa(f.port)))
	if err != nil {
		return errors.Join(fmt.Errorf("listen: %w", err), st.Close())
	}
	return errors.Join(srv.Serve(ctx, l), st.Close())
}
