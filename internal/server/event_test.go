package server

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

const eventTemplate = `
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: greet, namespace: argo}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: message}, {name: count}, {name: literal}]
  templates:
  - name: main
    container: {image: alpine, command: [echo, "{{workflow.parameters.message}}"]}
`

const eventClusterTemplate = `
apiVersion: argoproj.io/v1alpha1
kind: ClusterWorkflowTemplate
metadata: {name: cluster-greet}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: alpine, command: [echo, hi]}
`

// eventBindings: push matches a push from GitHub with the discriminator
// gh; tag and cluster match other events; bad-syntax and not-bool never
// evaluate to a bool and are skipped.
const eventBindings = `
apiVersion: argoproj.io/v1alpha1
kind: WorkflowEventBinding
metadata: {name: push, namespace: argo}
spec:
  event:
    selector: payload.kind == "push" && metadata["x-github-event"] == ["push"] && discriminator == "gh"
  submit:
    workflowTemplateRef: {name: greet}
    metadata:
      labels: {team: '"infra"', kind: 'payload.kind'}
      annotations: {note: '"from " + discriminator'}
    arguments:
      parameters:
      - {name: message, valueFrom: {event: payload.message}}
      - {name: count, valueFrom: {event: payload.count}}
      - {name: literal, value: as-is}
---
apiVersion: argoproj.io/v1alpha1
kind: WorkflowEventBinding
metadata: {name: tag, namespace: argo}
spec:
  event: {selector: payload.kind == "tag"}
  submit:
    workflowTemplateRef: {name: greet}
    arguments:
      parameters:
      - {name: message, valueFrom: {event: payload.ref}}
      - {name: count, value: "0"}
      - {name: literal, value: x}
---
apiVersion: argoproj.io/v1alpha1
kind: WorkflowEventBinding
metadata: {name: cluster, namespace: argo}
spec:
  event: {selector: 'payload.kind == "cluster"'}
  submit:
    workflowTemplateRef: {name: cluster-greet, clusterScope: true}
---
apiVersion: argoproj.io/v1alpha1
kind: WorkflowEventBinding
metadata: {name: bad-syntax, namespace: argo}
spec:
  event: {selector: 'payload.kind =='}
  submit:
    workflowTemplateRef: {name: greet}
---
apiVersion: argoproj.io/v1alpha1
kind: WorkflowEventBinding
metadata: {name: not-bool, namespace: argo}
spec:
  event: {selector: 'payload.kind'}
  submit:
    workflowTemplateRef: {name: greet}
---
apiVersion: argoproj.io/v1alpha1
kind: WorkflowEventBinding
metadata: {name: elsewhere, namespace: other}
spec:
  event: {selector: 'true'}
  submit:
    workflowTemplateRef: {name: greet}
`

// createDocs stores each YAML document of docs as an object of type T.
func createDocs[T any, PT interface {
	*T
	store.Object
}](t *testing.T, st *sqlite.Store, docs string) {
	t.Helper()
	for _, d := range strings.Split(docs, "\n---\n") {
		var o T
		if err := yaml.UnmarshalStrict([]byte(d), &o); err != nil {
			t.Fatalf("fixture: %v\n%s", err, d)
		}
		if err := st.Create(context.Background(), PT(&o)); err != nil {
			t.Fatal(err)
		}
	}
}

func eventFixtures(t *testing.T) (string, *sqlite.Store) {
	t.Helper()
	addr, st := startServerStore(t, Options{})
	createDocs[v1alpha1.WorkflowTemplate](t, st, eventTemplate)
	createDocs[v1alpha1.ClusterWorkflowTemplate](t, st, eventClusterTemplate)
	createDocs[v1alpha1.WorkflowEventBinding](t, st, eventBindings)
	return addr, st
}

