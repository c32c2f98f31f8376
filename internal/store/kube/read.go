package kube

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Get returns a fresh copy of an object from the informer's cache (or what
// this store wrote last, when the cache has not caught up). A Workflow
// comes with every node in Status.Nodes, however it is stored.
func (s *Store) Get(ctx context.Context, kind store.Kind, namespace, name string) (store.Object, error) {
	if err := s.managed(kind, namespace); err != nil {
		return nil, err
	}
	in, err := s.informer(ctx, kind)
	if err != nil {
		return nil, err
	}
	if ki, _ := kinds(kind); !ki.namespaced {
		namespace = ""
	}
	obj, err := in.lookup(ctx, s, namespace, name)
	if err != nil {
		return nil, err
	}
	out := obj.DeepCopyObject().(store.Object)
	if wf, ok := out.(*v1alpha1.Workflow); ok {
		if err := s.codec.expand(ctx, wf); err != nil {
			return nil, fmt.Errorf("kube store: get: %w", err)
		}
	}
	return out, nil
}

// lookup returns the newest of the cached and the written object; it must
// not be modified.
func (in *informer) lookup(ctx context.Context, s *Store, namespace, name string) (store.Object, error) {
	key := cacheKey(namespace, name)
	item, exists, err := in.inf.GetIndexer().GetByKey(key)
	if err != nil {
		return nil, fmt.Errorf("kube store: get %s %s: %w", in.kind, key, err)
	}
	var cached store.Object
	if exists {
		cached, _ = item.(store.Object)
	}
	in.mu.Lock()
	w, written := in.written[key]
	in.mu.Unlock()
	switch {
	case written && w.obj == nil && (cached == nil || string(cached.GetUID()) == w.uid):
		cached = nil // deleted by this store
	case written && w.obj != nil && (cached == nil || parseRV(cached.GetResourceVersion()) < w.rv):
		cached = w.obj
	}
	if cached == nil {
		return nil, fmt.Errorf("kube store: %s %s: %w", in.kind, key, store.ErrNotFound)
	}
	return cached, nil
}

// overlay returns the cached items with what this store wrote and the
// informer has not seen yet put over them (read-your-writes).
func (in *informer) overlay(items []any, namespace string) []store.Object {
	out := make([]store.Object, 0, len(items))
	in.mu.Lock()
	defer in.mu.Unlock()
	done := map[string]bool{}
	for _, it := range items {
		o, ok := it.(store.Object)
		if !ok {
			continue
		}
		key := cacheKey(o.GetNamespace(), o.GetName())
		if w, ok := in.written[key]; ok {
			done[key] = true
			switch {
			case w.obj == nil && string(o.GetUID()) == w.uid:
				continue
			case w.obj != nil && parseRV(o.GetResourceVersion()) < w.rv:
				o = w.obj
			}
		}
		out = append(out, o)
	}
	for key, w := range in.written {
		if !done[key] && w.obj != nil && (namespace == "" || w.obj.GetNamespace() == namespace) {
			out = append(out, w.obj)
		}
	}
	return out
}

// List returns the objects of a kind in a namespace ("" for all) from the
// informer's cache, in opts.Order (newest first by default), filtered by
// opts, and a continue token when more remain; opts.Fields is not used
// (the cache holds whole objects, and only a page is copied). Workflows
// come WITHOUT nodes (Status.Nodes nil), as the embedded store gives them:
// Get a workflow for its nodes.
func (s *Store) List(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) ([]store.Object, string, error) {
	objs, err := s.matching(ctx, kind, namespace, opts)
	if err != nil {
		return nil, "", err
	}
	sort.Slice(objs, func(i, j int) bool { return positionOf(objs[i], opts.Order).before(positionOf(objs[j], opts.Order)) })
	return page(objs, opts)
}

// Count is how many objects List with opts would return from
// opts.Continue on, over all its pages (opts.Limit is ignored): with the
// Continue of a page, how many come after it. It filters the informer's
// cache as List does, without sorting or copying.
func (s *Store) Count(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) (int64, error) {
	objs, err := s.matching(ctx, kind, namespace, opts)
	if err != nil {
		return 0, err
	}
	return countAfter(objs, opts)
}

// countAfter is how many of objs (in any order) come after opts.Continue.
func countAfter(objs []store.Object, opts store.ListOptions) (int64, error) {
	after, err := continueAt(opts)
	if err != nil || after == nil {
		return int64(len(objs)), err
	}
	var n int64
	for _, o := range objs {
		if after.before(positionOf(o, opts.Order)) {
			n++
		}
	}
	return n, nil
}

