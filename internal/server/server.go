package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/soheilhy/cmux"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/server/gateway"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/version"
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apiclient/info"
	syncapi "github.com/braidwf/braid/pkg/apiclient/sync"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
	"github.com/braidwf/braid/pkg/wirecodec"
)

// Store is what the server needs from a store (internal/store/sqlite and
// internal/store/kube satisfy it; internal/app checks that they do).
type Store interface {
	Get(ctx context.Context, kind store.Kind, namespace, name string) (store.Object, error)
	List(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) ([]store.Object, string, error)
	Create(ctx context.Context, obj store.Object) error
	// Update fails with store.ErrConflict on a stale resourceVersion.
	Update(ctx context.Context, obj store.Object) error
	Delete(ctx context.Context, kind store.Kind, namespace, name string) error
	// Watch streams changes from now on; a closed channel means "watch again".
	Watch(ctx context.Context, kind store.Kind, namespace string) (<-chan store.Event, error)
}

// Compile-time guards.
var (
	_ workflow.WorkflowServiceServer = (*workflowServer)(nil)
	_ info.InfoServiceServer         = (*infoServer)(nil)

	_ workflowtemplate.WorkflowTemplateServiceServer               = (*templateServer)(nil)
	_ clusterworkflowtemplate.ClusterWorkflowTemplateServiceServer = (*clusterTemplateServer)(nil)
	_ cronworkflow.CronWorkflowServiceServer                       = (*cronServer)(nil)
	_ workflowarchive.ArchivedWorkflowServiceServer                = (*archiveServer)(nil)
	_ event.EventServiceServer                                     = (*eventServer)(nil)
)

// DefaultMaxRequestBytes bounds a request body (REST) or message (gRPC):
// Kubernetes' bound (bodylimit.go).
const DefaultMaxRequestBytes = KubernetesMaxRequestBytes

// MaxEventBytes bounds the body of an event (POST /api/v1/events/...), as
// argo-server's 2 MB.
const MaxEventBytes = 2 << 20

// Capabilities are what a store may offer on top of Store. Each one is
// optional: a nil field turns off what needs it. The wiring
// (internal/app) fills them in from what it opened; the server never looks
// for them on the Store by type assertion.
type Capabilities struct {
	// Archive serves ArchivedWorkflowService, GetWorkflow of a workflow
	// that only the archive holds, and the artifacts of archived
	// workflows; nil: every archive RPC answers Unimplemented.
	Archive Archive
	// Counter gives list pages metadata.remainingItemCount; nil leaves it
	// out.
	Counter Counter
	// NodeDeltas lets WatchWorkflowNodes read only the nodes that changed;
	// nil: each change reads the whole workflow and compares every node.
	NodeDeltas NodeDeltas
	// StatusUpdater writes an action's status change with only the nodes
	// it changed, leaving the stored spec as it is; nil: a full Update.
	StatusUpdater StatusUpdater
}

// Options configure a Server.
type Options struct {
	Store Store
	// Capabilities are the store's optional extras; the zero value has
	// none.
	Capabilities
	Logger *slog.Logger // nil: discard
	// StepLogs opens the kept log of a step (the runtime's: local.LogFiles,
	// kube.PodLogs); nil: the server serves no logs.
	StepLogs StepLogs
	// Artifacts are the drivers the artifact download routes read with;
	// nil: no artifact routes.
	Artifacts *artifact.Drivers
	// ForgetWorkflow removes what the runtime keeps of a workflow (its
	// step logs) once a deleted archived workflow leaves neither a live
	// nor an archived one of its name; nil keeps it.
	ForgetWorkflow func(namespace, name string) error
	// Version is reported by GetVersion and in the Argo-Version header;
	// zero: version.Get().
	Version version.Info
	// ManagedNamespace is reported by GetInfo ("" when the server serves
	// every namespace).
	ManagedNamespace string
	// MaxRequestBytes bounds request bodies; 0: DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// ShutdownTimeout bounds a graceful stop; 0: 5s.
	ShutdownTimeout time.Duration
	// KeepAlive is the interval of SSE keep-alive comments; 0: 15s.
	KeepAlive time.Duration
	// TLS, when set, serves gRPC and REST over TLS on the one port (as
	// argo-server does by default; internal/server/certs builds it) and adds
	// Strict-Transport-Security to HTTP responses. Nil: plain.
	TLS *tls.Config
	// Auth authenticates and authorizes every gRPC call and HTTP request
	// before a handler runs; nil: auth.ServerOnly() (every caller has the
	// server's rights: direct mode and tests).
	Auth *auth.Gatekeeper
	// HTTPAuth configures the HTTP side of Auth (login, webhooks); the
	// public paths /healthz, /readyz and /oauth2/ are always added.
	HTTPAuth auth.HTTPConfig
	// Browser configures the browser protections (hosts, origins, CORS).
	Browser auth.BrowserConfig
	// SSO serves /oauth2/redirect and /oauth2/callback; nil: no SSO.
	SSO http.Handler
	// UI serves the web UI (internal/ui): every GET that is not one of
	// the server's own paths, without a credential (its pages get their
	// data from the API, which asks for one). Nil: a plain-text page at /.
	UI http.Handler
	// BaseHref is the path browsers reach the UI under ("" is "/"): the
	// path of the cookies that POST /logout deletes.
	BaseHref string
	// Ready reports whether what runs behind the server (the controller's
	// start-up recovery) is done: /readyz answers 503 with the error's
	// message until it returns nil. Nil: ready once serving.
	Ready func() error
	// SyncLimits keeps the semaphore limits the sync service manages
	// (synclimits.go); nil: the service answers Unimplemented.
	SyncLimits SyncLimits
}

