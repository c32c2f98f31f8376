// Package rest describes argo-server's REST routes: each RPC's HTTP method,
// path template and body, as its google.api.http rule says. The generated
// route tables (routes.gen.go in each service package) are built from the
// .proto files, and both the server's gateway and the client's HTTP/1
// transport read them, so a route is written in one place.
//
// It imports the standard library and gRPC's status codes only. Like all of
// pkg/, it must not import internal/; the generated service packages, the
// client and the server's gateway import it.
package rest
