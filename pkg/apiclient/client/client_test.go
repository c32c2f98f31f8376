package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apiclient/info"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestRestRequest(t *testing.T) {
	tail := int64(5)
	since := metav1.NewTime(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	tmpl := &v1alpha1.ClusterWorkflowTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t1"}}
	tests := []struct {
		name     string
		method   string
		in       any
		verb     string
		path     string
		bodyHave string
	}{
		{"get", workflow.WorkflowService_GetWorkflow_FullMethodName,
			&workflow.WorkflowGetRequest{Name: "wf", Namespace: "argo"}, "GET", "/api/v1/workflows/argo/wf", ""},
		{"list all namespaces with options", workflow.WorkflowService_ListWorkflows_FullMethodName,
			&workflow.WorkflowListRequest{Fields: "metadata", ListOptions: &metav1.ListOptions{LabelSelector: "a in (b,c)", Limit: 10}},
			"GET", "/api/v1/workflows/?fields=metadata&listOptions.labelSelector=a+in+%28b%2Cc%29&listOptions.limit=10", ""},
		{"logs", workflow.WorkflowService_WorkflowLogs_FullMethodName,
			&workflow.WorkflowLogRequest{Name: "wf", Namespace: "ns", PodName: "p", Grep: "x",
				LogOptions: &corev1.PodLogOptions{Container: "main", Follow: true, TailLines: &tail, SinceTime: &since}},
			"GET", "/api/v1/workflows/ns/wf/log?grep=x&logOptions.container=main&logOptions.follow=true&logOptions.sinceTime=2026-11-30T09%3A00%3A00Z&logOptions.tailLines=5&podName=p", ""},
		{"delete with force", workflow.WorkflowService_DeleteWorkflow_FullMethodName,
			&workflow.WorkflowDeleteRequest{Name: "wf", Namespace: "ns", Force: true}, "DELETE", "/api/v1/workflows/ns/wf?force=true", ""},
		{"a name that needs escaping", workflow.WorkflowService_GetWorkflow_FullMethodName,
			&workflow.WorkflowGetRequest{Name: "a/b c", Namespace: "ns"}, "GET", "/api/v1/workflows/ns/a%2Fb%20c", ""},
		{"retry body", workflow.WorkflowService_RetryWorkflow_FullMethodName,
			&workflow.WorkflowRetryRequest{Name: "wf", Namespace: "ns", RestartSuccessful: true, Parameters: []string{"a=b"}},
			"PUT", "/api/v1/workflows/ns/wf/retry", `"restartSuccessful":true`},
		{"cluster lint", clusterworkflowtemplate.ClusterWorkflowTemplateService_LintClusterWorkflowTemplate_FullMethodName,
			&clusterworkflowtemplate.ClusterWorkflowTemplateLintRequest{Template: tmpl}, "POST", "/api/v1/cluster-workflow-templates/lint", `"template":{"metadata":{"name":"t1"`},
		{"a field as the body", event.EventService_ReceiveEvent_FullMethodName,
			&event.EventRequest{Namespace: "ns", Discriminator: "d", Payload: &v1alpha1.Item{Value: []byte(`{"a":1}`)}},
			"POST", "/api/v1/events/ns/d", `{"a":1}`},
		{"info", info.InfoService_GetVersion_FullMethodName, &info.GetVersionRequest{}, "GET", "/api/v1/version", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := restRequest(tt.method, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if r.verb != tt.verb || r.path != tt.path {
				t.Fatalf("got %s %s, want %s %s", r.verb, r.path, tt.verb, tt.path)
			}
			if tt.bodyHave == "" && r.body != nil || !strings.Contains(string(r.body), tt.bodyHave) {
				t.Fatalf("body %s, want it to hold %q", r.body, tt.bodyHave)
			}
		})
	}
}

func TestRestRequestErrors(t *testing.T) {
	if _, err := restRequest("/workflow.WorkflowService/Nope", &workflow.WorkflowGetRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("unknown method: %v", err)
	}
	if _, err := restRequest(workflow.WorkflowService_GetWorkflow_FullMethodName, workflow.WorkflowGetRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a request that is not a pointer: %v", err)
	}
	// A nil body field is sent as null and the caller's request is not
	// changed.
	in := &event.EventRequest{Namespace: "ns", Discriminator: "d"}
	r, err := restRequest(event.EventService_ReceiveEvent_FullMethodName, in)
	if err != nil || string(r.body) != "null" || in.Payload != nil {
		t.Errorf("nil payload: body %s, err %v, request %+v", r.body, err, in)
	}
}

