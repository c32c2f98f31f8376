package server

import (
	"context"
	"errors"
	"reflect"
	"sort"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Types of WorkflowNodeEvent.
const (
	nodeSnapshot = "SNAPSHOT"
	nodeChanged  = "CHANGED"
	nodeDeleted  = "DELETED"
)

// WatchWorkflowNodes streams one workflow as its nodes change (braid's
// own RPC, for the UI): a SNAPSHOT with every node, then a CHANGED event
// per stored version that carries the workflow without its nodes (and
// without its spec unless that changed) and only the nodes that are new
// or differ from what was sent, and the IDs of those that went. So a
// client showing a 10,000-node workflow receives bytes in proportion to
// what changed, where a watch (WatchWorkflows) re-sends the whole
// workflow at every change.
//
// The comparison is made here, against the nodes last sent, so it holds
// for every store. When the store drops the watch (this stream fell too
// far behind), the stream subscribes again and sends a new SNAPSHOT: a
// client replaces what it had. DELETED ends the stream.
func (s *workflowServer) WatchWorkflowNodes(req *workflow.WatchWorkflowNodesRequest, stream grpc.ServerStreamingServer[workflow.WorkflowNodeEvent]) error {
	ctx := stream.Context()
	name, err := s.resolveName(ctx, req.GetNamespace(), req.GetName())
	if err != nil {
		return err
	}
	w := &nodeWatch{s: s, stream: stream, ns: req.GetNamespace(), name: name}
	headerSent := false
	for {
		events, err := s.store.Watch(ctx, store.KindWorkflow, w.ns)
		if err != nil {
			return storeError(err, "")
		}
		if !headerSent {
			// The stream opens here: errors above are plain errors with a status.
			if err := stream.SendHeader(nil); err != nil {
				return err
			}
			headerSent = true
		}
		// Read after subscribing: nothing between the two is missed.
		if done, err := w.sendCurrent(ctx, nodeSnapshot); done || err != nil {
			return err
		}
		if done, err := w.follow(ctx, events); done || err != nil {
			return err
		}
	}
}

// NodeDeltas is what a store may offer so that a change costs what
// changed (Capabilities.NodeDeltas): the workflow without its nodes, the
// nodes written after a version, and the IDs of all its nodes (sqlite.Store
// has it). Without it, each change reads the whole workflow and compares
// every node.
type NodeDeltas interface {
	WorkflowNodesSince(ctx context.Context, namespace, name string, since int64) (*v1alpha1.Workflow, v1alpha1.Nodes, []string, error)
}

// nodeWatch is the state of one WatchWorkflowNodes stream.
type nodeWatch struct {
	s        *workflowServer
	stream   grpc.ServerStreamingServer[workflow.WorkflowNodeEvent]
	ns, name string
	rv       int64 // the resourceVersion last sent
	spec     *v1alpha1.WorkflowSpec
	nodes    v1alpha1.Nodes // as last sent
}

// follow handles the store's events until the workflow is deleted (done),
// ctx ends (done) or the store drops the watch (not done: subscribe again).
func (w *nodeWatch) follow(ctx context.Context, events <-chan store.Event) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case ev, ok := <-events:
			if !ok {
				return false, nil
			}
			o := ev.Object
			if o.GetName() != w.name || (w.ns != "" && o.GetNamespace() != w.ns) {
				continue
			}
			if ev.Type == store.Deleted {
				return true, w.stream.Send(&workflow.WorkflowNodeEvent{Type: nodeDeleted})
			}
			if resourceVersion(o) <= w.rv {
				continue // sent already (or a newer one)
			}
			if done, err := w.sendCurrent(ctx, nodeChanged); done || err != nil {
				return done, err
			}
		}
	}
}

