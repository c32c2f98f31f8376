// Package event is generated from api/proto/braid/event/event.proto by
// hack/protogen.sh: argo-server's EventService (the same proto package, RPCs,
// field numbers and REST rules as Argo's event.proto). event.msg.go holds the
// messages as plain Go structs (protoc-gen-braid), routes.gen.go their REST
// routes, and event_grpc.pb.go the gRPC client and server
// (protoc-gen-go-grpc). Do not edit them; change the proto and regenerate.
//
// Like all of pkg/, it must not import braid's internal packages.
package event
