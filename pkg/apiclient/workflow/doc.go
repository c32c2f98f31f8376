// Package workflow is generated from api/proto by hack/protogen.sh (buf): the
// messages, the gRPC client and server, and the grpc-gateway handlers of
// argo-server's workflow service. Do not edit; change the protos and regenerate.
package workflow
