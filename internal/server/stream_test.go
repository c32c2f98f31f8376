package server

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient/workflow"
)

// runStream runs a fake service method on a restStream over a recorder.
func runStream(t *testing.T, sse bool, keepAlive time.Duration, fn func(grpc.ServerStreamingServer[workflow.LogEntry]) error) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	rs := newRESTStream(context.Background(), rec, sse, keepAlive)
	rs.finish(fn(&grpc.GenericServerStream[workflow.LogEntry, workflow.LogEntry]{ServerStream: rs}))
	return rec
}

func TestStreamFraming(t *testing.T) {
	two := func(s grpc.ServerStreamingServer[workflow.LogEntry]) error {
		if err := s.Send(&workflow.LogEntry{Content: "hello 1", PodName: "p1"}); err != nil {
			return err
		}
		return s.Send(&workflow.LogEntry{PodName: "p2"}) // empty content is left out
	}
	failAfterOne := func(s grpc.ServerStreamingServer[workflow.LogEntry]) error {
		if err := s.Send(&workflow.LogEntry{Content: "x", PodName: "p"}); err != nil {
			return err
		}
		return status.Error(codes.Internal, "boom")
	}
	failFirst := func(grpc.ServerStreamingServer[workflow.LogEntry]) error {
		return status.Error(codes.NotFound, `workflows.argoproj.io "x" not found`)
	}
	openEmpty := func(s grpc.ServerStreamingServer[workflow.LogEntry]) error { return s.SendHeader(nil) }
	const errLine = `{"error":{"grpc_code":13,"http_code":500,"message":"boom","http_status":"Internal Server Error"}}`
	tests := []struct {
		name        string
		sse         bool
		fn          func(grpc.ServerStreamingServer[workflow.LogEntry]) error
		status      int
		contentType string
		nosniff     bool
		body        string
	}{
		{name: "sse", sse: true, fn: two, status: 200, contentType: "text/event-stream", nosniff: true,
			body: "data: {\"result\":{\"content\":\"hello 1\",\"podName\":\"p1\"}} \n\n\n" +
				"data: {\"result\":{\"podName\":\"p2\"}} \n\n\n"},
		{name: "ndjson", fn: two, status: 200, contentType: "application/json",
			body: "{\"result\":{\"content\":\"hello 1\",\"podName\":\"p1\"}}\n{\"result\":{\"podName\":\"p2\"}}\n"},
		{name: "sse error mid-stream", sse: true, fn: failAfterOne, status: 200, contentType: "text/event-stream", nosniff: true,
			body: "data: {\"result\":{\"content\":\"x\",\"podName\":\"p\"}} \n\n\ndata: " + errLine + " \n\n\n"},
		{name: "ndjson error mid-stream", fn: failAfterOne, status: 200, contentType: "application/json",
			body: "{\"result\":{\"content\":\"x\",\"podName\":\"p\"}}\n" + errLine + "\n"},
		{name: "sse error first", sse: true, fn: failFirst, status: 404, contentType: "application/json",
			body: `{"code":5,"message":"workflows.argoproj.io \"x\" not found"}` + "\n"},
		{name: "ndjson error first", fn: failFirst, status: 404, contentType: "application/json",
			body: `{"code":5,"message":"workflows.argoproj.io \"x\" not found"}` + "\n"},
		{name: "empty stream", sse: true, fn: openEmpty, status: 200, contentType: "text/event-stream", nosniff: true},
		{name: "nothing sent", fn: func(grpc.ServerStreamingServer[workflow.LogEntry]) error { return nil }, status: 200, contentType: "application/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := runStream(t, tc.sse, 0, tc.fn)
			if rec.Code != tc.status {
				t.Errorf("status = %d, want %d", rec.Code, tc.status)
			}
			if got := rec.Header().Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
			}
			if got := rec.Header().Get("X-Content-Type-Options") == "nosniff"; got != tc.nosniff {
				t.Errorf("nosniff = %v, want %v", got, tc.nosniff)
			}
			if got := rec.Body.String(); got != tc.body {
				t.Errorf("body:\n got %q\nwant %q", got, tc.body)
			}
		})
	}
}

func TestStreamKeepAlive(t *testing.T) {
	rec := runStream(t, true, 5*time.Millisecond, func(s grpc.ServerStreamingServer[workflow.LogEntry]) error {
		if err := s.SendHeader(nil); err != nil {
			return err
		}
		time.Sleep(40 * time.Millisecond)
		return s.Send(&workflow.LogEntry{Content: "late"})
	})
	body := rec.Body.String()
	const last = "data: {\"result\":{\"content\":\"late\"}} \n\n\n"
	if !strings.HasSuffix(body, last) {
		t.Fatalf("body %q does not end with the message", body)
	}
	alive := strings.TrimSuffix(body, last)
	if n := strings.Count(alive, ":\n"); n < 2 || alive != strings.Repeat(":\n", n) {
		t.Errorf("before the message: %q, want several \":\\n\"", alive)
	}
	// NDJSON never gets keep-alives.
	rec = runStream(t, false, 5*time.Millisecond, func(s grpc.ServerStreamingServer[workflow.LogEntry]) error {
		if err := s.SendHeader(nil); err != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
		return nil
	})
	if rec.Body.Len() != 0 {
		t.Errorf("ndjson body = %q, want empty", rec.Body.String())
	}
}

// A client that went away is not sent an error frame.
func TestStreamCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rec := httptest.NewRecorder()
	rs := newRESTStream(ctx, rec, true, 0)
	if err := rs.SendHeader(nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	rs.finish(status.FromContextError(ctx.Err()).Err())
	if rec.Body.Len() != 0 {
		t.Errorf("body = %q, want empty", rec.Body.String())
	}
	if err := rs.SendHeader(nil); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("second SendHeader: %v", err)
	}
}
