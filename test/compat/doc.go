// Package compat drives braid server with Argo's own Go client
// (github.com/argoproj/argo-workflows/v4, pkg/apiclient), over gRPC and
// over HTTP/1, as the argo CLI and the tools built on the client do. It is a
// module of its own so that Argo's dependencies never enter braid's module;
// it uses the client only as a test client on loopback.
//
// The braid binary under test is $BRAID_BIN, or one built from the
// repository into a temporary directory.
package compat