// Server serves the API. Create it with New and run it with Serve.
type Server struct {
	opts    Options
	log     *slog.Logger
	grpc    *grpc.Server
	http    http.Handler
	serving atomic.Bool
	// stopping closes when Serve begins to stop: it ends open streams.
	stopping chan struct{}
	stopOnce sync.Once
	guard    *panicGuard // recovers handler panics (recover.go)
}

// New builds a Server: it registers the gRPC services and the REST gateway.
func New(opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("server: Options.Store is required")
	}
	opts = opts.withDefaults()
	s := &Server{opts: opts, log: opts.Logger, stopping: make(chan struct{})}

	wfs := &workflowServer{store: opts.Store, caps: opts.Capabilities, log: opts.Logger, logSource: opts.StepLogs, artifacts: opts.Artifacts}
	infos := &infoServer{version: opts.Version, managedNamespace: opts.ManagedNamespace}
	syncs := &syncServer{limits: opts.SyncLimits}

	s.guard = &panicGuard{log: opts.Logger}
	s.grpc = grpc.NewServer(
		// Argo's wire format for braid's tagged Go types (api/README.md).
		grpc.ForceServerCodecV2(wirecodec.CodecV2{}),
		grpc.MaxRecvMsgSize(int(opts.MaxRequestBytes)),
		grpc.ChainUnaryInterceptor(s.guard.unary, opts.Auth.UnaryInterceptor, s.versionHeader),
		grpc.ChainStreamInterceptor(s.guard.stream, opts.Auth.StreamInterceptor, stopStreams(s.stopping)),
	)
	svcs := newKindServers(opts.Store, opts.Archive, opts.Logger)
	svcs.archive.forget = opts.ForgetWorkflow
	workflow.RegisterWorkflowServiceServer(s.grpc, wfs)
	info.RegisterInfoServiceServer(s.grpc, infos)
	syncapi.RegisterSyncServiceServer(s.grpc, syncs)
	svcs.registerGRPC(s.grpc)

	gw, err := s.gateway(wfs, infos, syncs, svcs)
	if err != nil {
		return nil, err
	}
	h, err := auth.Browser(opts.Auth.HTTP(s.mux(gw, wfs), opts.publicPaths()), opts.Browser)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.http = s.guard.http(h)
	return s, nil
}

// withDefaults fills in the options left at their zero values.
func (opts Options) withDefaults() Options {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == (version.Info{}) {
		opts.Version = version.Get()
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 5 * time.Second
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = keepAliveInterval
	}
	if opts.Auth == nil {
		opts.Auth = auth.ServerOnly()
	}
	return opts
}

// publicPaths is HTTPAuth with the paths that are always public.
func (opts Options) publicPaths() auth.HTTPConfig {
	hc := opts.HTTPAuth
	hc.Public = append(hc.Public, "/healthz", "/readyz", "/oauth2/")
	if opts.UI != nil {
		hc.Open = uiRequest
	}
	return hc
}

// serverPaths are the paths the server answers itself; every other GET is
// a page or a file of the UI.
var serverPaths = []string{"/api/", "/artifacts/", "/input-artifacts/", "/artifacts-by-uid/",
	"/input-artifacts-by-uid/", "/artifact-files/", "/step-logs/", "/oauth2/", "/healthz", "/readyz"}

