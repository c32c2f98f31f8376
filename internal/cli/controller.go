package cli

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/braidwf/braid/internal/app"
)

// registerElection registers the leader election flags of the replicas
// that drive workflows (braid controller, braid server --run-controller).
func registerElection(fl *pflag.FlagSet, e *app.Election) {
	fl.BoolVar(&e.Enabled, "leader-elect", true,
		"take a Lease before driving workflows, so that only one replica drives them")
	fl.StringVar(&e.Namespace, "leader-election-namespace", "",
		"namespace of the Lease (default the pod's namespace in a cluster, else default)")
	fl.StringVar(&e.Name, "leader-election-name", "braid-controller", "name of the Lease")
	fl.StringVar(&e.Identity, "leader-election-identity", "",
		"this replica's identity in the Lease; keep it stable across restarts (default the host name, which is the pod's name)")
}

type controllerFlags struct {
	backend    backendFlags
	election   app.Election
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
	registerElection(fl, &f.election)
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
	k, err := app.OpenKube(ctx, f.backend.kubeConfig(f.dataDir, f.configFile, log, true))
	if err != nil {
		return err
	}
	return errors.Join(k.Drive(ctx, f.election), k.Close())
}
