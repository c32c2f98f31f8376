// Package cli holds braid's cobra commands. They mirror the argo CLI: the same
// verbs, the same main flags and the same output formats (internal/printer),
// so that an Argo user's habits carry over.
//
// The workflow commands (submit, list, get, logs, watch, wait, delete,
// suspend, resume, stop, terminate, retry, resubmit, node set, and lint and
// version when a server is in use) talk to a server through the generated
// clients of pkg/apiclient (pkg/apiclient/client: gRPC, or REST with
// --argo-http1). conn.go picks the server: --argo-server, ARGO_SERVER,
// BRAID_SERVER, then the server.json a running `braid server` records in
// the data directory; with none, direct.go starts the API server in-process
// on the data directory's store over an in-memory listener ("direct mode",
// app.StartDirect),
// so both modes are one code path. Direct mode runs no workflows. Talking to
// a server is TLS by default, as argo's CLI; the local server's certificate
// is pinned from server.json. servertls.go holds braid server's TLS flags.
//
// Layout: one file per verb or family (submit.go, list.go, get.go, logs.go,
// watch.go for watch/wait/--wait/--watch/--log, delete.go, actions.go for
// suspend/resume/stop/terminate/node, retry.go for retry/resubmit,
// lint.go + lint_remote.go, version.go); template.go, clustertemplate.go,
// cron.go and archive.go for the other kinds, apply.go for `braid apply -f`
// (kubectl's apply for braid kinds), kinds.go for what they share and
// kindcmd.go for the verbs they share (create, get, list, delete, lint,
// update); run.go,
// server.go and controller.go run workflows in this process, and
// backend.go holds the flags that choose the backend.
//
// The wiring (opening the store, the runtime, the controller, the server's
// options, the archive, the semaphore limits, leader election) lives in
// internal/app: run, server and controller turn their flags into its
// configs, call it and print. Each command parses its flags into a value,
// calls the packages below it and prints. The package owns no logic of its
// own beyond formatting and exit codes; the environment is read through the
// getenv given to newRoot.
//
// # Must not import
//
// cli is the top of the tree: it may import any package below it, the
// wiring (internal/app) included, and nothing but cmd/braid imports it.
package cli