// uiRequest says whether r asks for the UI (or to log out), which needs no
// credential.
func uiRequest(r *http.Request) bool {
	if r.Method == http.MethodPost && r.URL.Path == "/logout" {
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	for _, p := range serverPaths {
		if strings.HasPrefix(r.URL.Path, p) {
			return false
		}
	}
	return true
}

// gateway is the REST side of the services: the generated handlers, then
// the streams and the streamed lists and gets that replace some of them.
func (s *Server) gateway(wfs *workflowServer, infos *infoServer, syncs *syncServer, svcs *kindServers) (*runtime.ServeMux, error) {
	opts := s.opts
	gw := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &compactJSONPb{runtime.JSONPb{
			// Argo encodes responses with encoding/json on types without
			// omitempty (Version, InfoResponse): emit every field.
			MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
		}}),
		runtime.WithErrorHandler(errorHandler),
		runtime.WithMetadata(eventMetadata),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		// Match on the escaped path: a %2F stays inside its segment (a
		// name "a/b" is a name, not two segments that may match another
		// route) and reaches the handler still escaped.
		runtime.WithUnescapingMode(runtime.UnescapingModeAllExceptReserved),
		runtime.WithMiddlewares(opts.Auth.GatewayMiddleware(auth.GatewayRoutes())),
	)
	header := func(h http.Header) { h.Set("Grpc-Metadata-Argo-Version", opts.Version.Version) }
	gwOpts := gateway.Options{Header: header, Marshal: restJSON}
	if err := gateway.Register(gw, &workflow.WorkflowService_ServiceDesc, wfs, workflow.Routes, gwOpts); err != nil {
		return nil, fmt.Errorf("server: register workflow gateway: %w", err)
	}
	if err := gateway.Register(gw, &info.InfoService_ServiceDesc, infos, info.Routes, gwOpts); err != nil {
		return nil, fmt.Errorf("server: register info gateway: %w", err)
	}
	if err := gateway.Register(gw, &syncapi.SyncService_ServiceDesc, syncs, syncapi.Routes, gwOpts); err != nil {
		return nil, fmt.Errorf("server: register sync gateway: %w", err)
	}
	if err := svcs.registerGateway(gw, gwOpts); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	// After the generic handlers, whose routes these replace.
	if err := registerStreams(gw, wfs, s.stopping, opts.KeepAlive); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := registerListStream(gw, wfs, svcs.archive, header); err != nil { // the lists, streamed (liststream.go)
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := registerGetStream(gw, wfs, svcs.archive, header); err != nil { // one workflow, streamed (getstream.go)
		return nil, fmt.Errorf("server: %w", err)
	}
	return gw, nil
}

// mux is the HTTP side before authentication: the health checks, the API
// under its body limits, the artifact downloads and the landing page.
func (s *Server) mux(gw *runtime.ServeMux, wfs *workflowServer) *http.ServeMux {
	opts := s.opts
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", s.readyz)
	limit := opts.MaxRequestBytes
	mux.Handle("/api/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/events/") {
			r.Body = http.MaxBytesReader(w, r.Body, min(limit, MaxEventBytes)) // a 400, as argo-server's
		} else if !limitBody(w, r, limit) { // a 413, as Kubernetes' (bodylimit.go)
			return
		}
		gw.ServeHTTP(w, r)
	}))
	if opts.Artifacts != nil {
		(&artifactServer{wf: wfs, drivers: opts.Artifacts}).register(mux)
	}
	mux.HandleFunc("GET /step-logs/{ns}/{wf}/{pod}", wfs.stepLogs) // ranged reads of one step's log (steplogs.go)
	if opts.UI != nil {
		mux.Handle("/", opts.UI)
		mux.HandleFunc("POST /logout", s.logout)
	} else {
		mux.HandleFunc("GET /{$}", landing(opts.Version.Version))
	}
	if opts.SSO != nil {
		mux.Handle("/oauth2/", opts.SSO)
	}
	return mux
}

// logout deletes the login cookies: the token's (path /) and SSO's (the
// base href).
func (s *Server) logout(w http.ResponseWriter, _ *http.Request) {
	paths := []string{"/"}
	if b := s.opts.BaseHref; b != "" && b != "/" {
		paths = append(paths, b)
	}
	for _, p := range paths {
		http.SetCookie(w, &http.Cookie{Name: auth.CookieName, Value: "", Path: p, MaxAge: -1, HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: s.opts.TLS != nil})
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// landing is the page at / when the server has no UI.
func landing(version string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		who := "the server's own identity"
		if id, ok := auth.FromContext(r.Context()); ok && id.Subject != "" {
			who = fmt.Sprintf("%q", id.Subject)
		}
		fmt.Fprintf(w, "braid %s: signed in as %s. The API is under /api/v1/ (try /api/v1/userinfo).\n", version, who)
	}
}

// readyz answers 503 until the server serves and Options.Ready (the
// controller's start-up recovery) returns nil.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if !s.serving.Load() {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	if s.opts.Ready != nil {
		if err := s.opts.Ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	_, _ = w.Write([]byte("ok\n"))
}

// Handler returns the HTTP/1.1 side (REST, /healthz, /readyz) on its own,
// for tests and embedding.
func (s *Server) Handler() http.Handler { return s.http }

