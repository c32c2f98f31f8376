package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// wideWorkflow stores a Running workflow with n Pending pod nodes.
func wideWorkflow(t *testing.T, st *sqlite.Store, name string, n int) *v1alpha1.Workflow {
	t.Helper()
	wf := createWorkflow(t, st, "argo", name, nil)
	o, err := st.Get(context.Background(), store.KindWorkflow, "argo", name)
	if err != nil {
		t.Fatal(err)
	}
	wf = o.(*v1alpha1.Workflow)
	at := metav1.NewTime(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	wf.Status.Phase, wf.Status.StartedAt = v1alpha1.WorkflowRunning, at
	wf.Status.Nodes = v1alpha1.Nodes{}
	for i := range n {
		id := fmt.Sprintf("%s-%d", name, i)
		wf.Status.Nodes[id] = v1alpha1.NodeStatus{ID: id, Name: fmt.Sprintf("%s.task(%d)", name, i), DisplayName: fmt.Sprintf("task(%d)", i),
			Type: v1alpha1.NodeTypePod, TemplateName: "main", Phase: v1alpha1.NodePending, StartedAt: at}
	}
	if err := st.Update(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
	return wf
}

// setPhase changes one node's phase in the store.
func setPhase(t *testing.T, st *sqlite.Store, name, id string, p v1alpha1.NodePhase) {
	t.Helper()
	o, err := st.Get(context.Background(), store.KindWorkflow, "argo", name)
	if err != nil {
		t.Fatal(err)
	}
	wf := o.(*v1alpha1.Workflow)
	n := wf.Status.Nodes[id]
	n.Phase = p
	wf.Status.Nodes[id] = n
	if err := st.UpdateWorkflowStatus(context.Background(), wf, []string{id}); err != nil {
		t.Fatal(err)
	}
}

type nodeEventJSON struct {
	Result struct {
		Type     string                         `json:"type"`
		Workflow *v1alpha1.Workflow             `json:"workflow"`
		Nodes    map[string]v1alpha1.NodeStatus `json:"nodes"`
		Removed  []string                       `json:"removedNodes"`
	} `json:"result"`
}

// Over REST (SSE), a 10,000-node workflow arrives once, then a change of
// one node costs one node's bytes; deleting it ends the stream.
func TestWatchWorkflowNodesREST(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	const n = 10000
	wideWorkflow(t, st, "wide", n)
	w := openWatch(t, "http://"+addr+"/api/v1/workflow-node-events/argo/wide", sseContentType)
	if ct := w.res.Header.Get("Content-Type"); ct != sseContentType {
		t.Fatalf("content type %q", ct)
	}
	read := func() (nodeEventJSON, int) {
		line := w.next(t)
		var ev nodeEventJSON
		if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(line), "data: ")), &ev); err != nil {
			t.Fatalf("%v: %.200s", err, line)
		}
		return ev, len(line)
	}
	snap, snapBytes := read()
	if snap.Result.Type != "SNAPSHOT" || len(snap.Result.Nodes) != n || snap.Result.Workflow == nil ||
		snap.Result.Workflow.Spec.Entrypoint != "main" || len(snap.Result.Workflow.Status.Nodes) != 0 {
		t.Fatalf("snapshot: %s with %d nodes", snap.Result.Type, len(snap.Result.Nodes))
	}
	setPhase(t, st, "wide", "wide-42", v1alpha1.NodeRunning)
	committed := time.Now()
	ch, chBytes := read()
	t.Logf("a change of one of %d nodes reached the client %s after the store's write", n, time.Since(committed).Round(time.Millisecond))
	if ch.Result.Type != "CHANGED" || len(ch.Result.Nodes) != 1 || ch.Result.Nodes["wide-42"].Phase != v1alpha1.NodeRunning {
		t.Fatalf("change: %s %v", ch.Result.Type, ch.Result.Nodes)
	}
	if ch.Result.Workflow == nil || ch.Result.Workflow.Spec.Entrypoint != "" || ch.Result.Workflow.Status.Phase != v1alpha1.WorkflowRunning {
		t.Errorf("a change carries the workflow's head without its unchanged spec: %+v", ch.Result.Workflow)
	}
	t.Logf("snapshot %d bytes, one node's change %d bytes", snapBytes, chBytes)
	if chBytes > 2000 {
		t.Errorf("one node's change took %d bytes", chBytes)
	}
	// A node that goes is named.
	o, _ := st.Get(context.Background(), store.KindWorkflow, "argo", "wide")
	wf := o.(*v1alpha1.Workflow)
	delete(wf.Status.Nodes, "wide-7")
	if err := st.Update(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
	if rm, _ := read(); rm.Result.Type != "CHANGED" || len(rm.Result.Nodes) != 0 || strings.Join(rm.Result.Removed, ",") != "wide-7" {
		t.Errorf("removal: %s %d nodes, removed %v", rm.Result.Type, len(rm.Result.Nodes), rm.Result.Removed)
	}
	if err := st.Delete(context.Background(), store.KindWorkflow, "argo", "wide"); err != nil {
		t.Fatal(err)
	}
	if del, _ := read(); del.Result.Type != "DELETED" {
		t.Errorf("deletion: %s", del.Result.Type)
	}
}

