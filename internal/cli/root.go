package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// exitError carries a process exit code through cobra without printing twice.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

// streams are the process's standard streams, injected for tests.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// Main runs the braid command line with args and returns the exit code.
func Main(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) int {
	s := streams{in: in, out: out, err: errOut}
	root := newRoot(s, os.Getenv)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(errOut, ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(errOut, "Error:", err)
	return 1
}

func newRoot(s streams, getenv func(string) string) *cobra.Command {
	root := &cobra.Command{
		Use:           "braid",
		Short:         "braid runs Argo Workflows specs, on one machine or on Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	g := &globalFlags{getenv: getenv}
	g.register(root.PersistentFlags())
	root.AddCommand(newVersionCommand(s, g), newLintCommand(s, g), newRunCommand(s), newServerCommand(s),
		newSubmitCommand(s, g), newListCommand(s, g), newGetCommand(s, g), newDeleteCommand(s, g),
		newLogsCommand(s, g), newWatchCommand(s, g), newWaitCommand(s, g),
		newSuspendCommand(s, g), newResumeCommand(s, g), newStopCommand(s, g), newTerminateCommand(s, g),
		newRetryCommand(s, g), newResubmitCommand(s, g), newNodeCommand(s, g),
		newTemplateCommand(s, g), newClusterTemplateCommand(s, g), newCronCommand(s, g), newArchiveCommand(s, g), newApplyCommand(s, g), newCpCommand(s, g),
		newAuthCommand(s, g))
	root.AddCommand(newBuiltinCommands(s)...)
	root.AddCommand(newExecCommand(s))
	root.AddCommand(newControllerCommand(s))
	root.AddCommand(newSupervisorCommand(s))
	return root
}
