// Package event is generated from api/proto/braid/event/event.proto by
// hack/protogen.sh: argo-server's EventService (the same package, RPCs, REST
// paths and JSON as Argo's event.proto), its gRPC client and server, and
// its grpc-gateway handlers. Do not edit the *.pb.go files.
package event
