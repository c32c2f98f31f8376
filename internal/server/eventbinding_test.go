package server

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// bindingJSON is a binding of greet (eventTemplate) with this selector and
// message expression.
func bindingJSON(name, selector, message, template string) string {
	q := func(s string) string { return strings.ReplaceAll(s, `"`, `\"`) }
	return `{"metadata":{"name":"` + name + `"},"spec":{"event":{"selector":"` + q(selector) + `"},` +
		`"submit":{"workflowTemplateRef":{"name":"` + template + `"},"arguments":{"parameters":[` +
		`{"name":"message","valueFrom":{"event":"` + q(message) + `"}},{"name":"count","value":"1"},{"name":"literal","value":"x"}]}}}}`
}

func storedBinding(t *testing.T, st interface {
	Get(context.Context, store.Kind, string, string) (store.Object, error)
}, name string) *v1alpha1.WorkflowEventBinding {
	t.Helper()
	o, err := st.Get(context.Background(), store.KindWorkflowEventBinding, "argo", name)
	if err != nil {
		t.Fatalf("binding %s: %v", name, err)
	}
	return o.(*v1alpha1.WorkflowEventBinding)
}

// Create, get, update and delete over REST; each write answers the
// stored binding, and a second create of the same name is a conflict.
func TestEventBindingCRUD(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	createDocs[v1alpha1.WorkflowTemplate](t, st, eventTemplate)
	base := "http://" + addr + "/api/v1/workflow-event-bindings/argo"
	mustDo := func(method, url, body string, want int) []byte {
		t.Helper()
		res := do(t, method, url, body)
		if res.status != want {
			t.Fatalf("%s %s: status %d, want %d: %s", method, url, res.status, want, res.body)
		}
		return res.body
	}
	wrap := func(b string) string { return `{"workflowEventBinding":` + b + `}` }

	created := decodeInto[object](t, mustDo("POST", base, wrap(bindingJSON("push", `payload.kind == "push"`, "payload.message", "greet")), 200))
	if created.Metadata.Name != "push" || created.Metadata.Namespace != "argo" || created.Metadata.UID == "" {
		t.Fatalf("created %+v", created.Metadata)
	}
	if b := storedBinding(t, st, "push"); b.Spec.Event.Selector != `payload.kind == "push"` {
		t.Fatalf("stored selector %q", b.Spec.Event.Selector)
	}
	e := decodeInto[errJSON](t, mustDo("POST", base, wrap(bindingJSON("push", "true", "payload", "greet")), 409))
	if e.Code != int(codes.AlreadyExists) || !strings.Contains(e.Message, `"push" already exists`) {
		t.Errorf("second create: %+v", e)
	}
	got := decodeInto[object](t, mustDo("GET", base+"/push", "", 200))
	if got.Metadata.UID != created.Metadata.UID {
		t.Errorf("get %+v", got.Metadata)
	}

	mustDo("PUT", base+"/push", wrap(bindingJSON("push", `payload.kind == "tag"`, "payload.ref", "greet")), 200)
	if b := storedBinding(t, st, "push"); b.Spec.Event.Selector != `payload.kind == "tag"` || string(b.UID) != created.Metadata.UID {
		t.Errorf("after update: selector %q uid %s", b.Spec.Event.Selector, b.UID)
	}
	stale := strings.Replace(bindingJSON("push", "true", "payload", "greet"), `"name":"push"`, `"name":"push","resourceVersion":"1"`, 1)
	mustDo("PUT", base+"/push", wrap(stale), 409)
	mustDo("PUT", base+"/absent", wrap(bindingJSON("absent", "true", "payload", "greet")), 404)

	mustDo("DELETE", base+"/push", "", 200)
	mustDo("GET", base+"/push", "", 404)
	mustDo("DELETE", base+"/push", "", 404)
}

