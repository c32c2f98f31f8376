// Package clusterworkflowtemplate is generated from api/proto/braid/clusterworkflowtemplate/clusterworkflowtemplate.proto by
// hack/protogen.sh: argo-server's ClusterWorkflowTemplateService (the same package, RPCs, REST
// paths and JSON as Argo's cluster-workflow-template.proto), its gRPC client and server, and
// its grpc-gateway handlers. Do not edit the *.pb.go files.
package clusterworkflowtemplate