func listWorkflows(t *testing.T, st *sqlite.Store, ns string) []*v1alpha1.Workflow {
	t.Helper()
	objs, _, err := st.List(context.Background(), store.KindWorkflow, ns, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*v1alpha1.Workflow
	for _, o := range objs {
		out = append(out, o.(*v1alpha1.Workflow))
	}
	return out
}

func postEvent(t *testing.T, url, body string, header map[string]string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || string(b) != "{}" {
		t.Errorf("POST %s %s: %d %s, want 200 {}", url, body, res.StatusCode, b)
	}
}

func params(wf *v1alpha1.Workflow) map[string]string {
	out := map[string]string{}
	for _, p := range wf.Spec.Arguments.Parameters {
		if p.Value != nil {
			out[p.Name] = p.Value.String()
		}
	}
	return out
}

func TestReceiveEvent(t *testing.T) {
	addr, st := eventFixtures(t)
	base := "http://" + addr + "/api/v1/events/argo/"

	// Matches nothing (wrong header, then wrong discriminator): 200 {}, no workflow.
	postEvent(t, base+"gh", `{"kind":"push","message":"hi","count":3}`, map[string]string{"X-GitHub-Event": "pull"})
	postEvent(t, base+"other", `{"kind":"push","message":"hi","count":3}`, map[string]string{"X-GitHub-Event": "push"})
	postEvent(t, base+"gh", `"not an object"`, nil)
	if wfs := listWorkflows(t, st, ""); len(wfs) != 0 {
		t.Fatalf("unmatched events submitted %d workflows", len(wfs))
	}

	// Matches push only; bad-syntax and not-bool are skipped, elsewhere is
	// another namespace.
	postEvent(t, base+"gh", `{"kind":"push","message":"hello world","count":3}`, map[string]string{"X-GitHub-Event": "push"})
	wfs := listWorkflows(t, st, "")
	if len(wfs) != 1 {
		t.Fatalf("%d workflows, want 1", len(wfs))
	}
	wf := wfs[0]
	if wf.Namespace != "argo" || wf.GenerateName != "greet-" || !strings.HasPrefix(wf.Name, "greet-") {
		t.Errorf("workflow %s/%s generateName %q", wf.Namespace, wf.Name, wf.GenerateName)
	}
	wantLabels := map[string]string{
		"workflows.argoproj.io/workflow-template":      "greet",
		"workflows.argoproj.io/workflow-event-binding": "push",
		"team": "infra", "kind": "push",
	}
	for k, v := range wantLabels {
		if wf.Labels[k] != v {
			t.Errorf("label %s = %q, want %q (labels %v)", k, wf.Labels[k], v, wf.Labels)
		}
	}
	if wf.Annotations["note"] != "from gh" {
		t.Errorf("annotations %v", wf.Annotations)
	}
	if got, want := params(wf), map[string]string{"message": "hello world", "count": "3", "literal": "as-is"}; !mapsEqual(got, want) {
		t.Errorf("parameters %v, want %v", got, want)
	}
	if ref := wf.Spec.WorkflowTemplateRef; ref == nil || ref.Name != "greet" || ref.ClusterScope {
		t.Errorf("workflowTemplateRef %+v", ref)
	}

	// A cluster template, and a value that is not a string (JSON).
	postEvent(t, base+"", `{"kind":"cluster"}`, nil)
	postEvent(t, base+"x", `{"kind":"tag","ref":{"name":"v1","sha":"abc"}}`, nil)
	var names []string
	for _, wf := range listWorkflows(t, st, "argo") {
		names = append(names, wf.Labels["workflows.argoproj.io/workflow-event-binding"])
		if wf.Labels["workflows.argoproj.io/workflow-event-binding"] == "tag" {
			if got := params(wf)["message"]; got != `{"name":"v1","sha":"abc"}` {
				t.Errorf("object parameter = %q", got)
			}
		}
		if wf.Labels["workflows.argoproj.io/workflow-event-binding"] == "cluster" &&
			(wf.Labels["workflows.argoproj.io/cluster-workflow-template"] != "cluster-greet" || !strings.HasPrefix(wf.Name, "cluster-greet-")) {
			t.Errorf("cluster workflow %s labels %v", wf.Name, wf.Labels)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"cluster", "push", "tag"}) {
		t.Errorf("bindings that submitted: %v", names)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Over gRPC the metadata comes from the call; the binding list is the
// namespace's.
func TestEventGRPC(t *testing.T) {
	addr, st := eventFixtures(t)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := event.NewEventServiceClient(conn)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "X-GitHub-Event", "push", "authorization", "secret")
	payload, err := v1alpha1.NewItem(map[string]any{"kind": "push", "message": "m", "count": 1.5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReceiveEvent(ctx, &event.EventRequest{Namespace: "argo", Discriminator: "gh", Payload: &payload}); err != nil {
		t.Fatal(err)
	}
	wfs := listWorkflows(t, st, "argo")
	if len(wfs) != 1 || params(wfs[0])["count"] != "1.5" {
		t.Fatalf("workflows after a gRPC event: %d", len(wfs))
	}

	l, err := c.ListWorkflowEventBindings(context.Background(), &event.ListWorkflowEventBindingsRequest{Namespace: "argo"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range l.Items {
		names = append(names, it.Name)
	}
	slices.Sort(names)
	if want := []string{"bad-syntax", "cluster", "not-bool", "push", "tag"}; !slices.Equal(names, want) {
		t.Errorf("bindings = %v, want %v", names, want)
	}
}

// The selector sees x- headers only: authorization never reaches it.
func TestEventEnvHeaders(t *testing.T) {
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-a", "1", "x-a", "2", "authorization", "secret", "content-type", "json"))
	env, err := eventEnv(ctx, &event.EventRequest{Discriminator: "d"})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := env["metadata"].(map[string]any)
	if len(md) != 1 || len(md["x-a"].([]any)) != 2 || env["discriminator"] != "d" || env["payload"] != nil {
		t.Errorf("env = %v", env)
	}
}