// Serve serves gRPC and HTTP/1.1 on l until ctx ends, then stops gracefully
// (bounded by Options.ShutdownTimeout) and closes l. It returns nil after a
// stop caused by ctx, or the error that stopped it.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	scheme := "http"
	if s.opts.TLS != nil { // see tls.go
		scheme, l = "https", tls.NewListener(l, s.opts.TLS)
	}
	m := cmux.New(l)
	grpcL := m.MatchWithWriters(cmux.HTTP2MatchHeaderFieldPrefixSendSettings("content-type", "application/grpc"))
	httpL := m.Match(cmux.Any())
	hs := &http.Server{Handler: s.http, ReadHeaderTimeout: 30 * time.Second}
	if s.opts.TLS != nil {
		httpL = tlsHTTP(hs, httpL)
	}

	errc := make(chan error, 3)
	go func() { errc <- fmt.Errorf("grpc: %w", s.grpc.Serve(grpcL)) }()
	go func() { errc <- fmt.Errorf("http: %w", hs.Serve(httpL)) }()
	go func() { errc <- fmt.Errorf("cmux: %w", m.Serve()) }()
	s.serving.Store(true)
	s.log.Info("serving", "address", l.Addr().String(), "url", scheme+"://"+l.Addr().String())

	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.serving.Store(false)
	s.stopOnce.Do(func() { close(s.stopping) })

	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	_ = hs.Shutdown(sctx)
	stopped := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-sctx.Done():
		s.grpc.Stop()
	}
	m.Close()
	_ = l.Close()
	return err
}

func (s *Server) versionHeader(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	_ = grpc.SetHeader(ctx, metadata.Pairs("argo-version", s.opts.Version.Version))
	return h(ctx, req)
}

// compactJSONPb is the gateway's JSON marshaler with protojson's deliberately
// unstable whitespace removed, so that responses are byte-stable compact JSON
// like argo-server's. Object keys come out sorted (google.protobuf.Struct is a
// map), which JSON clients do not see.
type compactJSONPb struct {
	runtime.JSONPb
}

func (m *compactJSONPb) Marshal(v any) ([]byte, error) {
	b, err := m.JSONPb.Marshal(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b, nil // not expected; protojson's own output is still valid JSON
	}
	return buf.Bytes(), nil
}

// httpStatus maps a gRPC code to the HTTP status argo-server uses (ARGO-API §3.4).
func httpStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.Canceled:
		return http.StatusRequestTimeout
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	default: // Unknown, Internal, DataLoss
		return http.StatusInternalServerError
	}
}

// errorBody is argo-server's error JSON.
type errorBody struct {
	Code    codes.Code `json:"code"`
	Message string     `json:"message"`
}

func writeError(w http.ResponseWriter, c codes.Code, msg string) {
	w.Header().Del("Trailer")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus(c))
	_ = json.NewEncoder(w).Encode(errorBody{Code: c, Message: msg})
}

func errorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if limit, ok := tooLarge(r); ok {
		writeTooLarge(w, limit)
		return
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeError(w, codes.InvalidArgument, fmt.Sprintf("request body is larger than %d bytes", mbe.Limit))
		return
	}
	var hse *runtime.HTTPStatusError // the gateway's own: a malformed path
	if errors.As(err, &hse) {
		c := codes.InvalidArgument // 400: an escape that is not one (%zz)
		if hse.HTTPStatus == http.StatusNotFound {
			c = codes.NotFound
		}
		writeError(w, c, fmt.Sprintf("path %.200q: %v", r.URL.EscapedPath(), hse.Err))
		return
	}
	st := status.Convert(err)
	writeError(w, st.Code(), st.Message())
}

// routingErrorHandler answers a route that does not exist as argo-server's
// gateway does: 501 {"code":12,"message":"Not Implemented"}. A path that
// matches no route because of an escaped character in it (a %2F, which
// never separates segments, or an escaped letter of a fixed segment) is a
// wrong path rather than a missing feature: 404, saying so.
func routingErrorHandler(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	if (httpStatus == http.StatusNotFound || httpStatus == http.StatusMethodNotAllowed) && r.URL.RawPath != "" {
		writeError(w, codes.NotFound, fmt.Sprintf("no route matches %s %.200q: an escaped character (such as %%2F) "+
			"is part of its path segment, never a separator or a route's fixed text", r.Method, r.URL.RawPath))
		return
	}
	if httpStatus == http.StatusNotFound || httpStatus == http.StatusMethodNotAllowed {
		writeError(w, codes.Unimplemented, "Not Implemented")
		return
	}
	runtime.DefaultRoutingErrorHandler(ctx, mux, m, w, r, httpStatus)
}
