package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// StepLogs opens the kept log of a workflow's step (its main container's
// output) by the pod name the step ran as. Both runtimes implement it:
// the local runtime's logs are files that outlive the step and the
// workflow (local.LogFiles); the Kubernetes runtime fetches a pod's log
// into a file, and reads the log the executor shipped to the artifact
// repository once the pod is gone (kube.PodLogs).
//
// The log comes as a file because the server reads it as one: tailLines
// reads back from its end, the step-logs route serves byte ranges, and
// steps that started in the same second are ordered by when their logs
// were last written. A file is the log as it is when opened; a running
// step's grows, and following it opens it again. A step that has no log
// yet is an error that wraps fs.ErrNotExist.
type StepLogs interface {
	Open(ctx context.Context, namespace, workflow, pod string) (*os.File, error)
}

// logPoll is how often a followed log is read again.
const logPoll = 200 * time.Millisecond

func (s *workflowServer) WorkflowLogs(req *workflow.WorkflowLogRequest, stream grpc.ServerStreamingServer[workflow.LogEntry]) error {
	return s.logs(req, stream)
}

func (s *workflowServer) PodLogs(req *workflow.WorkflowLogRequest, stream grpc.ServerStreamingServer[workflow.LogEntry]) error {
	return s.logs(req, stream)
}

// maxLogEntry bounds the content of one LogEntry. Argo sends one entry a
// line; a line longer than this is sent as several entries of at most
// maxLogEntry bytes each (split, never cut: nothing is lost), and each
// piece counts as a line for tailLines, its pieces counted back from its
// end. So neither a read nor a send ever holds more than this much of a
// line, however long the line is, and tailLines=10 of a log that is one
// 1 GB line sends 2.5 MiB. There is precedent on both sides: containerd's
// CRI log splits lines at 16 KiB and kubelet counts the pieces for --tail,
// and argo-server's line scanner stops a pod's log at a line over 64 KiB.
const maxLogEntry = 256 << 10

// logQuery is a parsed log request.
type logQuery struct {
	pod    string
	grep   *regexp.Regexp
	tail   int64 // lines (pieces) per pod; <0: all
	limit  int64 // bytes of log per pod (limitBytes); 0: all
	entry  int   // the longest LogEntry content (maxLogEntry)
	since  time.Time
	follow bool
	none   bool // a container that has no log here (init, wait)
}

func parseLogQuery(req *workflow.WorkflowLogRequest, now time.Time) (logQuery, error) {
	o := req.GetLogOptions()
	if o == nil {
		o = &corev1.PodLogOptions{}
	}
	q := logQuery{pod: req.GetPodName(), tail: -1, follow: o.Follow, entry: maxLogEntry}
	if g := req.GetGrep(); g != "" {
		re, err := regexp.Compile(g)
		if err != nil {
			return q, status.Errorf(codes.InvalidArgument, "grep: %v", err)
		}
		q.grep = re
	}
	if o.TailLines != nil && *o.TailLines != 0 {
		q.tail = *o.TailLines
	}
	if n := ptrValue(o.LimitBytes); n < 0 {
		return q, status.Errorf(codes.InvalidArgument, "logOptions.limitBytes %d: must be positive (or 0 for no limit)", n)
	} else if n > 0 {
		q.limit = n
	}
	if secs := ptrValue(o.SinceSeconds); secs > 0 {
		q.since = now.Add(-time.Duration(secs) * time.Second)
	}
	if t := o.SinceTime; t != nil {
		q.since = t.Time
	}
	if c := o.Container; c != "" && c != "main" {
		q.none = true
	}
	return q, nil
}

