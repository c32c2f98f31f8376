package compat

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"testing"
	"time"

	eventpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/event"
	"github.com/argoproj/argo-workflows/v4/pkg/apiclient/workflow"
	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// bearer is the per-RPC credential: the server's token.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return true }

// eventClient is Argo's generated EventService client on a connection of
// its own (apiclient.Client has none), over TLS with the token per RPC.
func (s *server) eventClient(t *testing.T) eventpkg.EventServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(s.addr,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})),
		grpc.WithPerRPCCredentials(bearer(s.token)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return eventpkg.NewEventServiceClient(conn)
}

// receiveEvent sends payload under discriminator: over gRPC with Argo's
// EventService client, over HTTP/1 as a webhook does (the payload is the
// body).
func (e *env) receiveEvent(t *testing.T, discriminator, payload string) {
	t.Helper()
	if e.http1 {
		var out map[string]any
		if err := e.s.rest(e.ctx, "POST", "/api/v1/events/"+e.ns+"/"+discriminator, json.RawMessage(payload), &out); err != nil {
			t.Fatalf("event: %v", err)
		}
		if len(out) != 0 {
			t.Errorf("event answered %v, want {}", out)
		}
		return
	}
	item, err := wfv1.ParseItem(payload)
	must(t, err)
	if _, err := e.s.eventClient(t).ReceiveEvent(e.ctx, &eventpkg.EventRequest{Namespace: e.ns, Discriminator: discriminator, Payload: &item}); err != nil {
		t.Fatalf("ReceiveEvent: %v", err)
	}
}

func (e *env) listBindings(t *testing.T) *wfv1.WorkflowEventBindingList {
	t.Helper()
	if e.http1 {
		var l wfv1.WorkflowEventBindingList
		must(t, e.s.rest(e.ctx, "GET", "/api/v1/workflow-event-bindings/"+e.ns, nil, &l))
		return &l
	}
	l, err := e.s.eventClient(t).ListWorkflowEventBindings(e.ctx, &eventpkg.ListWorkflowEventBindingsRequest{Namespace: e.ns})
	if err != nil {
		t.Fatalf("ListWorkflowEventBindings: %v", err)
	}
	return l
}

const eventSelector = `payload.app == "web" && discriminator == "deploy"`

// TestEvents: a WorkflowEventBinding (stored through braid's REST API, as
// `braid apply` does; argo-server has no call for it) turns a matching
// event into a workflow from its WorkflowTemplate, with the parameter taken
// from the payload, and lets others pass; ListWorkflowEventBindings lists
// it. The template, the binding and the checks on workflows go through
// HTTP/1 in both subtests: only the EventService calls change transport.
func TestEvents(t *testing.T) {
	eachTransport(t, "events", func(t *testing.T, e *env) {
		h := newEnv(t, e.s, true, e.ns)
		tmpl := &wfv1.WorkflowTemplate{ObjectMeta: metav1.ObjectMeta{Name: "deploy"}, Spec: echoSpec()}
		tmpl.Spec.Arguments.Parameters = []wfv1.Parameter{{Name: "version"}}
		tmpl.Spec.Templates[0].Container.Command = []string{"sh", "-c", "echo deploying {{workflow.parameters.version}}"}
		must(t, e.s.rest(e.ctx, "POST", "/api/v1/workflow-templates/"+e.ns, map[string]any{"template": tmpl}, nil))
		binding := &wfv1.WorkflowEventBinding{ObjectMeta: metav1.ObjectMeta{Name: "on-deploy"}, Spec: wfv1.WorkflowEventBindingSpec{
			Event: wfv1.Event{Selector: eventSelector},
			Submit: &wfv1.Submit{WorkflowTemplateRef: wfv1.WorkflowTemplateRef{Name: "deploy"}, Arguments: &wfv1.Arguments{
				Parameters: []wfv1.Parameter{{Name: "version", ValueFrom: &wfv1.ValueFrom{Event: "payload.version"}}}}},
		}}
		must(t, e.s.rest(e.ctx, "POST", "/api/v1/workflow-event-bindings/"+e.ns, map[string]any{"workflowEventBinding": binding}, nil))

		bindings := e.listBindings(t)
		if len(bindings.Items) != 1 || bindings.Items[0].Name != "on-deploy" || bindings.Items[0].Spec.Event.Selector != eventSelector ||
			bindings.Items[0].Spec.Submit == nil || bindings.Items[0].Spec.Submit.WorkflowTemplateRef.Name != "deploy" {
			t.Errorf("ListWorkflowEventBindings: %+v, want on-deploy", bindings.Items)
		}

		e.receiveEvent(t, "deploy", `{"app":"api","version":"v0"}`)
		e.receiveEvent(t, "release", `{"app":"web","version":"v0"}`)
		sel := &metav1.ListOptions{LabelSelector: labelFromBinding + "=on-deploy"}
		if l, err := h.wf().ListWorkflows(e.ctx, &workflow.WorkflowListRequest{Namespace: e.ns, ListOptions: sel}); err != nil || len(l.Items) != 0 {
			t.Fatalf("after events that match no binding: %v %v", err, l)
		}
		version := "v1.2.3-" + e.name
		e.receiveEvent(t, "deploy", `{"app":"web","version":"`+version+`"}`)
		var items wfv1.Workflows
		_ = poll(10*time.Second, func() error { // the check below says what is missing
			l, err := h.wf().ListWorkflows(e.ctx, &workflow.WorkflowListRequest{Namespace: e.ns, ListOptions: sel})
			must(t, err)
			if items = l.Items; len(items) == 0 {
				return errNotYet
			}
			return nil
		})
		if len(items) != 1 {
			t.Fatalf("the matching event made %d workflows, want 1", len(items))
		}
		wf := items[0]
		if p := wf.Spec.Arguments.Parameters; len(p) != 1 || p[0].Name != "version" || p[0].Value == nil || p[0].Value.String() != version {
			t.Errorf("the event's workflow has parameters %v, want version=%s", p, version)
		}
		h.waitPhase(t, wf.Name, wfv1.WorkflowSucceeded)
	})
}
