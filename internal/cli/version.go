package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/version"
	"github.com/braidwf/braid/pkg/apiclient/info"
)

func newVersionCommand(s streams, g *globalFlags) *cobra.Command {
	var short bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print version information",
		Long: `Print the version of braid, and of the server when one is in use
(--argo-server, ARGO_SERVER, BRAID_SERVER or a running braid server on the
data directory).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" {
				return &exitError{code: 2, err: fmt.Errorf("unknown output format %q: use json", output)}
			}
			mine := version.Get()
			srv, err := serverVersion(cmd.Context(), g)
			if err != nil {
				return err
			}
			switch {
			case output == "json":
				v := map[string]*version.Info{"clientVersion": &mine}
				if srv != nil {
					v["serverVersion"] = srv
				}
				enc := json.NewEncoder(s.out)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			case short:
				fmt.Fprintf(s.out, "braid: %s\n", mine.Version)
				if srv != nil {
					fmt.Fprintf(s.out, "braid-server: %s\n", srv.Version)
				}
			default:
				writeVersion(s.out, "braid", mine)
				if srv != nil {
					writeVersion(s.out, "braid-server", *srv)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&short, "short", false, "print just the version number")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}

func writeVersion(w io.Writer, name string, v version.Info) {
	fmt.Fprintf(w, "%s: %s\n  BuildDate: %s\n  GitCommit: %s\n  GoVersion: %s\n  Platform: %s\n",
		name, v.Version, v.BuildDate, v.GitCommit, v.GoVersion, v.Platform)
}

// serverVersion asks the server in use for its version; nil when there is
// no server (direct mode has none to report: it is this binary).
func serverVersion(ctx context.Context, g *globalFlags) (*version.Info, error) {
	sess, err := g.connectServer(ctx)
	if err != nil || sess == nil {
		return nil, err
	}
	defer sess.Close()
	v, err := sess.Info.GetVersion(ctx, &info.GetVersionRequest{})
	if err != nil {
		return nil, err
	}
	return &version.Info{Version: v.Version, BuildDate: v.BuildDate, GitCommit: v.GitCommit,
		GoVersion: v.GoVersion, Platform: v.Platform}, nil
}