// logs streams the kept logs of the workflow's steps, in the order they
// started; with follow, until the workflow has ended and every log is read.
// A workflow that only the archive holds still has its logs read.
//
// Every option is served without reading more of a log than it sends:
// tailLines finds where the last lines start by reading back from the end
// of the file, limitBytes stops each pod's log after that many bytes, and
// a line longer than maxLogEntry is sent in pieces. sinceSeconds and
// sinceTime select steps by when they ran: the local runtime writes a
// step's output straight to its log file, so lines carry no time of their
// own.
func (s *workflowServer) logs(req *workflow.WorkflowLogRequest, stream grpc.ServerStreamingServer[workflow.LogEntry]) error {
	ctx := stream.Context()
	if s.logSource == nil {
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
	t := &logTail{s: s, q: q, stream: stream, pods: map[string]*podLog{}}
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
	s      *workflowServer
	q      logQuery
	stream grpc.ServerStreamingServer[workflow.LogEntry]
	pods   map[string]*podLog
	r      *bufio.Reader // reads every pod's log, q.entry bytes at most at a time
}

// podLog is how far one pod's log was read.
type podLog struct {
	offset  int64 // the next byte to send
	started bool  // tailLines has been applied
	sent    int64 // bytes of the log consumed, for limitBytes
}

// round sends what each selected pod's log gained since the last round.
func (t *logTail) round(wf *v1alpha1.Workflow, final bool) error {
	lastWrite := func(n *v1alpha1.NodeStatus) time.Time {
		return t.lastWrite(wf, wf.NodePodName(n))
	}
	for _, n := range stepsInOrder(wf, lastWrite) {
		pod := wf.NodePodName(&n)
		if t.q.pod != "" && pod != t.q.pod && n.ID != t.q.pod {
			continue
		}
		if !t.q.since.IsZero() && n.Phase.Completed() && n.FinishedAt.Time.Before(t.q.since) {
			continue
		}
		p := t.pods[pod]
		if p == nil {
			p = &podLog{}
			t.pods[pod] = p
		}
		if t.q.limit > 0 && p.sent >= t.q.limit {
			continue
		}
		if err := t.sendPod(wf, pod, p, final || n.Phase.Completed()); err != nil {
			return err
		}
	}
	return nil
}

// lastWrite is when the pod's log was last written; a pod with no log yet
// comes after those that have one.
func (t *logTail) lastWrite(wf *v1alpha1.Workflow, pod string) time.Time {
	none := time.Unix(1<<40, 0)
	f, err := t.s.logSource.Open(t.stream.Context(), wf.Namespace, wf.Name, pod)
	if err != nil {
		return none
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return none
	}
	return fi.ModTime()
}

// sendPod sends what the pod's log gained (send); a pod with no log yet
// sends nothing.
func (t *logTail) sendPod(wf *v1alpha1.Workflow, pod string, p *podLog, final bool) error {
	f, err := t.s.logSource.Open(t.stream.Context(), wf.Namespace, wf.Name, pod)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return status.Errorf(codes.Internal, "read the log of %s: %v", pod, err)
	}
	defer f.Close()
	return t.send(f, pod, p, final)
}

// send streams the lines of the pod's log f after p.offset, a line (or a
// piece of a long one) an entry. An unfinished last line waits for the
// next round unless final. The first read of a pod honours tailLines.
func (t *logTail) send(f *os.File, pod string, p *podLog, final bool) error {
	if !p.started {
		p.started = true
		if t.q.tail >= 0 {
			off, err := tailOffset(f, t.q.tail, int64(t.q.entry))
			if err != nil {
				return status.Errorf(codes.Internal, "read the log of %s: %v", pod, err)
			}
			p.offset = off
		}
	}
	if _, err := f.Seek(p.offset, io.SeekStart); err != nil {
		return status.Errorf(codes.Internal, "read the log of %s: %v", pod, err)
	}
	r := t.reader(f)
	for t.q.limit <= 0 || p.sent < t.q.limit {
		piece, err := r.ReadSlice('\n')
		read := len(piece)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			if len(piece) == 0 || (!final && len(piece) <= t.q.entry) {
				return nil // an unfinished line: the next round sends it whole
			}
		case err != nil:
			return status.Errorf(codes.Internal, "read the log of %s: %v", pod, err)
		}
		if len(bytes.TrimSuffix(piece, []byte{'\n'})) > t.q.entry {
			// A piece of a long line: end it before a split character.
			piece = piece[:runeStart(piece[:t.q.entry])]
		}
		if t.q.limit > 0 && int64(len(piece)) > t.q.limit-p.sent {
			piece = piece[:t.q.limit-p.sent]
		}
		p.offset += int64(len(piece))
		p.sent += int64(len(piece))
		text := strings.TrimRight(string(piece), "\r\n")
		if !utf8.ValidString(text) { // a proto string must be UTF-8
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		if len(piece) < read {
			// The reader holds what follows the piece: read on from it.
			if _, err := f.Seek(p.offset, io.SeekStart); err != nil {
				return status.Errorf(codes.Internal, "read the log of %s: %v", pod, err)
			}
			r.Reset(f)
		}
		if t.q.grep != nil && !t.q.grep.MatchString(text) {
			continue
		}
		if err := t.stream.Send(&workflow.LogEntry{Content: text, PodName: pod}); err != nil {
			return err
		}
	}
	return nil
}

