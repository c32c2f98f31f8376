// Package gateway owns the mapping of argo-server's REST requests to RPC
// calls through a grpc.ServiceDesc: a generic replacement for
// grpc-gateway's generated handlers, for request and response messages
// that are plain Go structs (JSON tags) rather than proto.Message.
//
// Register puts each unary rest.Route of a service on a grpc-gateway
// runtime.ServeMux, so that the mux's options apply as they do to generated
// handlers: its middlewares (authorization by route), unescaping mode,
// routing error handler, metadata annotators (the request's context comes
// from runtime.AnnotateIncomingContext with the route's pattern) and error
// handler (every failure goes through runtime.HTTPError). Forward-response
// options do not apply (they take a proto.Message); Options.Header does
// their work. A request is decoded as argo-server's gateway does:
//
//   - body "*": the JSON body is the request; body "x": the JSON body is
//     field x; either way the query is ignored, and an empty body is an
//     empty request. Unknown JSON fields are ignored; JSON that does not
//     fit is InvalidArgument (400) saying where.
//   - no body: query parameters named by dotted JSON paths
//     (listOptions.labelSelector, deleteOptions.preconditions.uid) set
//     fields through nested structs and pointers; unknown names are
//     ignored, bad values are InvalidArgument naming the parameter.
//   - path parameters ({namespace}, {workflow.metadata.name}) are set last.
//
// The response is the handler's result as encoding/json writes it, 200,
// application/json. Bind (bind.go) is the query and path binding on its
// own; Encode and Path (encode.go) are its inverse, for an HTTP/1 client.
//
// Layout: gateway.go (Register, serving a route), bind.go, encode.go,
// values.go (one parameter's value: parse and format), fields.go (struct
// fields by JSON and proto name).
//
// It must not import pkg/apis or the server's other packages: it knows
// request types only through reflection.
package gateway
