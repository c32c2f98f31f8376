package server

// The REST side of server-streaming RPCs (watch, logs), framed as
// argo-server frames them (ARGO-API §3.1-3.3).
//
// Why a handler of our own rather than grpc-gateway's ForwardResponseStream
// (with a custom marshaler and runtime.WithStreamErrorHandler):
//   - the gateway's in-process registration (RegisterXHandlerServer) does
//     not support streaming at all, and a loopback gRPC client would add a
//     second serialisation and a connection for every stream;
//   - its error chunk is {"error":<google.rpc.Status>}, not argo-server's
//     {"error":{"grpc_code","http_code","message","http_status"}}, and an
//     error before the first message still comes out as such a chunk
//     instead of the plain {"code","message"} body with its HTTP status;
//   - keep-alive comments need a second writer, and ForwardResponseStream's
//     loop owns the ResponseWriter without a lock.
// So the route calls the service method directly with a grpc.ServerStream
// that writes frames: the same service code serves gRPC and REST.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient/rest"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
)

// keepAliveInterval is how often an SSE stream gets a ":\n" comment.
const keepAliveInterval = 15 * time.Second

// sseContentType is both the Accept value that selects SSE framing (exact
// match) and the Content-Type of an SSE response.
const sseContentType = "text/event-stream"

// streamCall is a server-streaming service method.
type streamCall[Req, Resp any] func(*Req, grpc.ServerStreamingServer[Resp]) error

// handleStream registers a REST route for a server-streaming RPC. pattern
// is the RPC's HTTP path; its {variables} fill the request's fields, and
// the query string fills the others, as the gateway does for unary GETs.
// Register it after the generated handlers: the gateway tries the newest
// registration first, so this replaces their "not supported" stub.
func handleStream[Req, Resp any](gw *runtime.ServeMux, stop <-chan struct{}, keepAlive time.Duration, pattern string, call streamCall[Req, Resp]) error {
	h := func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		req := new(Req)
		if err := decodeRequest(req, r, params); err != nil {
			writeError(w, codes.InvalidArgument, status.Convert(err).Message())
			return
		}
		ctx, cancel := stopContext(r.Context(), stop)
		defer cancel()
		rs := newRESTStream(ctx, w, r.Header.Get("Accept") == sseContentType, keepAlive)
		err := call(req, &grpc.GenericServerStream[Req, Resp]{ServerStream: rs})
		rs.finish(err)
	}
	if err := gw.HandlePath(http.MethodGet, pattern, h); err != nil {
		return fmt.Errorf("stream route %s: %w", pattern, err)
	}
	return nil
}

// decodeRequest fills req (a pointer to a request message) from the path
// variables and the query, as the gateway does for unary GETs; a bad value
// is InvalidArgument.
func decodeRequest(req any, r *http.Request, params map[string]string) error {
	if err := r.ParseForm(); err != nil {
		return status.Errorf(codes.InvalidArgument, "%v", err)
	}
	return rest.Bind(req, params, r.Form)
}

// stopContext is ctx, also cancelled when stop closes (the server shuts
// down: streams never go idle, so they are ended rather than waited for).
func stopContext(ctx context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// stopStreams is a gRPC stream interceptor that ends streams when the
// server shuts down, so that GracefulStop does not wait for watches.
func stopStreams(stop <-chan struct{}) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		ctx, cancel := stopContext(ss.Context(), stop)
		defer cancel()
		return h(srv, &ctxStream{ServerStream: ss, ctx: ctx})
	}
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// restStream is a grpc.ServerStream that writes argo-server's frames to an
// HTTP response. The response opens (status 200 and headers) at the first
// message or at SendHeader, whichever comes first; until then an error can
// still be answered with a plain JSON error and its status.
type restStream struct {
	ctx       context.Context
	w         http.ResponseWriter
	rc        *http.ResponseController
	sse       bool
	keepAlive time.Duration
	clock     clock.WithTicker // times the keep-alives; newRESTStream: the machine's

	mu     sync.Mutex // guards everything below and every write to w
	opened bool
	broken error // the first write error: the client is gone
	header metadata.MD
	stop   chan struct{}  // closed by finish: stops the keep-alive loop
	wg     sync.WaitGroup // the keep-alive loop
}

