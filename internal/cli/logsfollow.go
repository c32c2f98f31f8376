package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient/workflow"
)

// followGiveUp is how long logs --follow waits for a server that went
// away (a restart) before it gives up.
const followGiveUp = 2 * time.Minute

// followLogs is logs --follow: when the server goes away (it restarts; the
// steps go on running in the supervisor), it connects again and goes on
// where it stopped, printing what the steps wrote meanwhile, once.
func followLogs(cmd *cobra.Command, s streams, g *globalFlags, req *workflow.WorkflowLogRequest, color bool) error {
	r := &logResume{seen: map[string]*podLines{}}
	var lost time.Time
	wait := 100 * time.Millisecond
	for {
		err := g.withSession(cmd, func(ctx context.Context, sess *session) error {
			req.Namespace = sess.namespace
			lost = time.Time{}
			return printLogs(ctx, s, sess, r.request(req), color, r)
		})
		if err == nil || !serverGone(err) || cmd.Context().Err() != nil {
			return err
		}
		if lost.IsZero() {
			lost = time.Now()
			fmt.Fprintf(s.err, "the server went away (%v): following again once it is back\\n", err)
		}
		if time.Since(lost) > followGiveUp {
			return fmt.Errorf("the server did not come back within %s: %w", followGiveUp, err)
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// serverGone reports whether err says the server is not there (stopped,
// restarting), rather than that the request is wrong.
func serverGone(err error) bool {
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// logResume remembers, per pod, how many lines were printed and the last
// one, so that a stream opened again prints each line once. A log only
// grows, so the line printed last is at or after its count: the stream
// opened again (from the start of each log) skips to it.
type logResume struct {
	resumed bool
	seen    map[string]*podLines
}

type podLines struct {
	printed int
	last    string
	// skip counts the lines of the stream opened again while it is still
	// looking for last.
	skip    int
	looking bool
}

// request is the request of the next stream: the first as given; the next
// ones read each log from its start (a tail would hide the lines written
// while the server was away) and skip what was printed.
func (r *logResume) request(req *workflow.WorkflowLogRequest) *workflow.WorkflowLogRequest {
	if !r.resumed {
		r.resumed = true
		return req
	}
	next := *req
	o := *req.LogOptions
	o.TailLines = nil
	next.LogOptions = &o
	for _, p := range r.seen {
		p.skip, p.looking = 0, p.printed > 0
	}
	return &next
}

// take reports whether the line of pod is new, and counts it.
func (r *logResume) take(pod, line string) bool {
	p := r.seen[pod]
	if p == nil {
		p = &podLines{}
		r.seen[pod] = p
	}
	if p.looking {
		p.skip++
		if p.skip < p.printed || line != p.last {
			return false
		}
		p.looking = false
		return false
	}
	p.printed++
	p.last = line
	return true
}
