package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/store/sqlite"
)

// Direct mode: with no server to talk to, the workflow commands read and
// change the embedded store under the data directory themselves, as the
// argo CLI talks to Kubernetes directly when no argo-server is given.

// directFlags are the flags every direct-mode command shares.
type directFlags struct {
	dataDir   string
	namespace string
}

func (f *directFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dataDir, "data-dir", "", "where the embedded store lives (default $BRAID_HOME or ~/.braid)")
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "default", "namespace")
}

// openDirect opens the embedded store of an existing data directory.
func openDirect(ctx context.Context, f directFlags) (*sqlite.Store, *config.Config, error) {
	cfg, err := config.Load(config.Sources{DataDirFlag: f.dataDir})
	if err != nil {
		return nil, nil, err
	}
	db := cfg.StorePath()
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("no braid store in %s: run a workflow first (braid run), or set --data-dir or %s", cfg.DataDir, config.EnvHome)
	}
	st, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("open the embedded store: %w", err)
	}
	return st, cfg, nil
}
