package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A panic in a handler is recovered at the boundary of its request: the
// gRPC interceptors and the HTTP middleware below log it with its stack,
// count it, and fail that request alone (codes.Internal; HTTP 500 in
// argo-server's error JSON). The server stays up. The panic value goes to
// the log, not to the client.

// panicGuard recovers handler panics and counts them.
type panicGuard struct {
	log    *slog.Logger
	panics atomic.Int64
}

// Panics is how many handler panics the server has recovered since New.
// For metrics.
func (s *Server) Panics() int64 { return s.guard.panics.Load() }

// recovered logs and counts a recovered panic and returns the client's
// message.
func (g *panicGuard) recovered(kind, what string, v any) string {
	g.panics.Add(1)
	g.log.Error("recovered a panic", "kind", kind, "handler", what, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	return "internal error: the server failed to handle " + what + " (see the server log)"
}

// unary recovers a panic of a unary gRPC handler (or of an interceptor
// after it) into codes.Internal.
func (g *panicGuard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if v := recover(); v != nil {
			resp, err = nil, status.Error(codes.Internal, g.recovered("grpc", info.FullMethod, v))
		}
	}()
	return h(ctx, req)
}

// stream recovers a panic of a streaming gRPC handler into codes.Internal.
func (g *panicGuard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = status.Error(codes.Internal, g.recovered("grpc", info.FullMethod, v))
		}
	}()
	return h(srv, ss)
}

// http wraps the whole HTTP side: a panic of a handler (the REST gateway,
// the streams, the artifact routes) becomes a 500 with a short message,
// or, when the response has begun, the end of that response.
// http.ErrAbortHandler, net/http's own way to abort a response, passes.
func (g *panicGuard) http(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &startedWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			msg := g.recovered("http", r.Method+" "+r.URL.Path, v)
			if rw.started {
				panic(http.ErrAbortHandler) // a partial response: cut the connection, quietly
			}
			writeError(w, codes.Internal, msg)
		}()
		next.ServeHTTP(rw, r)
	})
}

// startedWriter notes whether the response has begun. Unwrap lets
// http.ResponseController reach the connection (flush, deadlines, hijack).
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (w *startedWriter) WriteHeader(code int) {
	if code >= 200 {
		w.started = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *startedWriter) Write(b []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(b)
}

// Flush serves callers that assert http.Flusher.
func (w *startedWriter) Flush() {
	w.started = true
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *startedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
