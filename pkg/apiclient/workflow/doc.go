// Package workflow is generated from api/proto/braid/workflow/workflow.proto by
// hack/protogen.sh: argo-server's WorkflowService (the same proto package, RPCs,
// field numbers and REST rules as Argo's workflow.proto). workflow.msg.go holds the
// messages as plain Go structs (protoc-gen-braid), routes.gen.go their REST
// routes, and workflow_grpc.pb.go the gRPC client and server
// (protoc-gen-go-grpc). Do not edit them; change the proto and regenerate.
//
// Like all of pkg/, it must not import braid's internal packages.
package workflow
