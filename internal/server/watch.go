package server

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// WatchWorkflows streams the workflows of a namespace ("" for all) that
// match listOptions' label and field selectors, as a Kubernetes watch
// does: first an ADDED event for each current match (unless
// listOptions.resourceVersion names a version other than "0": the store
// cannot replay history, so such a watch starts at "now"), then ADDED,
// MODIFIED and DELETED as they happen. An object that stops matching the
// label selector is sent as DELETED, one that starts matching as ADDED;
// the first event of a workflow this stream has not sent is ADDED.
//
// A field selector metadata.name=X (X may be @latest) is resolved first,
// so an unknown name fails with NotFound before the stream opens.
//
// The store's watch events carry workflows without their nodes, so every
// ADDED or MODIFIED workflow is read again with Get: clients (argo watch,
// argo wait) render the node tree. That read may return a newer version
// than the event's; events older than what was sent are skipped, so each
// version is sent at most once and in order. A DELETED event carries the
// workflow as the store's event has it, without nodes.
//
// `fields` is applied to the object; its paths are relative to the stream
// envelope (result.object.metadata.name), as in Argo.
func (s *workflowServer) WatchWorkflows(req *workflow.WatchWorkflowsRequest, stream grpc.ServerStreamingServer[workflow.WorkflowWatchEvent]) error {
	ctx := stream.Context()
	lo := listOptions(req.GetListOptions())
	if t := lo.TimeoutSeconds; t != nil && *t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*t)*time.Second)
		defer cancel()
	}
	f, err := s.watchFilter(ctx, req.GetNamespace(), lo)
	if err != nil {
		return err
	}
	events, err := s.store.Watch(ctx, store.KindWorkflow, req.GetNamespace())
	if err != nil {
		return storeError(err, "")
	}
	w := &workflowWatch{
		s: s, f: f, stream: stream, ns: req.GetNamespace(),
		fields: objectFields(req.GetFields()), sent: map[string]int64{},
	}
	// The stream opens here: errors above are plain errors with a status.
	if err := stream.SendHeader(nil); err != nil {
		return err
	}
	rv := lo.ResourceVersion
	w.initial = rv == "" || rv == "0"
	if w.initial {
		// Listed after subscribing, so nothing between the two is missed;
		// what the list already shows is skipped when its event arrives.
		if err := w.sendCurrent(ctx); err != nil {
			return err
		}
	}
	for {
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && stream.Context().Err() == nil {
				return nil // listOptions.timeoutSeconds: a normal end
			}
			return status.FromContextError(ctx.Err()).Err()
		case ev, ok := <-events:
			if !ok {
				return status.Error(codes.ResourceExhausted, "watch closed: the watcher fell behind or the store closed; watch again")
			}
			if err := w.handle(ctx, ev); err != nil {
				return err
			}
		}
	}
}

// WatchEvents streams Kubernetes core/v1 Events. braid has none, so the
// stream opens and stays empty until the client goes away.
func (s *workflowServer) WatchEvents(_ *workflow.WatchEventsRequest, stream grpc.ServerStreamingServer[corev1.Event]) error {
	if err := stream.SendHeader(nil); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// watchFilter selects the workflows a watch sends.
type watchFilter struct {
	labels labels.Selector
	fields fields.Selector // metadata.name is resolved (no @latest)
}

func (f watchFilter) matches(o store.Object) bool {
	set := fields.Set{"metadata.name": o.GetName(), "metadata.namespace": o.GetNamespace()}
	if wf, ok := o.(*v1alpha1.Workflow); ok {
		set["status.phase"] = string(wf.Status.Phase)
	}
	return f.labels.Matches(labels.Set(o.GetLabels())) && f.fields.Matches(set)
}

// watchFilter parses the selectors and resolves a metadata.name
// requirement: @latest becomes the newest workflow's name, and a name that
// does not exist is NotFound.
func (s *workflowServer) watchFilter(ctx context.Context, namespace string, lo metav1.ListOptions) (watchFilter, error) {
	f := watchFilter{labels: labels.Everything(), fields: fields.Everything()}
	if ls := strings.TrimSpace(lo.LabelSelector); ls != "" {
		sel, err := labels.Parse(ls)
		if err != nil {
			return f, status.Errorf(codes.InvalidArgument, "listOptions.labelSelector %q: %v", ls, err)
		}
		f.labels = sel
	}
	fs := storeFieldSelector(lo.FieldSelector)
	if fs == "" {
		return f, nil
	}
	sel, err := fields.ParseSelector(fs)
	if err != nil {
		return f, status.Errorf(codes.InvalidArgument, "listOptions.fieldSelector %q: %v", fs, err)
	}
	var parts []fields.Selector
	for _, r := range sel.Requirements() {
		switch r.Field {
		case "metadata.name", "metadata.namespace", "status.phase":
		default:
			return f, status.Errorf(codes.InvalidArgument, "listOptions.fieldSelector %q: unsupported requirement on %q (metadata.name, metadata.namespace, status.phase)", fs, r.Field)
		}
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals:
			v := r.Value
			if r.Field == "metadata.name" {
				if v, err = s.resolveName(ctx, namespace, v); err != nil {
					return f, err
				}
			}
			parts = append(parts, fields.OneTermEqualSelector(r.Field, v))
		case selection.NotEquals:
			parts = append(parts, fields.OneTermNotEqualSelector(r.Field, r.Value))
		default:
			return f, status.Errorf(codes.InvalidArgument, "listOptions.fieldSelector %q: unsupported operator %q", fs, r.Operator)
		}
	}
	f.fields = fields.AndSelectors(parts...)
	return f, nil
}

