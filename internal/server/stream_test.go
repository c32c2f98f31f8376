package server

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	testclock "k8s.io/utils/clock/testing"

	"github.com/braidwf/braid/internal/testutil"
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

// An SSE stream gets a keep-alive comment at every tick of its clock until
// it finishes; an NDJSON stream never starts the ticker.
func TestStreamKeepAlive(t *testing.T) {
	const every = 15 * time.Second
	clk := testclock.NewFakeClock(time.Now())
	rec := httptest.NewRecorder()
	rs := newRESTStream(context.Background(), rec, true, every)
	rs.clock = clk
	body := func() string {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		return rec.Body.String()
	}
	if err := rs.SendHeader(nil); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		clk.Step(every)
		testutil.Until(t, 10*time.Second, fmt.Sprintf("keep-alive %d", n), func() bool { return body() == strings.Repeat(":\n", n) })
	}
	out := &grpc.GenericServerStream[workflow.LogEntry, workflow.LogEntry]{ServerStream: rs}
	if err := out.Send(&workflow.LogEntry{Content: "late"}); err != nil {
		t.Fatal(err)
	}
	rs.finish(nil) // waits for the keep-alive loop to end
	clk.Step(every)
	const want = ":\n:\n" + "data: {\"result\":{\"content\":\"late\"}} \n\n\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("body %q, want %q", got, want)
	}

	// NDJSON never gets keep-alives.
	clk = testclock.NewFakeClock(time.Now())
	rec = httptest.NewRecorder()
	rs = newRESTStream(context.Background(), rec, false, every)
	rs.clock = clk
	if err := rs.SendHeader(nil); err != nil {
		t.Fatal(err)
	}
	if clk.HasWaiters() {
		t.Error("an NDJSON stream started a keep-alive ticker")
	}
	clk.Step(3 * every)
	rs.finish(nil)
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