// sendCurrent reads the workflow with its nodes and sends what differs
// from what was sent (everything, for a SNAPSHOT). A workflow that is gone
// ends the stream with DELETED.
func (w *nodeWatch) sendCurrent(ctx context.Context, typ string) (bool, error) {
	if d := w.s.caps.NodeDeltas; d != nil && typ == nodeChanged && w.nodes != nil {
		wf, changed, ids, err := d.WorkflowNodesSince(ctx, w.ns, w.name, w.rv)
		if errors.Is(err, store.ErrNotFound) {
			return true, w.stream.Send(&workflow.WorkflowNodeEvent{Type: nodeDeleted})
		}
		if err != nil {
			return true, storeError(err, w.name)
		}
		if resourceVersion(wf) <= w.rv {
			return false, nil
		}
		ev := w.changedSince(changed, ids)
		w.head(ev, wf, typ)
		return false, w.stream.Send(ev)
	}
	o, err := w.s.store.Get(ctx, store.KindWorkflow, w.ns, w.name)
	if errors.Is(err, store.ErrNotFound) {
		return true, w.stream.Send(&workflow.WorkflowNodeEvent{Type: nodeDeleted})
	}
	if err != nil {
		return true, storeError(err, w.name)
	}
	wf, ok := o.(*v1alpha1.Workflow)
	if !ok {
		return true, status.Errorf(codes.Internal, "store returned %T for a workflow", o)
	}
	if typ == nodeChanged && resourceVersion(wf) <= w.rv {
		return false, nil
	}
	ev := w.changedAll(wf.Status.Nodes, typ)
	w.head(ev, wf, typ)
	return false, w.stream.Send(ev)
}

// changedAll is the event's nodes: those of nodes that differ from what
// was sent (all of them in a SNAPSHOT), and the IDs of those that went;
// nodes becomes what was sent.
func (w *nodeWatch) changedAll(nodes v1alpha1.Nodes, typ string) *workflow.WorkflowNodeEvent {
	ev := &workflow.WorkflowNodeEvent{Type: typ, Nodes: map[string]*v1alpha1.NodeStatus{}}
	for id, n := range nodes {
		if old, ok := w.nodes[id]; typ == nodeSnapshot || !ok || !reflect.DeepEqual(old, n) {
			ev.Nodes[id] = &n
		}
	}
	if typ != nodeSnapshot {
		for id := range w.nodes {
			if _, ok := nodes[id]; !ok {
				ev.RemovedNodes = append(ev.RemovedNodes, id)
			}
		}
		sort.Strings(ev.RemovedNodes)
	}
	w.nodes = nodes
	if w.nodes == nil {
		w.nodes = v1alpha1.Nodes{}
	}
	return ev
}

// changedSince is changedAll from a store's delta: the nodes written since
// the version sent (compared, as a write may leave a node as it was) and
// the IDs of every node now.
func (w *nodeWatch) changedSince(changed v1alpha1.Nodes, ids []string) *workflow.WorkflowNodeEvent {
	ev := &workflow.WorkflowNodeEvent{Type: nodeChanged, Nodes: map[string]*v1alpha1.NodeStatus{}}
	for id, n := range changed {
		if old, ok := w.nodes[id]; !ok || !reflect.DeepEqual(old, n) {
			ev.Nodes[id] = &n
		}
		w.nodes[id] = n
	}
	if len(ids) != len(w.nodes) {
		present := make(map[string]bool, len(ids))
		for _, id := range ids {
			present[id] = true
		}
		for id := range w.nodes {
			if !present[id] {
				ev.RemovedNodes = append(ev.RemovedNodes, id)
				delete(w.nodes, id)
			}
		}
		sort.Strings(ev.RemovedNodes)
	}
	return ev
}

// head puts the workflow without its nodes on the event (without its spec
// unless that changed), and records its version as sent.
func (w *nodeWatch) head(ev *workflow.WorkflowNodeEvent, wf *v1alpha1.Workflow, typ string) {
	h := *wf
	h.Status.Nodes = nil
	if typ == nodeSnapshot || !reflect.DeepEqual(w.spec, &wf.Spec) {
		w.spec = &wf.Spec
	} else {
		h.Spec = v1alpha1.WorkflowSpec{}
	}
	ev.Workflow = &h
	w.rv = resourceVersion(wf)
}
