package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// getFlags are the output flags of get, watch, submit, retry and resubmit.
type getFlags struct {
	output            string
	status            string
	nodeFieldSelector string
	noColor, noUTF8   bool
}

// register adds the flags; filters adds --status and --node-field-selector.
func (f *getFlags) register(fs *pflag.FlagSet, outputs string, filters bool) {
	fs.StringVarP(&f.output, "output", "o", "", "output format: "+outputs)
	if filters {
		fs.StringVar(&f.status, "status", "", "show only nodes in these phases (comma separated): Pending, Running, Succeeded, Skipped, Failed, Error")
		fs.StringVar(&f.nodeFieldSelector, "node-field-selector", "", "show only nodes matching this selector, e.g. phase!=Succeeded")
	}
}

func (f *getFlags) registerColor(fs *pflag.FlagSet) {
	fs.BoolVar(&f.noColor, "no-color", false, "disable colorized output")
	fs.BoolVar(&f.noUTF8, "no-utf8", false, "use plain 7-bit characters only")
}

// check rejects an output format not in allowed.
func checkOutput(output string, allowed ...string) error {
	if output == "" || slices.Contains(allowed, output) {
		return nil
	}
	return fmt.Errorf("unknown output format %q: use %s", output, strings.Join(allowed, ", "))
}

// options are the printer options for writing to w. Colour is on when w
// is a terminal, TERM is not dumb and --no-color is not given.
func (f getFlags) options(w io.Writer) printer.Options {
	o := printer.Options{
		NoColor:           f.noColor || !isTerminal(w),
		NoUTF8:            f.noUTF8,
		Output:            f.output,
		NodeFieldSelector: f.nodeFieldSelector,
	}
	if f.status != "" {
		o.StatusFilter = splitList(f.status)
	}
	return o
}

// printWorkflow prints wf in the format f asks for, as argo get does.
func printWorkflow(s streams, wf *v1alpha1.Workflow, f getFlags) error {
	if f.output == "yaml" {
		return writeYAML(s, wf)
	}
	return printer.WriteGet(s.out, wf, f.options(s.out))
}

func writeYAML(s streams, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode YAML: %w", err)
	}
	_, err = s.out.Write(data)
	return err
}

// splitList splits a comma separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseDuration reads a duration as argo does: Go's syntax, plus "d" for
// days ("1d", "2d12h").
func parseDuration(s string) (time.Duration, error) {
	days, rest, ok := strings.Cut(s, "d")
	if !ok {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: %w", s, err)
		}
		return d, nil
	}
	n, err := strconv.Atoi(days)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid duration %q: bad number of days", s)
	}
	d := time.Duration(n) * 24 * time.Hour
	if rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: %w", s, err)
		}
		d += r
	}
	return d, nil
}
