// Package server is braid's API server: argo-server's gRPC services and the
// same REST paths and JSON under /api/v1 (grpc-gateway), served together on
// one listener split with cmux, plus /healthz and /readyz.
//
// This first slice serves WorkflowService (Create, Get, List, Delete, Lint)
// and InfoService (GetInfo, GetVersion) on the embedded store. Workflows are
// stored only: running them through the server comes next.
//
// Layout: server.go (Options, New, Serve, cmux, the gateway and the error
// mapping of ARGO-API §3.4), workflow.go (WorkflowService), info.go
// (InfoService), convert.go (API objects <-> google.protobuf.Struct and the
// `fields` filter). The REST side calls the services in-process through the
// gateway's RegisterXHandlerServer functions, so gRPC interceptors do not
// run for REST; streaming RPCs (watch, logs) will need a loopback client.
//
// It uses the store through the small Store interface declared here, and
// internal/spec to validate; it must not import the engine or a runtime.
package server
