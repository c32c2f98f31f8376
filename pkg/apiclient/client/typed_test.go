package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/braidwf/braid/pkg/apiclient/rest/resttest"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"github.com/braidwf/braid/pkg/wirecodec"
)

// sampleWorkflow has a spec and a status with nodes, so that a round trip
// exercises maps, nested messages, slices of slices and times.
func sampleWorkflow() *v1alpha1.Workflow {
	started := metav1.Unix(1_700_000_000, 0)
	wf := &v1alpha1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns", Labels: map[string]string{"a": "b"}},
		Spec: v1alpha1.WorkflowSpec{
			Entrypoint: "main",
			Arguments:  v1alpha1.Arguments{Parameters: []v1alpha1.Parameter{{Name: "p", Value: v1alpha1.AnyStringPtr("v")}}},
			Templates: []v1alpha1.Template{
				{Name: "main", Steps: []v1alpha1.ParallelSteps{{{Name: "s", Template: "t"}}}},
				{Name: "t", Suspend: &v1alpha1.SuspendTemplate{}},
			},
		},
		Status: v1alpha1.WorkflowStatus{Phase: v1alpha1.WorkflowRunning, StartedAt: started, Nodes: v1alpha1.Nodes{
			"wf": {ID: "wf", Name: "wf", Type: v1alpha1.NodeTypeSteps, Phase: v1alpha1.NodeRunning, StartedAt: started, Children: []string{"wf-1"}},
			"wf-1": {ID: "wf-1", Name: "wf[0].s", Type: v1alpha1.NodeTypeSuspend, Phase: v1alpha1.NodeRunning,
				BoundaryID: "wf", StartedAt: started},
		}},
	}
	return wf
}

// echoServer answers CreateWorkflow with the workflow it was sent, phase
// and all, and WatchWorkflows with two events.
type echoServer struct {
	workflow.UnimplementedWorkflowServiceServer
	got chan *workflow.WorkflowCreateRequest
}

func (s echoServer) CreateWorkflow(_ context.Context, req *workflow.WorkflowCreateRequest) (*v1alpha1.Workflow, error) {
	s.got <- req
	if req.Workflow == nil {
		return nil, status.Error(codes.InvalidArgument, "no workflow")
	}
	return req.Workflow, nil
}

func (s echoServer) WatchWorkflows(req *workflow.WatchWorkflowsRequest, stream grpc.ServerStreamingServer[workflow.WorkflowWatchEvent]) error {
	if req.ListOptions == nil || req.ListOptions.LabelSelector != "a=b" {
		return status.Errorf(codes.InvalidArgument, "list options %+v", req.ListOptions)
	}
	for _, typ := range []string{"ADDED", "MODIFIED"} {
		if err := stream.Send(&workflow.WorkflowWatchEvent{Type: typ, Object: sampleWorkflow()}); err != nil {
			return err
		}
	}
	return nil
}

// The gRPC transport carries typed objects in the wire codec, which the
// client sets itself: the server forces it and nothing registers it
// globally.
func TestGRPCTypedRoundTrip(t *testing.T) {
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer(grpc.ForceServerCodecV2(wirecodec.CodecV2{}))
	srv := echoServer{got: make(chan *workflow.WorkflowCreateRequest, 1)}
	workflow.RegisterWorkflowServiceServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)

	c, err := New(Options{Address: "bufnet", Dial: func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	want := sampleWorkflow()
	got, err := c.Workflow.CreateWorkflow(ctx, &workflow.WorkflowCreateRequest{Namespace: "ns", Workflow: want,
		CreateOptions: &metav1.CreateOptions{DryRun: []string{"All"}}})
	if err != nil {
		t.Fatal(err)
	}
	req := <-srv.got
	if req.Namespace != "ns" || req.CreateOptions == nil || !reflect.DeepEqual(req.CreateOptions.DryRun, []string{"All"}) {
		t.Errorf("the server got %+v", req)
	}
	resttest.SameJSON(t, got, want)

	watch, err := c.Workflow.WatchWorkflows(ctx, &workflow.WatchWorkflowsRequest{Namespace: "ns", ListOptions: &metav1.ListOptions{LabelSelector: "a=b"}})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for {
		ev, err := watch.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		resttest.SameJSON(t, ev.Object, want)
	}
	if strings.Join(types, ",") != "ADDED,MODIFIED" {
		t.Errorf("events %v", types)
	}
	if _, err := c.Workflow.CreateWorkflow(ctx, &workflow.WorkflowCreateRequest{Namespace: "ns"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("no workflow: %v", err)
	}
	<-srv.got
}

// The HTTP/1 transport sends a body route's request as JSON to the route's
// path and decodes the typed answer.
func TestHTTP1TypedCreate(t *testing.T) {
	want := sampleWorkflow()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req workflow.WorkflowCreateRequest
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/workflows/ns" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, `{"code":3,"message":"wrong request `+r.Method+" "+r.URL.Path+`"}`, http.StatusBadRequest)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Namespace != "ns" || req.Workflow == nil {
			http.Error(w, `{"code":3,"message":"bad body"}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(req.Workflow)
	}))
	defer srv.Close()
	c, err := New(Options{Address: strings.TrimPrefix(srv.URL, "http://"), HTTP1: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.Workflow.CreateWorkflow(context.Background(), &workflow.WorkflowCreateRequest{Namespace: "ns", Workflow: want})
	if err != nil {
		t.Fatal(err)
	}
	resttest.SameJSON(t, got, want)
}
