package server

import (
	"bufio"
	"errors"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// LogPath says where a step's log is kept: the local runtime keeps every
// log in a file that outlives the step and the workflow.
type LogPath func(namespace, workflow, pod string) string

// logPoll is how often a followed log is read again.
const logPoll = 200 * time.Millisecond

func (s *workflowServer) WorkflowLogs(req *workflow.WorkflowLogRequest, stream grpc.ServerStreamingServer[workflow.LogEntry]) error {
	return s.logs(req, stream)
}

func (s *workflowServer) PodLogs(req *workflow.WorkflowLogRequest, stream grpc.ServerStreamingServer[workflow.LogEntry]) error {
	return s.logs(req, stream)
}

// logQuery is a parsed log request.
type logQuery struct {
	pod    string
	grep   *regexp.Regexp
	tail   int64 // lines per pod; <0: all
	since  time.Time
	follow bool
	none   bool // a container that has no log here (init, wait)
}

func parseLogQuery(req *workflow.WorkflowLogRequest, now time.Time) (logQuery, error) {
	o := req.GetLogOptions()
	q := logQuery{pod: req.GetPodName(), tail: -1, follow: o.GetFollow()}
	if g := req.GetGrep(); g != "" {
		re, err := regexp.Compile(g)
		if err != nil {
			return q, status.Errorf(codes.InvalidArgument, "grep: %v", err)
		}
		q.grep = re
	}
	if o.GetTailLines() != 0 {
		q.tail = o.GetTailLines()
	}
	if secs := o.GetSinceSeconds(); secs > 0 {
		q.since = now.Add(-time.Duration(secs) * time.Second)
	}
	if t := o.GetSinceTime(); t != nil {
		q.since = t.AsTime()
	}
	if c := o.GetContainer(); c != "" && c != "main" {
		q.none = true
	}
	return q, nil
}

// logs streams the kept logs of the workflow's steps, in the order they
// started; with follow, until the workflow has ended and every log is read.
// A workflow that only the archive holds still has its logs read.
// sinceSeconds and sinceTime select steps by when they ran (lines carry no
// time of their own).
func (s *workflowServer) logs(req *workflow.WorkflowLogRequest, stream grpc.ServerStreamingServer[workflow.LogEntry]) error {
	ctx := stream.Context()
	if s.logPath == nil {
		return status.Error(codes.Unimplemented, "this server keeps no step logs")
	}
	q, err := parseLogQuery(req, time.Now())
	if err != nil {
		return err
	}
	wf, err := s.get(ctx, req.GetNamespace(), req.GetName())
	if isNotFound(err) {
		// The live workflow is gone (deleted, its TTL or the retention
		// policy): its step logs are kept, and the archive says which.
		if archived, ok := s.fromArchive(ctx, req.GetNamespace(), req.GetName(), ""); ok {
			wf, err = archived, nil
		}
	}
	if err != nil {
		return err
	}
	if q.none {
		return nil
	}
	t := &logTail{s: s, q: q, stream: stream, offsets: map[string]int64{}}
	for {
		done := wf.Status.Phase.Completed() || !q.follow
		if err := t.round(wf, done); err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(logPoll):
		}
		if wf, err = s.get(ctx, wf.Namespace, wf.Name); err != nil {
			return err
		}
	}
}

// logTail remembers how far each pod's log was sent.
type logTail struct {
	s       *workflowServer
	q       logQuery
	stream  grpc.ServerStreamingServer[workflow.LogEntry]
	offsets map[string]int64
}

// round sends what each selected pod's log gained since the last round.
func (t *logTail) round(wf *v1alpha1.Workflow, final bool) error {
	for _, n := range stepsInOrder(wf) {
		pod := printer.PodName(wf, &n)
		if t.q.pod != "" && pod != t.q.pod && n.ID != t.q.pod {
			continue
		}
		if !t.q.since.IsZero() && n.Phase.Completed() && n.FinishedAt.Time.Before(t.q.since) {
			continue
		}
		path := t.s.logPath(wf.Namespace, wf.Name, pod)
		off, err := t.send(path, pod, t.offsets[pod], final || n.Phase.Completed())
		if err != nil {
			return err
		}
		t.offsets[pod] = off
	}
	return nil
}

// send streams the lines of path after offset and returns the new offset.
// An unfinished last line waits for the next round unless final. The first
// read of a pod honours tailLines.
func (t *logTail) send(path, pod string, offset int64, final bool) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return offset, nil
	}
	if err != nil {
		return offset, status.Errorf(codes.Internal, "read the log of %s: %v", pod, err)
	}
	defer f.Close()
	if offset == 0 && t.q.tail >= 0 {
		if offset, err = tailOffset(f, t.q.tail); err != nil {
			return 0, status.Errorf(codes.Internal, "read the log of %s: %v", pod, err)
		}
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset, status.Errorf(codes.Internal, "read the log of %s: %v", pod, err)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if err != nil && (!final || line == "") {
			return offset, nil
		}
		offset += int64(len(line))
		text := strings.TrimRight(line, "\r\n")
		if t.q.grep != nil && !t.q.grep.MatchString(text) {
			continue
		}
		if err := t.stream.Send(&workflow.LogEntry{Content: text, PodName: pod}); err != nil {
			return offset, err
		}
	}
}

// tailOffset returns where the last n lines of f start.
func tailOffset(f *os.File, n int64) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if n == 0 {
		return size, nil
	}
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	var lines int64
	end := size
	for pos := size; pos > 0; {
		step := min(int64(chunk), pos)
		pos -= step
		if _, err := f.ReadAt(buf[:step], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := step - 1; i >= 0; i-- {
			if buf[i] != '\n' || pos+i == end-1 {
				continue
			}
			lines++
			if lines == n {
				return pos + i + 1, nil
			}
		}
	}
	return 0, nil
}

// stepsInOrder lists the nodes that have a log, in the order they started.
func stepsInOrder(wf *v1alpha1.Workflow) []v1alpha1.NodeStatus {
	var nodes []v1alpha1.NodeStatus
	for _, n := range wf.Status.Nodes {
		if n.Type == v1alpha1.NodeTypePod {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		if !a.StartedAt.Equal(&b.StartedAt) {
			return a.StartedAt.Before(&b.StartedAt)
		}
		return a.ID < b.ID
	})
	return nodes
}
