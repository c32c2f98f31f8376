// Package cronworkflow is generated from api/proto/braid/cronworkflow/cronworkflow.proto by
// hack/protogen.sh: argo-server's CronWorkflowService (the same package, RPCs, REST
// paths and JSON as Argo's cron-workflow.proto), its gRPC client and server, and
// its grpc-gateway handlers. Do not edit the *.pb.go files.
package cronworkflow
