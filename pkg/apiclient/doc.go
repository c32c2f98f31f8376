// Package apiclient holds what a Go client of braid's API needs: the code
// generated from api/proto (packages workflow, workflowtemplate,
// clusterworkflowtemplate, cronworkflow, workflowarchive, event and info:
// gRPC clients and servers, and grpc-gateway handlers), and helpers to carry API objects
// (pkg/apis/v1alpha1) in the google.protobuf.Struct fields of its messages.
//
// Regenerate with hack/protogen.sh; generated files are committed.
package apiclient
