package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient/rest"
	. "github.com/braidwf/braid/pkg/apiclient/rest/resttest"
)

// The test service: request structs as the generated ones will be (json
// and protobuf tags, k8s option types), a hand-written ServiceDesc, and an
// implementation that echoes each request back.

// Echo is every method's response: the request it got, and what its
// context carried.
type Echo struct {
	Request  json.RawMessage     `json:"request"`
	Method   string              `json:"method"`
	Pattern  string              `json:"pattern"`
	Metadata map[string][]string `json:"metadata"`
}

type echoServer struct{}

func echo(ctx context.Context, req any) (*Echo, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	e := &Echo{Request: b}
	e.Method, _ = runtime.RPCMethod(ctx)
	e.Pattern, _ = runtime.HTTPPathPattern(ctx)
	md, _ := metadata.FromIncomingContext(ctx)
	e.Metadata = md
	if err := grpc.SetHeader(ctx, metadata.Pairs("x-set-by-handler", "yes")); err != nil {
		return nil, err
	}
	return e, nil
}

func (echoServer) GetThing(ctx context.Context, in *GetThingRequest) (*Echo, error) {
	return echo(ctx, in)
}

func (echoServer) ListThings(ctx context.Context, in *ListThingsRequest) (*Echo, error) {
	return echo(ctx, in)
}

func (echoServer) DeleteThing(ctx context.Context, in *DeleteThingRequest) (*Echo, error) {
	return echo(ctx, in)
}

func (echoServer) CreateThing(ctx context.Context, in *CreateThingRequest) (*Echo, error) {
	return echo(ctx, in)
}

func (echoServer) UpdateThing(ctx context.Context, in *UpdateThingRequest) (*Echo, error) {
	return echo(ctx, in)
}

func (echoServer) Fail(_ context.Context, in *FailRequest) (*Echo, error) {
	return nil, status.Errorf(codes.Code(in.Code), "failed with %d", in.Code)
}

type thingServer interface {
	GetThing(context.Context, *GetThingRequest) (*Echo, error)
	ListThings(context.Context, *ListThingsRequest) (*Echo, error)
	DeleteThing(context.Context, *DeleteThingRequest) (*Echo, error)
	CreateThing(context.Context, *CreateThingRequest) (*Echo, error)
	UpdateThing(context.Context, *UpdateThingRequest) (*Echo, error)
	Fail(context.Context, *FailRequest) (*Echo, error)
}

// unary is a MethodHandler as protoc-gen-go-grpc writes them: decode, then
// call (interceptors are not used by the gateway).
func unary[Req any](call func(s thingServer, ctx context.Context, in *Req) (*Echo, error)) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		in := new(Req)
		if err := dec(in); err != nil {
			return nil, err
		}
		return call(srv.(thingServer), ctx, in)
	}
}

var thingDesc = grpc.ServiceDesc{
	ServiceName: "test.ThingService",
	HandlerType: (*thingServer)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "GetThing", Handler: unary(thingServer.GetThing)},
		{MethodName: "ListThings", Handler: unary(thingServer.ListThings)},
		{MethodName: "DeleteThing", Handler: unary(thingServer.DeleteThing)},
		{MethodName: "CreateThing", Handler: unary(thingServer.CreateThing)},
		{MethodName: "UpdateThing", Handler: unary(thingServer.UpdateThing)},
		{MethodName: "Fail", Handler: unary(thingServer.Fail)},
	},
	Streams: []grpc.StreamDesc{{StreamName: "WatchThings", ServerStreams: true}},
}

func route(method, verb, pattern, body string) rest.Route {
	return rest.Route{Service: thingDesc.ServiceName, Method: method, Verb: verb, Pattern: pattern, Body: body}
}

var thingRoutes = []rest.Route{
	route("GetThing", "GET", "/api/v1/things/{namespace}/{name}", ""),
	route("ListThings", "GET", "/api/v1/things/{namespace}", ""),
	route("DeleteThing", "DELETE", "/api/v1/things/{namespace}/{name}", ""),
	route("CreateThing", "POST", "/api/v1/things/{namespace}", "*"),
	route("UpdateThing", "PUT", "/api/v1/things/{namespace}/{thing.metadata.name}", "thing"),
	route("Fail", "GET", "/api/v1/fail/{code}", ""),
	// Not served here: another service's, and a stream.
	{Service: "other.Service", Method: "Nope", Verb: "GET", Pattern: "/api/v1/other"},
	{Service: thingDesc.ServiceName, Method: "WatchThings", Verb: "GET", Pattern: "/api/v1/things-watch", ServerStreaming: true},
}

// errorBody is argo-server's error JSON, as the server's error handler
// writes it.
type errorBody struct {
	Code    codes.Code `json:"code"`
	Message string     `json:"message"`
}

func writeError(w http.ResponseWriter, c codes.Code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(runtime.HTTPStatusFromCode(c))
	_ = json.NewEncoder(w).Encode(errorBody{Code: c, Message: msg})
}

// testMux is a ServeMux configured as internal/server's gateway(): an
// error handler writing {"code","message"}, a routing error handler (501
// Not Implemented), a metadata annotator, an authorization-like
// middleware, and UnescapingModeAllExceptReserved.
func testMux(t *testing.T) *runtime.ServeMux {
	t.Helper()
	mux := runtime.NewServeMux(
		runtime.WithErrorHandler(func(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, err error) {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeError(w, codes.InvalidArgument, fmt.Sprintf("request body is larger than %d bytes", mbe.Limit))
				return
			}
			st := status.Convert(err)
			writeError(w, st.Code(), st.Message())
		}),
		runtime.WithRoutingErrorHandler(func(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, code int) {
			writeError(w, codes.Unimplemented, fmt.Sprintf("Not Implemented (%d)", code))
		}),
		runtime.WithMetadata(func(_ context.Context, r *http.Request) metadata.MD {
			return metadata.Pairs("x-annotated", r.Method)
		}),
		runtime.WithUnescapingMode(runtime.UnescapingModeAllExceptReserved),
		runtime.WithMiddlewares(func(next runtime.HandlerFunc) runtime.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
				if r.Header.Get("X-Deny") != "" {
					writeError(w, codes.PermissionDenied, "denied for name "+params["name"])
					return
				}
				next(w, r, params)
			}
		}),
	)
	err := Register(mux, &thingDesc, echoServer{}, thingRoutes, Options{Header: func(h http.Header) {
		h.Set("Grpc-Metadata-Argo-Version", "v0.0.0-test")
	}})
	if err != nil {
		t.Fatal(err)
	}
	return mux
}

// serve starts the test mux on 127.0.0.1.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server on %s, want 127.0.0.1", srv.URL)
	}
	return srv.URL
}