func TestDecodeError(t *testing.T) {
	tests := []struct {
		status int
		body   string
		code   codes.Code
		msg    string
	}{
		{404, `{"code":5,"message":"workflows.argoproj.io \"x\" not found"}`, codes.NotFound, `workflows.argoproj.io "x" not found`},
		{501, `{"code":12,"message":"Not Implemented"}`, codes.Unimplemented, "Not Implemented"},
		{502, `<html>bad gateway</html>`, codes.Internal, "HTTP 502: <html>bad gateway</html>"},
		{404, ``, codes.NotFound, "HTTP 404: Not Found"},
		{400, `{"code":0}`, codes.InvalidArgument, `HTTP 400: {"code":0}`},
	}
	for _, tt := range tests {
		st := status.Convert(decodeError(tt.status, []byte(tt.body)))
		if st.Code() != tt.code || st.Message() != tt.msg {
			t.Errorf("%d %s: got %v %q", tt.status, tt.body, st.Code(), st.Message())
		}
	}
}

// An HTTP/1 client against a handler that answers as argo-server does:
// unary JSON, SSE streams with keep-alives, and JSON errors.
func TestHTTP1Client(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer t" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"code":16,"message":"token not valid"}`)
			return
		}
		switch r.URL.Path {
		case "/base/api/v1/workflows/ns/wf":
			_, _ = io.WriteString(w, `{"metadata":{"name":"wf"},"status":{"phase":"Running"}}`)
		case "/base/api/v1/workflows/ns/wf/log":
			if r.Header.Get("Accept") != "text/event-stream" {
				t.Errorf("Accept = %q", r.Header.Get("Accept"))
			}
			_, _ = io.WriteString(w, ":\n"+
				`data: {"result":{"content":"one","podName":"p1"}} `+"\n\n\n"+
				":\n"+
				`data: {"result":{"podName":"p2"}} `+"\n\n\n")
		case "/base/api/v1/workflow-events/ns":
			_, _ = io.WriteString(w, `data: {"result":{"type":"ADDED","object":{"metadata":{"name":"wf"}}}}`+"\n\n"+
				`data: {"error":{"grpc_code":8,"http_code":429,"message":"watch closed"}}`+"\n\n")
		default:
			w.WriteHeader(http.StatusNotImplemented)
			_, _ = io.WriteString(w, `{"code":12,"message":"Not Implemented"}`)
		}
	}))
	defer srv.Close()
	c, err := New(Options{Address: strings.TrimPrefix(srv.URL, "http://"), HTTP1: true, BaseHref: "/base", Token: "Bearer t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	wf, err := c.Workflow.GetWorkflow(ctx, &workflow.WorkflowGetRequest{Name: "wf", Namespace: "ns"})
	if err != nil || wf.Name != "wf" || wf.Status.Phase != v1alpha1.WorkflowRunning {
		t.Fatalf("get: %v %v", wf, err)
	}
	if _, err := c.Workflow.StopWorkflow(ctx, &workflow.WorkflowStopRequest{Name: "wf", Namespace: "ns"}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("stop: %v", err)
	}

	logs, err := c.Workflow.WorkflowLogs(ctx, &workflow.WorkflowLogRequest{Name: "wf", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		e, err := logs.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.GetPodName()+":"+e.GetContent())
	}
	if strings.Join(got, ",") != "p1:one,p2:" {
		t.Fatalf("logs: %v", got)
	}

	watch, err := c.Workflow.WatchWorkflows(ctx, &workflow.WatchWorkflowsRequest{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := watch.Recv()
	if err != nil || ev.GetType() != "ADDED" || ev.GetObject().GetName() != "wf" {
		t.Fatalf("watch event: %v %v", ev, err)
	}
	if _, err := watch.Recv(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("watch error chunk: %v", err)
	}

	bad, err := New(Options{Address: strings.TrimPrefix(srv.URL, "http://"), HTTP1: true, BaseHref: "/base"})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.Workflow.WorkflowLogs(ctx, &workflow.WorkflowLogRequest{Name: "wf", Namespace: "ns"}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("stream without token: %v", err)
	}
}
