package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
)

type logsFlags struct {
	container  string
	follow     bool
	previous   bool
	grep       string
	selector   string
	since      time.Duration
	sinceTime  string
	tail       int64
	timestamps bool
	noColor    bool
}

func newLogsCommand(s streams, g *globalFlags) *cobra.Command {
	var f logsFlags
	cmd := &cobra.Command{
		Use:   "logs WORKFLOW [POD]",
		Short: "view logs of a pod or workflow",
		Example: `  braid logs my-wf
  braid logs my-wf my-pod -f
  braid logs @latest --grep error --tail 20`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := f.request(args)
			if err != nil {
				return err
			}
			color := !f.noColor && isTerminal(s.out)
			if !f.follow {
				return g.withSession(cmd, func(ctx context.Context, sess *session) error {
					req.Namespace = sess.namespace
					return printLogs(ctx, s, sess, req, color, nil)
				})
			}
			return followLogs(cmd, s, g, req, color)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.container, "container", "c", "main", "print the logs of this container")
	fs.BoolVarP(&f.follow, "follow", "f", false, "keep printing new lines until the workflow ends")
	fs.BoolVarP(&f.previous, "previous", "p", false, "print the logs of the previous instance of the container")
	fs.StringVar(&f.grep, "grep", "", "print only lines matching this regular expression")
	fs.StringVarP(&f.selector, "selector", "l", "", "print only the logs of pods with these labels")
	fs.DurationVar(&f.since, "since", 0, "only lines newer than this duration, e.g. 5s, 2m, 3h")
	fs.StringVar(&f.sinceTime, "since-time", "", "only lines after this RFC 3339 time")
	fs.Int64Var(&f.tail, "tail", -1, "only the last N lines of each pod (-1: all)")
	fs.BoolVar(&f.timestamps, "timestamps", false, "print the timestamp of each line")
	fs.BoolVar(&f.noColor, "no-color", false, "disable colorized output")
	return cmd
}

// request is the WorkflowLogs request the flags describe.
func (f logsFlags) request(args []string) (*workflow.WorkflowLogRequest, error) {
	o := &corev1.PodLogOptions{Container: f.container, Follow: f.follow, Previous: f.previous, Timestamps: f.timestamps}
	if f.since > 0 {
		secs := int64(f.since.Seconds())
		o.SinceSeconds = &secs
	}
	if f.sinceTime != "" {
		t, err := time.Parse(time.RFC3339, f.sinceTime)
		if err != nil {
			return nil, fmt.Errorf("--since-time: %w", err)
		}
		st := metav1.NewTime(t)
		o.SinceTime = &st
	}
	if f.tail >= 0 {
		tail := f.tail
		o.TailLines = &tail
	}
	req := &workflow.WorkflowLogRequest{Name: args[0], LogOptions: o, Grep: f.grep, Selector: f.selector}
	if len(args) == 2 {
		req.PodName = args[1]
	}
	return req, nil
}

// printLogs prints the entries of a WorkflowLogs stream, one
// "<pod>: <content>" line each, until the server ends the stream. With r,
// it skips what r says was printed already, and counts what it prints.
func printLogs(ctx context.Context, s streams, sess *session, req *workflow.WorkflowLogRequest, color bool, r *logResume) error {
	stream, err := sess.Workflow.WorkflowLogs(ctx, req)
	if err != nil {
		return err
	}
	for {
		e, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if r != nil && !r.take(e.GetPodName(), e.GetContent()) {
			continue
		}
		if _, err := fmt.Fprintln(s.out, printer.LogLine(e.GetPodName(), e.GetContent(), color)); err != nil {
			return err
		}
	}
}
