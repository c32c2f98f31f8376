// Package sync is generated from api/proto/braid/sync/sync.proto by
// hack/protogen.sh: argo-server's SyncService (the same proto package, RPCs,
// field numbers and REST rules as Argo's sync.proto). sync.msg.go holds the
// messages as plain Go structs (protoc-gen-braid), routes.gen.go their REST
// routes, and sync_grpc.pb.go the gRPC client and server
// (protoc-gen-go-grpc). Do not edit them; change the proto and regenerate.
//
// Like all of pkg/, it must not import braid's internal packages.
package sync