// matching are the cached objects (not copies) of a kind in a namespace
// ("" for all) that opts' filters keep, in no order.
func (s *Store) matching(ctx context.Context, kind store.Kind, namespace string, opts store.ListOptions) ([]store.Object, error) {
	if err := s.managed(kind, namespace); err != nil {
		return nil, err
	}
	in, err := s.informer(ctx, kind)
	if err != nil {
		return nil, err
	}
	f, err := newFilter(opts)
	if err != nil {
		return nil, err
	}
	switch opts.Order {
	case store.OrderNewest, store.OrderArgo:
	default:
		return nil, fmt.Errorf("kube store: list order %q is not one of %q (newest first), %q", opts.Order, store.OrderNewest, store.OrderArgo)
	}
	var items []any
	if ki, _ := kinds(kind); !ki.namespaced {
		namespace = ""
	}
	if namespace != "" {
		items, err = in.inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
		if err != nil {
			return nil, fmt.Errorf("kube store: list %s: %w", kind, err)
		}
	} else {
		items = in.inf.GetIndexer().List()
	}
	objs := make([]store.Object, 0, len(items))
	for _, o := range in.overlay(items, namespace) {
		if f.matches(o) {
			objs = append(objs, o)
		}
	}
	return objs, nil
}

// position is an object's place in a list, and what a continue token
// holds: the last object returned. The default order is newest created
// first, then by namespace and name; store.OrderArgo puts unfinished
// workflows first and orders by At (seconds) before that, and its tokens
// carry O, U and A.
type position struct {
	O  store.ListOrder `json:"o,omitempty"`
	U  bool            `json:"u,omitempty"` // unfinished
	A  int64           `json:"a,omitempty"` // finishedAt, or else creationTimestamp, in unix seconds
	T  int64           `json:"t"`
	NS string          `json:"ns,omitempty"`
	N  string          `json:"n"`
}

func positionOf(o store.Object, order store.ListOrder) position {
	p := position{T: o.GetCreationTimestamp().UnixNano(), NS: o.GetNamespace(), N: o.GetName()}
	if order != store.OrderArgo {
		return p
	}
	p.O, p.U, p.A = order, true, o.GetCreationTimestamp().Unix()
	if wf, ok := o.(*v1alpha1.Workflow); ok && !wf.Status.FinishedAt.IsZero() {
		p.U, p.A = false, wf.Status.FinishedAt.Unix()
	}
	return p
}

// before says whether p comes before q in their order.
func (p position) before(q position) bool {
	switch {
	case p.U != q.U:
		return p.U
	case p.A != q.A:
		return p.A > q.A
	case p.T != q.T:
		return p.T > q.T
	case p.NS != q.NS:
		return p.NS < q.NS
	}
	return p.N < q.N
}

// continueAt is the position opts.Continue holds, or nil without one.
func continueAt(opts store.ListOptions) (*position, error) {
	if opts.Continue == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(opts.Continue)
	var p position
	if err == nil {
		err = json.Unmarshal(raw, &p)
	}
	if err == nil && p.O != opts.Order {
		err = fmt.Errorf("issued for the list order %q, not %q", p.O, opts.Order)
	}
	if err != nil {
		return nil, fmt.Errorf("kube store: bad continue token %q: %w", opts.Continue, err)
	}
	return &p, nil
}

// page is the page of objs (sorted) that opts asks for, copied, and the
// token of the next one.
func page(objs []store.Object, opts store.ListOptions) ([]store.Object, string, error) {
	p, err := continueAt(opts)
	if err != nil {
		return nil, "", err
	}
	if p != nil {
		i := sort.Search(len(objs), func(i int) bool { return p.before(positionOf(objs[i], opts.Order)) })
		objs = objs[i:]
	}
	next := ""
	if opts.Limit > 0 && int64(len(objs)) > opts.Limit {
		objs = objs[:opts.Limit]
		raw, _ := json.Marshal(positionOf(objs[len(objs)-1], opts.Order))
		next = base64.RawURLEncoding.EncodeToString(raw)
	}
	out := make([]store.Object, len(objs))
	for i, o := range objs {
		out[i] = copyWithoutNodes(o)
	}
	return out, next, nil
}

// copyWithoutNodes deep-copies o, except a Workflow's nodes (left nil).
func copyWithoutNodes(o store.Object) store.Object {
	wf, ok := o.(*v1alpha1.Workflow)
	if !ok {
		return o.DeepCopyObject().(store.Object)
	}
	shallow := *wf
	shallow.Status.Nodes, shallow.Status.CompressedNodes, shallow.Status.OffloadNodeStatusVersion = nil, "", ""
	return shallow.DeepCopy()
}

