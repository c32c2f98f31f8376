package cli

import (
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/app"
	"github.com/braidwf/braid/internal/runtime/supervisor"
)

// newSupervisorCommand is `braid supervisor`: the process that owns the
// steps of one data directory, started by braid server (package
// supervisor). Hidden: users never start it themselves.
func newSupervisorCommand(s streams) *cobra.Command {
	var c app.SupervisorConfig
	cmd := &cobra.Command{
		Use:    "supervisor",
		Short:  "Own the steps of a data directory while braid server comes and goes (started by braid server)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
			c.Logger = slog.New(slog.NewTextHandler(s.err, nil)).With("component", "supervisor")
			err := app.ServeSupervisor(ctx, c)
			if errors.Is(err, supervisor.ErrRunning) {
				return nil // the one that runs serves the server
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&c.DataDir, "data-dir", "", "the data directory whose steps to own (default $BRAID_HOME or ~/.braid)")
	fl.StringVar(&c.ConfigFile, "config", "", "config file (default <data dir>/config.yaml)")
	fl.StringVar(&c.Isolation, "isolation", "", "the steps' isolation: none, auto or required (default the config file's)")
	fl.DurationVar(&c.IdleTimeout, "idle-timeout", 30*time.Second, "exit once no server has been connected and no step has run for this long")
	return cmd
}
