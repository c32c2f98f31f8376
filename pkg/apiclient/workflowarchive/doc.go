// Package workflowarchive is generated from api/proto/braid/workflowarchive/workflowarchive.proto by
// hack/protogen.sh: argo-server's ArchivedWorkflowService (the same package, RPCs, REST
// paths and JSON as Argo's workflow-archive.proto), its gRPC client and server, and
// its grpc-gateway handlers. Do not edit the *.pb.go files.
package workflowarchive
