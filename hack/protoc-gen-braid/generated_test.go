package main

import (
	"encoding/json"
	"testing"

	"google.golang.org/grpc"

	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apiclient/info"
	"github.com/braidwf/braid/pkg/apiclient/rest"
	"github.com/braidwf/braid/pkg/apiclient/sync"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
)

// The committed route tables agree with the gRPC service descriptions
// protoc-gen-go-grpc wrote from the same protos: one route per RPC, with
// its streaming.
func TestRoutesMatchServices(t *testing.T) {
	for _, svc := range []struct {
		desc   grpc.ServiceDesc
		routes []rest.Route
	}{
		{workflow.WorkflowService_ServiceDesc, workflow.Routes},
		{workflowtemplate.WorkflowTemplateService_ServiceDesc, workflowtemplate.Routes},
		{clusterworkflowtemplate.ClusterWorkflowTemplateService_ServiceDesc, clusterworkflowtemplate.Routes},
		{cronworkflow.CronWorkflowService_ServiceDesc, cronworkflow.Routes},
		{workflowarchive.ArchivedWorkflowService_ServiceDesc, workflowarchive.Routes},
		{event.EventService_ServiceDesc, event.Routes},
		{info.InfoService_ServiceDesc, info.Routes},
		{sync.SyncService_ServiceDesc, sync.Routes},
	} {
		streaming := map[string]bool{}
		for _, m := range svc.desc.Methods {
			streaming[m.MethodName] = false
		}
		for _, s := range svc.desc.Streams {
			streaming[s.StreamName] = s.ServerStreams
		}
		seen := map[string]bool{}
		for _, r := range svc.routes {
			want, ok := streaming[r.Method]
			switch {
			case r.Service != svc.desc.ServiceName || !ok:
				t.Errorf("route %s: no such RPC in %s", r.FullMethod(), svc.desc.ServiceName)
			case r.ServerStreaming != want:
				t.Errorf("route %s: ServerStreaming %v, the RPC's is %v", r.FullMethod(), r.ServerStreaming, want)
			}
			seen[r.Method] = true
		}
		for m := range streaming {
			if !seen[m] {
				t.Errorf("%s/%s has no route", svc.desc.ServiceName, m)
			}
		}
	}
}

// The REST JSON of the generated messages is what protojson wrote before
// (UseProtoNames; EmitUnpopulated for unary responses).
func TestGeneratedJSON(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{&info.InfoResponse{}, `{"managedNamespace":"","links":[],"modals":{},"navColor":"","columns":[]}`},
		{info.GetUserInfoResponse{Name: "n"}, `{"issuer":"","subject":"","groups":[],"email":"","emailVerified":false,"serviceAccountName":"","serviceAccountNamespace":"","name":"n"}`},
		{&workflow.WorkflowDeleteResponse{}, `{}`},
		{&workflow.WorkflowWatchEvent{Type: "ADDED"}, `{"type":"ADDED"}`},
		{&workflow.LogEntry{Content: "x"}, `{"content":"x"}`},
		{&workflow.WorkflowGetRequest{Name: "a"}, `{"name":"a"}`},
		{&sync.SyncLimitResponse{Type: sync.SyncConfigType_DATABASE, Limit: 2}, `{"type":1,"namespace":"","cmName":"","key":"","limit":2}`},
	} {
		got, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%T: got %s, want %s", tc.v, got, tc.want)
		}
	}
}

func TestEnumDecoding(t *testing.T) {
	for _, in := range []string{`{"type":"DATABASE"}`, `{"type":1}`, `{"type":"1"}`} {
		var r sync.CreateSyncLimitRequest
		if err := json.Unmarshal([]byte(in), &r); err != nil || r.Type != sync.SyncConfigType_DATABASE {
			t.Errorf("%s: got %v, %v", in, r.Type, err)
		}
	}
	var r sync.CreateSyncLimitRequest
	if err := json.Unmarshal([]byte(`{"type":"NOPE"}`), &r); err == nil {
		t.Error("an unknown name decoded")
	}
	if got := sync.SyncConfigType_DATABASE.String(); got != "DATABASE" {
		t.Errorf("String() = %q", got)
	}
}
