// Package clusterworkflowtemplate is generated from api/proto/braid/clusterworkflowtemplate/clusterworkflowtemplate.proto by
// hack/protogen.sh: argo-server's ClusterWorkflowTemplateService (the same proto package, RPCs,
// field numbers and REST rules as Argo's cluster-workflow-template.proto). clusterworkflowtemplate.msg.go holds the
// messages as plain Go structs (protoc-gen-braid), routes.gen.go their REST
// routes, and clusterworkflowtemplate_grpc.pb.go the gRPC client and server
// (protoc-gen-go-grpc). Do not edit them; change the proto and regenerate.
//
// Like all of pkg/, it must not import braid's internal packages.
package clusterworkflowtemplate
