// Package apiclient holds what a Go client of braid's API needs. Its
// packages workflow, workflowtemplate, clusterworkflowtemplate,
// cronworkflow, workflowarchive, event, info and sync are generated from
// api/proto by hack/protogen.sh: each holds its messages as plain Go
// structs whose objects are the typed pkg/apis/v1alpha1 values
// (<svc>.msg.go, protoc-gen-braid), its REST routes (routes.gen.go, read by
// the server's gateway and the HTTP/1 client; Routes gathers them all) and
// its gRPC client and server (<svc>_grpc.pb.go). The messages travel over gRPC in Argo's wire
// format through pkg/wirecodec, and over REST as encoding/json writes them.
//
// Package rest binds REST requests (query and path) to those messages and
// back; package client connects to a server over gRPC or HTTP/1.
//
// Regenerate with hack/protogen.sh; generated files are committed.
//
// Like all of pkg/, apiclient and its packages must not import braid's
// internal packages: the server imports them, never the other way round.
package apiclient