var _ grpc.ServerStream = (*restStream)(nil)

func newRESTStream(ctx context.Context, w http.ResponseWriter, sse bool, keepAlive time.Duration) *restStream {
	return &restStream{ctx: ctx, w: w, rc: http.NewResponseController(w), sse: sse, keepAlive: keepAlive,
		clock: clock.RealClock{}, stop: make(chan struct{})}
}

func (s *restStream) Context() context.Context { return s.ctx }

func (s *restStream) SetHeader(md metadata.MD) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opened {
		return errors.New("stream: headers already sent")
	}
	s.header = metadata.Join(s.header, md)
	return nil
}

func (s *restStream) SendHeader(md metadata.MD) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opened {
		return errors.New("stream: headers already sent")
	}
	s.header = metadata.Join(s.header, md)
	return s.openLocked()
}

func (s *restStream) SetTrailer(metadata.MD) {}

func (s *restStream) RecvMsg(any) error { return io.EOF }

func (s *restStream) SendMsg(m any) error {
	var line []byte
	switch e := m.(type) {
	case *workflow.LogEntry:
		line = logEntryLine(e)
	case *workflow.WorkflowWatchEvent:
		b, err := watchEventLine(e)
		if err != nil {
			return status.Errorf(codes.Internal, "stream: encode %T: %v", m, err)
		}
		line = b
	default: // an object (an Event): as its Struct was written
		b, err := restJSON(m)
		if err != nil {
			return status.Errorf(codes.Internal, "stream: encode %T: %v", m, err)
		}
		line = append(append([]byte(`{"result":`), b...), '}')
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openLocked(); err != nil {
		return err
	}
	return s.frameLocked(line)
}

// watchEventLine is {"result":<e>} as protojson wrote e when its object
// was a Struct: type, then the object's JSON with its keys sorted; empty
// fields left out.
func watchEventLine(e *workflow.WorkflowWatchEvent) ([]byte, error) {
	b := []byte(`{"result":{`)
	sep := ""
	if e.Type != "" {
		b = appendJSONString(append(b, `"type":`...), e.Type)
		sep = ","
	}
	if e.Object != nil {
		obj, err := restJSON(e.Object)
		if err != nil {
			return nil, err
		}
		b = append(append(b, sep+`"object":`...), obj...)
	}
	return append(b, "}}"...), nil
}

// logEntryLine is {"result":<e>} as protojson writes e (proto field names,
// empty fields left out), built directly in one buffer: a log entry may be
// 1 MiB, and protojson then json.Compact take many milliseconds a MiB.
func logEntryLine(e *workflow.LogEntry) []byte {
	b := make([]byte, 0, len(e.Content)+len(e.PodName)+48)
	b = append(b, `{"result":{`...)
	sep := ""
	for _, f := range []struct{ name, value string }{{"content", e.Content}, {"podName", e.PodName}} {
		if f.value == "" {
			continue
		}
		b = append(b, sep+`"`+f.name+`":`...)
		b = appendJSONString(b, f.value)
		sep = ","
	}
	return append(b, "}}"...)
}

// appendJSONString appends s as a JSON string, escaping what JSON requires
// (quote, backslash, control characters) and copying runs of everything
// else as they are; invalid UTF-8 becomes U+FFFD, as protojson requires
// valid UTF-8.
func appendJSONString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// openLocked writes the status and headers once, and starts keep-alives.
func (s *restStream) openLocked() error {
	if s.opened {
		return s.broken
	}
	s.opened = true
	h := s.w.Header()
	for k, vs := range s.header {
		for _, v := range vs {
			h.Add("Grpc-Metadata-"+k, v)
		}
	}
	if s.sse {
		h.Set("Content-Type", sseContentType)
		h.Set("X-Content-Type-Options", "nosniff")
	} else {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Transfer-Encoding", "chunked")
	s.w.WriteHeader(http.StatusOK)
	if err := s.rc.Flush(); err != nil {
		s.broken = fmt.Errorf("stream: flush: %w", err)
		return s.broken
	}
	if s.sse && s.keepAlive > 0 {
		s.wg.Add(1)
		go s.keepAliveLoop(s.clock.NewTicker(s.keepAlive))
	}
	return nil
}

// frameLocked writes one JSON line in the stream's framing and flushes.
func (s *restStream) frameLocked(line []byte) error {
	if s.broken != nil {
		return s.broken
	}
	// Written in parts rather than copied into one frame: a line may be
	// a 1 MiB log entry.
	if s.sse {
		return s.writeLocked([]byte("data: "), line, []byte(" \n\n\n"))
	}
	return s.writeLocked(line, []byte{'\n'})
}

// writeLocked writes parts and flushes them as one.
func (s *restStream) writeLocked(parts ...[]byte) error {
	for _, b := range parts {
		if _, err := s.w.Write(b); err != nil {
			s.broken = fmt.Errorf("stream: write: %w", err)
			return s.broken
		}
	}
	if err := s.rc.Flush(); err != nil {
		s.broken = fmt.Errorf("stream: flush: %w", err)
		return s.broken
	}
	return nil
}

// keepAliveLoop writes a keep-alive comment at every tick of t until the
// stream finishes, and then stops t.
func (s *restStream) keepAliveLoop(t clock.Ticker) {
	defer s.wg.Done()
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.ctx.Done():
			return
		case <-t.C():
			s.mu.Lock()
			err := s.broken
			if err == nil {
				err = s.writeLocked([]byte(":\n"))
			}
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// errStreamFinished marks a stream whose service method has returned.
var errStreamFinished = errors.New("stream: finished")

// streamErrorBody is argo-server's mid-stream error object.
type streamErrorBody struct {
	GRPCCode   codes.Code `json:"grpc_code"`
	HTTPCode   int        `json:"http_code"`
	Message    string     `json:"message"`
	HTTPStatus string     `json:"http_status"`
}

// finish ends the stream after the service method returned err: an error
// before the stream opened is a plain JSON error with its status, one
// after is a final {"error":{...}} frame; a client that went away gets
// nothing more. It must run before the HTTP handler returns.
func (s *restStream) finish(err error) {
	s.mu.Lock()
	defer func() {
		if s.broken == nil {
			s.broken = errStreamFinished // no keep-alive after the last frame
		}
		close(s.stop)
		s.mu.Unlock()
		s.wg.Wait()
	}()
	if err != nil && s.ctx.Err() != nil && (status.Code(err) == codes.Canceled || errors.Is(err, context.Canceled)) {
		err = nil // the client went away or the server stops: nothing to report to anyone
	}
	if !s.opened {
		if err != nil {
			st := status.Convert(err)
			s.opened = true
			writeError(s.w, st.Code(), st.Message())
			return
		}
		_ = s.openLocked()
		return
	}
	if err == nil || s.broken != nil {
		return
	}
	st := status.Convert(err)
	hc := httpStatus(st.Code())
	line, jerr := json.Marshal(map[string]streamErrorBody{"error": {
		GRPCCode: st.Code(), HTTPCode: hc, Message: st.Message(), HTTPStatus: http.StatusText(hc),
	}})
	if jerr != nil {
		return
	}
	_ = s.frameLocked(line)
}

// registerStreams adds the REST routes of WorkflowService's streaming RPCs.
func registerStreams(gw *runtime.ServeMux, wfs *workflowServer, stop <-chan struct{}, keepAlive time.Duration) error {
	for _, err := range []error{
		handleStream[workflow.WatchWorkflowsRequest, workflow.WorkflowWatchEvent](gw, stop, keepAlive,
			"/api/v1/workflow-events/{namespace}", wfs.WatchWorkflows),
		handleStream[workflow.WatchWorkflowNodesRequest, workflow.WorkflowNodeEvent](gw, stop, keepAlive,
			"/api/v1/workflow-node-events/{namespace}/{name}", wfs.WatchWorkflowNodes),
		handleStream[workflow.WatchEventsRequest, corev1.Event](gw, stop, keepAlive,
			"/api/v1/stream/events/{namespace}", wfs.WatchEvents),
		handleStream[workflow.WorkflowLogRequest, workflow.LogEntry](gw, stop, keepAlive,
			"/api/v1/workflows/{namespace}/{name}/log", wfs.WorkflowLogs),
		handleStream[workflow.WorkflowLogRequest, workflow.LogEntry](gw, stop, keepAlive,
			"/api/v1/workflows/{namespace}/{name}/{podName}/log", wfs.PodLogs),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
