package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/version"
)

func newVersionCommand(s streams) *cobra.Command {
	var short bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version information",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			switch {
			case output == "json":
				enc := json.NewEncoder(s.out)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]version.Info{"clientVersion": info})
			case output != "":
				return &exitError{code: 2, err: fmt.Errorf("unknown output format %q: use json", output)}
			case short:
				fmt.Fprintf(s.out, "braid: %s\n", info.Version)
			default:
				fmt.Fprintf(s.out, "braid: %s\n  BuildDate: %s\n  GitCommit: %s\n  GoVersion: %s\n  Platform: %s\n",
					info.Version, info.BuildDate, info.GitCommit, info.GoVersion, info.Platform)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&short, "short", false, "print just the version number")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}