// reader is the request's one read buffer, reset to read f. It holds a
// whole entry and its newline.
func (t *logTail) reader(f *os.File) *bufio.Reader {
	if t.r == nil {
		t.r = bufio.NewReaderSize(f, t.q.entry+1)
	} else {
		t.r.Reset(f)
	}
	return t.r
}

// runeStart is where the last UTF-8 character of b starts when b ends
// inside it, else len(b): a piece cut there splits no character. Bytes
// that are not UTF-8 are left as they are.
func runeStart(b []byte) int {
	for i := len(b) - 1; i > 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// tailOffset returns where the last n lines of f start, reading back from
// the end no further than they reach. A line longer than piece counts as
// ceil(len/piece) lines, as the reader sends it in that many pieces, so
// the scan never goes back more than n*piece bytes past the last newline
// it found: the last lines of a log that is one 1 GB line are found in a
// read of n*piece bytes. When the start falls inside a line, it is moved
// past any UTF-8 continuation bytes there.
func tailOffset(f *os.File, n, piece int64) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if n <= 0 || size == 0 {
		return size, nil
	}
	buf := make([]byte, 64<<10)
	lineEnd := size // the end of the last line, its newline left out
	if last, err := readByte(f, size-1); err != nil {
		return 0, err
	} else if last == '\n' {
		lineEnd--
	}
	for count := int64(0); ; {
		need := n - count
		floor := int64(0)
		if lineEnd > need*piece {
			floor = lineEnd - need*piece
		}
		nl, err := lastNewline(f, floor, lineEnd, buf)
		if err != nil {
			return 0, err
		}
		if nl < 0 {
			if floor == 0 {
				return 0, nil // the whole log is in the last n lines
			}
			return runeAligned(f, floor, lineEnd)
		}
		count += max(1, (lineEnd-nl-1+piece-1)/piece)
		if count >= n {
			return nl + 1, nil
		}
		lineEnd = nl
	}
}

// lastNewline returns the offset of the last newline in f[from:to], or -1.
func lastNewline(f *os.File, from, to int64, buf []byte) (int64, error) {
	for to > from {
		step := min(int64(len(buf)), to-from)
		if _, err := f.ReadAt(buf[:step], to-step); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:step], '\n'); i >= 0 {
			return to - step + int64(i), nil
		}
		to -= step
	}
	return -1, nil
}

// runeAligned moves off forward past UTF-8 continuation bytes (at most
// three, and never to end or beyond).
func runeAligned(f *os.File, off, end int64) (int64, error) {
	var b [utf8.UTFMax - 1]byte
	n, err := f.ReadAt(b[:min(int64(len(b)), end-off)], off)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	for i := 0; i < n && !utf8.RuneStart(b[i]); i++ {
		off++
	}
	return off, nil
}

func readByte(f *os.File, off int64) (byte, error) {
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return b[0], nil
}

// stepsInOrder lists the nodes that have a log, in the order they started.
// A node's startedAt has whole seconds only: steps that started in the
// same second are in the order their logs were last written (lastWrite),
// so that a step that ran after another, within that second, comes after
// it, as Argo's lines sorted by time do.
func stepsInOrder(wf *v1alpha1.Workflow, lastWrite func(*v1alpha1.NodeStatus) time.Time) []v1alpha1.NodeStatus {
	var nodes []v1alpha1.NodeStatus
	for _, n := range wf.Status.Nodes {
		if n.Type == v1alpha1.NodeTypePod {
			nodes = append(nodes, n)
		}
	}
	// Only ties ask for a log's time: a stat of every log on every round
	// of a followed big workflow would cost more than the lines.
	written := map[string]time.Time{}
	when := func(n *v1alpha1.NodeStatus) time.Time {
		t, ok := written[n.ID]
		if !ok {
			t = lastWrite(n)
			written[n.ID] = t
		}
		return t
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, b := &nodes[i], &nodes[j]
		if !a.StartedAt.Equal(&b.StartedAt) {
			return a.StartedAt.Before(&b.StartedAt)
		}
		if wa, wb := when(a), when(b); !wa.Equal(wb) {
			return wa.Before(wb)
		}
		return a.ID < b.ID
	})
	return nodes
}