// resolveName returns the workflow name a watch selects, or NotFound.
func (s *workflowServer) resolveName(ctx context.Context, namespace, name string) (string, error) {
	if namespace != "" || name == latest {
		wf, err := s.get(ctx, namespace, name)
		if err != nil {
			return "", err
		}
		return wf.Name, nil
	}
	// All namespaces: the name may exist in several; one is enough.
	objs, _, err := s.store.List(ctx, store.KindWorkflow, "", store.ListOptions{FieldSelector: "metadata.name=" + name, Limit: 1})
	if err != nil {
		return "", storeError(err, name)
	}
	if len(objs) == 0 {
		return "", status.Errorf(codes.NotFound, "workflows.argoproj.io %q not found", name)
	}
	return name, nil
}

// objectFields turns a watch's `fields` (paths relative to the envelope,
// result.object.x) into paths relative to the object.
func objectFields(list string) objectFieldList {
	list = strings.TrimSpace(list)
	if list == "" {
		return objectFieldList{keepAll: true}
	}
	drop := strings.HasPrefix(list, "-")
	if drop {
		list = list[1:]
	}
	var paths []string
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		switch {
		case p == "result" || p == "result.object":
			return objectFieldList{keepAll: !drop}
		case strings.HasPrefix(p, "result.object."):
			paths = append(paths, strings.TrimPrefix(p, "result.object."))
		}
	}
	switch {
	case len(paths) == 0 && drop:
		return objectFieldList{keepAll: true}
	case len(paths) == 0:
		return objectFieldList{}
	case drop:
		return objectFieldList{keepAll: true, fields: "-" + strings.Join(paths, ",")}
	default:
		return objectFieldList{keepAll: true, fields: strings.Join(paths, ",")}
	}
}

// objectFieldList is what of a watched object is sent: nothing (keepAll
// false), or the object filtered by fields (toStructFields' syntax).
type objectFieldList struct {
	keepAll bool
	fields  string
}

// workflowWatch is the state of one WatchWorkflows stream.
type workflowWatch struct {
	s       *workflowServer
	f       watchFilter
	stream  grpc.ServerStreamingServer[workflow.WorkflowWatchEvent]
	ns      string
	fields  objectFieldList
	initial bool             // the current objects were sent first
	sent    map[string]int64 // namespace/name -> resourceVersion sent
}

func watchKey(o store.Object) string { return o.GetNamespace() + "/" + o.GetName() }

func resourceVersion(o store.Object) int64 {
	rv, _ := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
	return rv
}

// sendCurrent sends an ADDED event for each workflow that matches now.
func (w *workflowWatch) sendCurrent(ctx context.Context) error {
	objs, _, err := w.s.store.List(ctx, store.KindWorkflow, w.ns, store.ListOptions{
		LabelSelector: w.f.labels.String(),
		FieldSelector: w.f.fields.String(),
	})
	if err != nil {
		return storeError(err, "")
	}
	for _, o := range objs {
		if err := w.sendFull(ctx, store.Added, o); err != nil {
			return err
		}
	}
	return nil
}

// handle turns one store event into at most one stream event.
func (w *workflowWatch) handle(ctx context.Context, ev store.Event) error {
	o := ev.Object
	key := watchKey(o)
	last, known := w.sent[key]
	if ev.Type == store.Deleted {
		if !known && !w.f.matches(o) {
			return nil
		}
		delete(w.sent, key)
		return w.send(store.Deleted, o)
	}
	if known && resourceVersion(o) <= last {
		return nil // already sent this version or a newer one
	}
	if !w.f.matches(o) {
		if !known {
			return nil
		}
		delete(w.sent, key) // it left the selection
		return w.send(store.Deleted, o)
	}
	// New to this client: created, or it starts to match the selectors,
	// or (a watch not from "0") changed since the client's list. Kubernetes
	// sends ADDED for the first two; the store's events do not say whether
	// the old version matched, so a change to a workflow the client listed
	// also comes as ADDED, which list-watch clients take as an update.
	t := store.Modified
	if !known {
		t = store.Added
	}
	return w.sendFull(ctx, t, o)
}

// sendFull reads o again (with its nodes) and sends it, unless it is gone
// (its DELETED event follows) or that version was already sent.
func (w *workflowWatch) sendFull(ctx context.Context, t store.EventType, o store.Object) error {
	full, err := w.s.store.Get(ctx, store.KindWorkflow, o.GetNamespace(), o.GetName())
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return storeError(err, o.GetName())
	}
	key := watchKey(full)
	if last, ok := w.sent[key]; ok && resourceVersion(full) <= last {
		return nil
	}
	if !w.f.matches(full) { // changed again since the event
		return nil
	}
	return w.send(t, full)
}

func (w *workflowWatch) send(t store.EventType, o store.Object) error {
	var obj *v1alpha1.Workflow
	if w.fields.keepAll {
		wf, ok := o.(*v1alpha1.Workflow)
		if !ok {
			return status.Errorf(codes.Internal, "store returned %T for a workflow", o)
		}
		var err error
		if obj, err = withFields(wf, w.fields.fields); err != nil {
			return err
		}
	}
	if err := w.stream.Send(&workflow.WorkflowWatchEvent{Type: string(t), Object: obj}); err != nil {
		return err
	}
	if t == store.Deleted {
		delete(w.sent, watchKey(o))
	} else {
		w.sent[watchKey(o)] = resourceVersion(o)
	}
	return nil
}