// Over gRPC the same events arrive as WorkflowNodeEvent messages; an
// unknown workflow is NotFound.
func TestWatchWorkflowNodesGRPC(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	wideWorkflow(t, st, "two", 2)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), wireCodec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := workflow.NewWorkflowServiceClient(conn)
	if s, err := c.WatchWorkflowNodes(ctx, &workflow.WatchWorkflowNodesRequest{Namespace: "argo", Name: "nope"}); err == nil {
		if _, err = s.Recv(); status.Code(err) != codes.NotFound {
			t.Errorf("unknown name: %v", err)
		}
	}
	s, err := c.WatchWorkflowNodes(ctx, &workflow.WatchWorkflowNodesRequest{Namespace: "argo", Name: "@latest"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := s.Recv()
	if err != nil || ev.GetType() != "SNAPSHOT" || len(ev.GetNodes()) != 2 || ev.GetWorkflow().GetName() != "two" {
		t.Fatalf("snapshot %v, %v", ev, err)
	}
	setPhase(t, st, "two", "two-1", v1alpha1.NodeSucceeded)
	ev, err = s.Recv()
	if err != nil || ev.GetType() != "CHANGED" || len(ev.GetNodes()) != 1 || ev.GetNodes()["two-1"].Phase != v1alpha1.NodeSucceeded {
		t.Fatalf("change %v, %v", ev, err)
	}
}

// An action writes only the nodes it changed: resuming a 10,000-node
// workflow at its suspend node writes that node's row alone, so the node
// stream reads and sends one node.
func TestActionWritesOnlyChangedNodes(t *testing.T) {
	addr, st := startServerStore(t, Options{})
	wf := wideWorkflow(t, st, "wide", 10000)
	o, _ := st.Get(context.Background(), store.KindWorkflow, "argo", "wide")
	wf = o.(*v1alpha1.Workflow)
	n := wf.Status.Nodes["wide-3"]
	n.Type, n.Phase = v1alpha1.NodeTypeSuspend, v1alpha1.NodeRunning
	wf.Status.Nodes["wide-3"] = n
	if err := st.Update(context.Background(), wf); err != nil {
		t.Fatal(err)
	}
	o, _ = st.Get(context.Background(), store.KindWorkflow, "argo", "wide")
	rv := resourceVersion(o)
	req, _ := http.NewRequest("PUT", "http://"+addr+"/api/v1/workflows/argo/wide/resume", strings.NewReader(`{"name":"wide","namespace":"argo"}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("resume: %v %v", res, err)
	}
	res.Body.Close()
	_, changed, ids, err := st.WorkflowNodesSince(context.Background(), "argo", "wide", rv)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 1 || changed["wide-3"].Phase != v1alpha1.NodeSucceeded || len(ids) != 10000 {
		t.Errorf("the resume wrote %d node rows (want 1, wide-3 Succeeded), %d nodes in all", len(changed), len(ids))
	}
}
