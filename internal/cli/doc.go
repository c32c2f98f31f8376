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
// on the data directory's store over an in-memory listener ("direct mode"),
// so both modes are one code path. Direct mode runs no workflows. Talking to
// a server is TLS by default, as argo's CLI; the local server's certificate
// is pinned from server.json. servertls.go holds braid server's TLS flags.
//
// Layout: one file per verb or family (submit.go, list.go, get.go, logs.go,
// watch.go for watch/wait/--wait/--watch/--log, delete.go, actions.go for
// suspend/resume/stop/terminate/node, retry.go for retry/resubmit,
// lint.go + lint_remote.go, version.go); template.go, clustertemplate.go,
// cron.go and archive.go for the other kinds, apply.go for `braid apply -f`
// (kubectl's apply for braid kinds), kinds.go for what they share; run.go,
// server.go and embedded.go run workflows in this process.
//
// Each command parses its flags into a value, calls the packages below it
// and prints. The package owns no logic of its own beyond formatting and
// exit codes; the environment is read through the getenv given to newRoot.
package cli
