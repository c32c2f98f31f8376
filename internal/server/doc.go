// Package server is braid's API server: argo-server's gRPC services (in
// Argo's protobuf wire format: pkg/wirecodec) and the same REST paths and
// JSON under /api/v1 (internal/server/gateway, from the generated route
// tables), served together on one listener split with cmux, plus /healthz
// and /readyz. api/README.md says how one set of Go types defines both.
//
// The server stores and changes objects; it never runs a step. The
// controller's Manager (wired by internal/app) watches the same store and runs
// what the server writes: a create, a retry that reopens a workflow, a
// resume that settles a suspend node.
//
// Every request passes Options.Auth (internal/server/auth) before any
// handler: the gRPC interceptors, and for HTTP the browser checks, then
// authentication, then the gateway's authorization middleware (by the RPC
// each route serves). Handlers that learn a namespace only after a lookup
// (archived workflows and artifacts named by uid) call auth.Check. Only
// /healthz, /readyz and /oauth2/ are public, and the web UI's pages and
// files (Options.UI, internal/ui): every GET outside the server's own
// paths, whose data comes from the API and so asks for a credential.
//
// A panic in a handler is recovered at the request's boundary
// (recover.go): the first gRPC interceptors, and a middleware around the
// whole HTTP side. It is logged with its stack, counted (Server.Panics),
// and fails that request alone: codes.Internal, or HTTP 500 with
// argo-server's error JSON. /healthz is 200 while the process serves;
// /readyz is 503 until Options.Ready (the controller's start-up recovery)
// returns nil.
//
// Layout:
//   - server.go: Options, New, Serve, cmux, the gateway, the error mapping
//     of ARGO-API §3.4; tls.go: TLS under cmux (HSTS, HTTP/2 for REST);
//   - workflow.go, create.go: WorkflowService create, get, list, delete and
//     lint, and admission (names, validation of the typed object);
//   - actions.go: retry, resubmit, suspend, resume, stop, terminate and set,
//     each a pure internal/wfops change written under optimistic concurrency;
//   - submit.go: SubmitWorkflow from a WorkflowTemplate,
//     ClusterWorkflowTemplate or CronWorkflow;
//   - watch.go, logs.go: the streaming RPCs; nodewatch.go: braid's
//     WatchWorkflowNodes (a snapshot, then only the nodes that changed, for
//     the UI); steplogs.go: a step's raw log with HTTP ranges
//     (/step-logs/); cronbackfill.go: braid's BackfillCronWorkflow;
//   - stream.go serves streams over
//     REST as SSE or NDJSON (ARGO-API §3), calling the services directly;
//   - crud.go, template.go, clustertemplate.go, cron.go: the other kinds;
//   - archive.go, event.go: the archive and workflow event bindings;
//   - liststream.go, getstream.go: REST lists and gets written as they are
//     read: a list with no limit is read from the store in pages (in Argo's
//     order, by index) and streamed item by item, a workflow's nodes one by
//     one, so neither holds the whole response; bodylimit.go: request bodies
//     over Kubernetes' 3 MiB get 413;
//   - logs.go: logs read back from the end of the file for tailLines and
//     limitBytes, and cut into entries of at most 256 KiB; a step's log is
//     opened through the StepLogs interface declared there, which each
//     runtime implements and the wiring sets (Options.StepLogs);
//   - recover.go: the panic boundaries;
//   - synclimits.go: Argo v4's SyncService (semaphore limits as ConfigMap
//     keys or database rows) over Options.SyncLimits;
//   - info.go: InfoService (version, info, userinfo); convert.go: the REST
//     JSON of objects (as it was when they travelled as Structs) and the
//     `fields` filter.
//
// It uses the store through the small Store interface declared here, and
// what a store may offer on top of it (an archive, counts, node deltas,
// partial status writes) as typed Options.Capabilities, which the wiring
// (internal/app) sets: a nil one is off, and the server never looks for
// one on the Store by type assertion. It uses internal/spec to validate.
//
// # Must not import
//
// The engine, a runtime, the executor, a concrete store
// (internal/store/sqlite, kube, postgres), the printer, the controller
// (only internal/controller/cron, for its backfill functions), the CLI or
// internal/app. hack/lintarch checks this.
package server
