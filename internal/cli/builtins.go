package cli

import (
	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/builtins"
)

// newBuiltinCommands returns the hidden commands that stand in for the
// programs of the example images (see internal/builtins and the image table
// of internal/executor): `braid argosay` and `braid cowsay`. Their arguments
// are passed through untouched, flags included.
func newBuiltinCommands(s streams) []*cobra.Command {
	exit := func(code int) error {
		if code == 0 {
			return nil
		}
		return &exitError{code: code}
	}
	return []*cobra.Command{
		{
			Use:                "argosay [VERB [ARGS...]]",
			Short:              "The entrypoint of argoproj/argosay:v2 (echo, cat, assert_contains, exit, sleep, sh)",
			Hidden:             true,
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				return exit(builtins.Argosay(args, s.out, s.err))
			},
		},
		{
			Use:                "cowsay [MESSAGE...]",
			Short:              "Print a message in a speech bubble, as docker/whalesay's cowsay",
			Hidden:             true,
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				return exit(builtins.Cowsay(args, s.out))
			},
		},
	}
}
