package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func newWatchCommand(s streams, g *globalFlags) *cobra.Command {
	var f getFlags
	cmd := &cobra.Command{
		Use:   "watch WORKFLOW",
		Short: "watch a workflow until it completes",
		Example: `  braid watch my-wf
  braid watch @latest --node-field-selector phase!=Succeeded`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return watchWorkflow(ctx, s, sess, args[0], f)
			})
		},
	}
	f.register(cmd.Flags(), "", true)
	_ = cmd.Flags().MarkHidden("output")
	return cmd
}

func newWaitCommand(s streams, g *globalFlags) *cobra.Command {
	var ignoreNotFound bool
	cmd := &cobra.Command{
		Use:   "wait WORKFLOW...",
		Short: "waits for workflows to complete",
		Long: `Wait for workflows to complete and print "<name> <phase> at <time>" for each.
The exit code is 1 when any of them ended Failed or Error.`,
		Example: `  braid wait my-wf
  braid wait @latest --ignore-not-found`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return waitWorkflows(ctx, s, sess, args, ignoreNotFound, false)
			})
		},
	}
	cmd.Flags().BoolVar(&ignoreNotFound, "ignore-not-found", false, "succeed when a workflow does not exist")
	return cmd
}

// finished reports whether the controller is done with wf.
func finished(wf *v1alpha1.Workflow) bool { return !wf.Status.FinishedAt.IsZero() }

// followWorkflow calls fn with each version of the workflow, the current
// one first, until fn says it is done. A stream the server ends is opened
// again. In direct mode nothing runs workflows, so an unfinished workflow
// is an error rather than an endless wait.
func followWorkflow(ctx context.Context, sess *session, name string, fn func(*v1alpha1.Workflow) bool) error {
	req := &workflow.WatchWorkflowsRequest{Namespace: sess.namespace, ListOptions: &metav1.ListOptions{
		FieldSelector: "metadata.name=" + name, ResourceVersion: "0",
	}}
	backoff := 100 * time.Millisecond
	for {
		done, err := followOnce(ctx, sess, req, fn)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func followOnce(ctx context.Context, sess *session, req *workflow.WatchWorkflowsRequest, fn func(*v1alpha1.Workflow) bool) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := sess.Workflow.WatchWorkflows(ctx, req)
	if err != nil {
		return false, err
	}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if ev.GetObject() == nil {
			continue
		}
		wf := ev.GetObject()
		if fn(wf) {
			return true, nil
		}
		if ev.GetType() == "DELETED" {
			return false, fmt.Errorf("workflow %s was deleted before it finished", wf.Name)
		}
		if sess.direct && !finished(wf) {
			return false, errNothingRuns(sess, wf.Name)
		}
	}
}

// errNothingRuns says that direct mode cannot wait for a workflow.
func errNothingRuns(sess *session, name string) error {
	return fmt.Errorf("workflow %s has not finished and no server runs workflows on %s: start `braid server` there (or name a server with --argo-server)", name, sess.dataDir)
}

// watchWorkflow prints the get view of the workflow each time it changes
// and once a second, each frame after a clear-screen on stderr, until the
// workflow finishes (ARGO-API §5.3).
func watchWorkflow(ctx context.Context, s streams, sess *session, name string, f getFlags) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan *v1alpha1.Workflow)
	errc := make(chan error, 1)
	go func() {
		errc <- followWorkflow(ctx, sess, name, func(wf *v1alpha1.Workflow) bool {
			select {
			case updates <- wf:
			case <-ctx.Done():
				return true
			}
			return finished(wf)
		})
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var wf *v1alpha1.Workflow
	for {
		select {
		case wf = <-updates:
		case err := <-errc:
			return err
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		if wf == nil {
			continue
		}
		if err := printer.WriteWatchFrame(s.out, s.err, wf, f.options(s.out)); err != nil {
			return err
		}
		if finished(wf) {
			return nil
		}
	}
}

// waitWorkflows waits for all the workflows at once and prints the line of
// each as it finishes, unless quiet. It fails (exit 1, no message) when one
// ended Failed or Error, or could not be watched.
func waitWorkflows(ctx context.Context, s streams, sess *session, names []string, ignoreNotFound, quiet bool) error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	ok := true
	for _, name := range names {
		wg.Go(func() {
			good := waitOne(ctx, s, &mu, sess, name, ignoreNotFound, quiet)
			mu.Lock()
			ok = ok && good
			mu.Unlock()
		})
	}
	wg.Wait()
	if !ok {
		return &exitError{code: 1}
	}
	return nil
}

func waitOne(ctx context.Context, s streams, mu *sync.Mutex, sess *session, name string, ignoreNotFound, quiet bool) bool {
	var last *v1alpha1.Workflow
	err := followWorkflow(ctx, sess, name, func(wf *v1alpha1.Workflow) bool {
		last = wf
		return finished(wf)
	})
	if err != nil {
		if status.Code(err) == codes.NotFound && ignoreNotFound {
			return true
		}
		if sess.direct { // argo prints nothing here; direct mode explains itself
			mu.Lock()
			fmt.Fprintln(s.err, "Error:", err)
			mu.Unlock()
		}
		return false
	}
	if !quiet {
		shown := *last
		shown.Name = name
		mu.Lock()
		fmt.Fprintln(s.out, printer.WaitLine(&shown))
		mu.Unlock()
	}
	return last.Status.Phase != v1alpha1.WorkflowFailed && last.Status.Phase != v1alpha1.WorkflowError
}

// followFlags are the --log, --wait and --watch flags of submit, retry and
// resubmit.
type followFlags struct {
	log, wait, watch bool
}

func (f *followFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&f.log, "log", false, "print the workflow's logs until it ends")
	fs.BoolVarP(&f.wait, "wait", "w", false, "wait for the workflow to complete")
	fs.BoolVar(&f.watch, "watch", false, "watch the workflow until it completes")
}

// waitWatchOrLog follows the workflows as the flags say: logs first, then
// wait or watch.
func waitWatchOrLog(ctx context.Context, s streams, sess *session, names []string, ff followFlags, gf getFlags) error {
	if sess.direct && (ff.log || ff.wait || ff.watch) && len(names) > 0 {
		return errNothingRuns(sess, names[0])
	}
	if ff.log {
		for _, name := range names {
			req := &workflow.WorkflowLogRequest{Name: name, Namespace: sess.namespace, LogOptions: &corev1.PodLogOptions{Container: "main", Follow: true}}
			if err := printLogs(ctx, s, sess, req, isTerminal(s.out), nil); err != nil {
				return err
			}
		}
	}
	switch {
	case ff.wait:
		return waitWorkflows(ctx, s, sess, names, false, gf.output != "" && gf.output != "wide")
	case ff.watch:
		for _, name := range names {
			if err := watchWorkflow(ctx, s, sess, name, gf); err != nil {
				return err
			}
		}
	}
	return nil
}
