// Package workflowtemplate is generated from api/proto/braid/workflowtemplate/workflowtemplate.proto by
// hack/protogen.sh: argo-server's WorkflowTemplateService (the same package, RPCs, REST
// paths and JSON as Argo's workflow-template.proto), its gRPC client and server, and
// its grpc-gateway handlers. Do not edit the *.pb.go files.
package workflowtemplate
