// Package client connects a Go program (braid's CLI first) to braid's API,
// or to any argo-server-compatible API, through the generated service
// clients of pkg/apiclient.
//
// Two transports give the same generated interfaces, so that a caller is
// written once:
//
//   - gRPC (the default): grpc.NewClient on the address, with TLS when
//     Options.Secure is set.
//   - HTTP/1 (Options.HTTP1, argo's ARGO_HTTP1): a grpc.ClientConnInterface
//     that turns each call into the REST request named by the method's
//     google.api.http annotation (read from the generated descriptors) and
//     decodes the JSON answer; server streams (watch, logs) are read as
//     server-sent events ("data: " lines), as argo's HTTP/1 client reads them.
//
// Both use the same TLS settings (Options.Secure): the system's roots or
// CACertFile, InsecureSkipVerify, or CertFingerprint, which pins the server's
// leaf certificate by its SHA-256 instead of verifying a chain (the braid CLI
// pins the self-signed certificate of a local `braid server` this way).
//
// NewConn wraps a connection the caller made itself (for example to an
// in-process server on a bufconn listener).
//
// It imports only the generated packages and gRPC/protobuf; it must not
// import braid's internal packages.
package client
