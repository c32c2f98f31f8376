// Package client connects a Go program (braid's CLI first) to braid's API,
// or to any argo-server-compatible API, through the generated service
// clients of pkg/apiclient.
//
// Two transports give the same generated interfaces, so that a caller is
// written once:
//
//   - gRPC (the default): grpc.NewClient on the address, with TLS when
//     Options.Secure is set. Every call carries its messages in Argo's
//     protobuf wire format through pkg/wirecodec (CallCodec), set on the
//     connection rather than taken from gRPC's global codec registry, so
//     that the bytes are those argo-server reads and writes.
//   - HTTP/1 (Options.HTTP1, argo's ARGO_HTTP1): a grpc.ClientConnInterface
//     that turns each call into the REST request of the method's generated
//     route (the Routes of every service package, by gRPC method path):
//     rest.Encode puts a bodiless request in the path and the query,
//     rest.Path and rest.BodyTarget put the others in the path and a JSON
//     body. Answers are decoded with encoding/json into the typed reply;
//     server streams (watch, logs) are read as server-sent events ("data:
//     " lines), as argo's HTTP/1 client reads them. An error answer's
//     {"code","message"} body becomes the gRPC status it stands for.
//
// Both use the same TLS settings (Options.Secure): the system's roots or
// CACertFile, InsecureSkipVerify, or CertFingerprint, which pins the server's
// leaf certificate by its SHA-256 instead of verifying a chain (the braid CLI
// pins the self-signed certificate of a local `braid server` this way).
//
// NewConn wraps a connection the caller made itself (for example to an
// in-process server on a bufconn listener).
//
// It imports only the generated packages, pkg/apiclient (the route
// table), pkg/apiclient/rest, pkg/wirecodec and gRPC; it must not import
// braid's internal packages.
package client
