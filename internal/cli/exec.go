package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/executor/emissary"
)

// newExecCommand is the hidden `braid exec`, what runs inside a step's pod:
// `braid exec init [DIR]` copies this binary into the shared emptyDir, and
// `braid exec emissary -- COMMAND...` wraps the main container's command.
func newExecCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{Use: "exec", Short: "run inside a step's pod (the executor)", Hidden: true}
	cmd.AddCommand(&cobra.Command{
		Use:   "init [DIR]",
		Short: "copy the braid binary into DIR (default " + emissary.BinDir + ")",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			dir := emissary.BinDir
			if len(args) == 1 {
				dir = args[0]
			}
			return copySelf(filepath.Join(dir, "braid"))
		},
	}, &cobra.Command{
		Use:   "emissary -- COMMAND [ARG]...",
		Short: "run a step's command and report its result in the termination message",
		RunE: func(c *cobra.Command, args []string) error {
			sigs := make(chan os.Signal, 4)
			signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
			defer signal.Stop(sigs)
			code := emissary.Run(c.Context(), emissary.Options{Argv: args, Getenv: os.Getenv,
				Stdin: s.in, Stdout: s.out, Stderr: s.err, Signals: sigs})
			if code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	})
	return cmd
}

// copySelf copies the running executable to dst (mode 0755), through a
// temporary name so that a half-written binary is never run.
func copySelf(dst string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the braid executable: %w", err)
	}
	in, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("copy braid: %w", err)
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("copy braid: %w", err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copy braid to %s: %w", dst, err)
	}
	return nil
}