// A binding whose selector or parameter expression does not compile is
// refused with a message that names the binding and the expression, and
// nothing is stored; one whose template does not exist yet is accepted,
// as Argo does.
func TestEventBindingValidation(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	base := "http://" + addr + "/api/v1/workflow-event-bindings/argo"
	for _, tc := range []struct {
		name, body string
		want       int
		msg        []string
	}{
		{"bad-selector", bindingJSON("bad-selector", `payload.kind ==`, "payload", "greet"), 400,
			[]string{"WorkflowEventBinding bad-selector", "spec.event.selector", "payload.kind =="}},
		{"bad-param", bindingJSON("bad-param", "true", "payload.(", "greet"), 400,
			[]string{"WorkflowEventBinding bad-param", "valueFrom.event", "payload.("}},
		{"no-selector", bindingJSON("no-selector", "", "payload", "greet"), 400, []string{"needs an event selector"}},
		{"Bad_Name", bindingJSON("Bad_Name", "true", "payload", "greet"), 400, []string{`metadata.name: Invalid value: "Bad_Name"`}},
		{"later", bindingJSON("later", "true", "payload", "not-yet"), 200, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := do(t, "POST", base, `{"workflowEventBinding":`+tc.body+`}`)
			if res.status != tc.want {
				t.Fatalf("status %d, want %d: %s", res.status, tc.want, res.body)
			}
			_, err := st.Get(context.Background(), store.KindWorkflowEventBinding, "argo", tc.name)
			if stored := err == nil; stored != (tc.want == 200) {
				t.Errorf("stored = %v (%v)", stored, err)
			}
			if tc.want == 200 {
				return
			}
			e := decodeInto[errJSON](t, res.body)
			for _, m := range tc.msg {
				if e.Code != int(codes.InvalidArgument) || !strings.Contains(e.Message, m) {
					t.Errorf("error %+v, want code 3 containing %q", e, m)
				}
			}
			// An update that breaks a stored binding is refused the same way.
			if tc.name == "bad-selector" {
				good := bindingJSON("fine", "true", "payload", "greet")
				if r := do(t, "POST", base, `{"workflowEventBinding":`+good+`}`); r.status != 200 {
					t.Fatalf("create fine: %d %s", r.status, r.body)
				}
				bad := bindingJSON("fine", `payload.kind ==`, "payload", "greet")
				if r := do(t, "PUT", base+"/fine", `{"workflowEventBinding":`+bad+`}`); r.status != 400 || !strings.Contains(string(r.body), "spec.event.selector") {
					t.Errorf("bad update: %d %s", r.status, r.body)
				}
				if b := storedBinding(t, st, "fine"); b.Spec.Event.Selector != "true" {
					t.Errorf("a refused update changed the selector to %q", b.Spec.Event.Selector)
				}
			}
		})
	}
}

// An event that matches a binding whose template is missing answers with
// an error naming the binding and the template; the other bindings still
// submit their workflows.
func TestEventMissingTemplate(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	createDocs[v1alpha1.WorkflowTemplate](t, st, eventTemplate)
	base := "http://" + addr + "/api/v1/workflow-event-bindings/argo"
	for _, b := range []string{
		bindingJSON("dangling", `payload.kind == "x"`, "payload.message", "not-there"),
		bindingJSON("good", `payload.kind == "x"`, "payload.message", "greet"),
	} {
		if r := do(t, "POST", base, `{"workflowEventBinding":`+b+`}`); r.status != 200 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
	}
	res := do(t, "POST", "http://"+addr+"/api/v1/events/argo/d", `{"kind":"x","message":"hi"}`)
	e := decodeInto[errJSON](t, res.body)
	if res.status != 500 || e.Code != int(codes.Internal) ||
		!strings.Contains(e.Message, `WorkflowEventBinding "dangling"`) || !strings.Contains(e.Message, `"not-there" not found`) ||
		strings.Contains(e.Message, "rpc error") || strings.Contains(e.Message, "good") {
		t.Errorf("event answer %d %s", res.status, res.body)
	}
	wfs := listWorkflows(t, st, "argo")
	if len(wfs) != 1 || wfs[0].Labels[labelWorkflowEventBinding] != "good" {
		t.Fatalf("%d workflows submitted, want good's", len(wfs))
	}
	// An event that matches nothing is {} and submits nothing.
	postEvent(t, "http://"+addr+"/api/v1/events/argo/d", `{"kind":"y"}`, nil)
	if n := len(listWorkflows(t, st, "argo")); n != 1 {
		t.Errorf("%d workflows after an unmatched event", n)
	}
}

// The calls over gRPC: create, get, update, delete.
func TestEventBindingGRPC(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := event.NewEventServiceClient(conn)
	ctx := context.Background()
	body := func(selector string) *v1alpha1.WorkflowEventBinding {
		b := &v1alpha1.WorkflowEventBinding{Spec: v1alpha1.WorkflowEventBindingSpec{
			Event:  v1alpha1.Event{Selector: selector},
			Submit: &v1alpha1.Submit{WorkflowTemplateRef: v1alpha1.WorkflowTemplateRef{Name: "greet"}},
		}}
		b.Name = "g"
		return b
	}
	if _, err := c.CreateWorkflowEventBinding(ctx, &event.CreateWorkflowEventBindingRequest{Namespace: "argo", WorkflowEventBinding: body("true")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateWorkflowEventBinding(ctx, &event.CreateWorkflowEventBindingRequest{Namespace: "argo", WorkflowEventBinding: body("(")})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("bad create: %v", err)
	}
	if _, err := c.UpdateWorkflowEventBinding(ctx, &event.UpdateWorkflowEventBindingRequest{Namespace: "argo", Name: "g", WorkflowEventBinding: body("false")}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetWorkflowEventBinding(ctx, &event.GetWorkflowEventBindingRequest{Namespace: "argo", Name: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if sel := got.Spec.Event.Selector; sel != "false" {
		t.Errorf("selector %q after update", sel)
	}
	if _, err := c.DeleteWorkflowEventBinding(ctx, &event.DeleteWorkflowEventBindingRequest{Namespace: "argo", Name: "g"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, store.KindWorkflowEventBinding, "argo", "g"); err == nil {
		t.Error("deleted binding still stored")
	}
}