// filter is a parsed store.ListOptions.
type filter struct {
	labels labels.Selector
	fields fields.Selector
	opts   store.ListOptions
}

// listFields are the fields a field selector may name.
func listFields(o store.Object) fields.Set {
	set := fields.Set{"metadata.name": o.GetName(), "metadata.namespace": o.GetNamespace(), "status.phase": ""}
	if wf, ok := o.(*v1alpha1.Workflow); ok {
		set["status.phase"] = string(wf.Status.Phase)
	}
	return set
}

func newFilter(opts store.ListOptions) (filter, error) {
	f := filter{labels: labels.Everything(), fields: fields.Everything(), opts: opts}
	var err error
	if opts.LabelSelector != "" {
		if f.labels, err = labels.Parse(opts.LabelSelector); err != nil {
			return filter{}, fmt.Errorf("kube store: label selector %q: %w", opts.LabelSelector, err)
		}
	}
	if opts.FieldSelector != "" {
		if f.fields, err = fields.ParseSelector(opts.FieldSelector); err != nil {
			return filter{}, fmt.Errorf("kube store: field selector %q: %w", opts.FieldSelector, err)
		}
		for _, r := range f.fields.Requirements() {
			switch r.Field {
			case "metadata.name", "metadata.namespace", "status.phase":
			default:
				return filter{}, fmt.Errorf("kube store: field selector %q: unsupported field %q", opts.FieldSelector, r.Field)
			}
		}
	}
	switch opts.NameFilter {
	case "", "Exact", "Contains", "Prefix", "NotEquals":
	default:
		return filter{}, fmt.Errorf("kube store: unknown name filter %q", opts.NameFilter)
	}
	return f, nil
}

func (f filter) matches(o store.Object) bool {
	if !f.labels.Matches(labels.Set(o.GetLabels())) || !f.fields.Matches(listFields(o)) {
		return false
	}
	if n := f.opts.Name; n != "" {
		name := o.GetName()
		ok := false
		switch f.opts.NameFilter {
		case "", "Exact":
			ok = name == n
		case "Contains":
			ok = strings.Contains(name, n)
		case "Prefix":
			ok = strings.HasPrefix(name, n)
		case "NotEquals":
			ok = name != n
		}
		if !ok {
			return false
		}
	}
	ct := o.GetCreationTimestamp().Time
	if !f.opts.CreatedAfter.IsZero() && !ct.After(f.opts.CreatedAfter) {
		return false
	}
	if !f.opts.CreatedBefore.IsZero() && !ct.Before(f.opts.CreatedBefore) {
		return false
	}
	if fb := f.opts.FinishedBefore; !fb.IsZero() {
		// To the second, as the JSON time is.
		wf, ok := o.(*v1alpha1.Workflow)
		return ok && !wf.Status.FinishedAt.IsZero() && wf.Status.FinishedAt.Truncate(time.Second).Before(fb)
	}
	return true
}

// Watch streams the changes of a kind in a namespace ("" for all) from now
// on, from the informer. Workflows come without nodes, as from List. The
// channel closes when ctx ends, the store closes, or the watcher falls
// Options.WatchBuffer events behind: then list and watch again.
func (s *Store) Watch(ctx context.Context, kind store.Kind, namespace string) (<-chan store.Event, error) {
	if err := s.managed(kind, namespace); err != nil {
		return nil, err
	}
	in, err := s.informer(ctx, kind)
	if err != nil {
		return nil, err
	}
	w := &watcher{ch: make(chan store.Event, s.opts.WatchBuffer), ns: namespace, drop: make(chan struct{})}
	reg, err := in.inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(o any, initial bool) {
			if !initial {
				w.send(store.Added, o)
			}
		},
		UpdateFunc: func(_, o any) { w.send(store.Modified, o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			w.send(store.Deleted, o)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("kube store: watch %s: %w", kind, err)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-ctx.Done():
		case <-s.ctx.Done():
		case <-w.drop:
		}
		_ = in.inf.RemoveEventHandler(reg)
		w.close()
	}()
	return w.ch, nil
}

// watcher is one Watch: it never blocks the informer.
type watcher struct {
	ns     string
	mu     sync.Mutex
	ch     chan store.Event
	closed bool
	drop   chan struct{} // closed when the watcher is dropped
}

func (w *watcher) send(t store.EventType, o any) {
	obj, ok := o.(store.Object)
	if !ok || w.ns != "" && obj.GetNamespace() != w.ns {
		return
	}
	ev := store.Event{Type: t, Object: copyWithoutNodes(obj)}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	select {
	case w.ch <- ev:
	default: // too far behind: drop the watcher
		w.closed = true
		close(w.ch)
		close(w.drop)
	}
}

func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
}
