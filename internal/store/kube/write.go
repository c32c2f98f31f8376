package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Create creates obj and sets its metadata (name, uid, resourceVersion,
// creationTimestamp, generation) from the apiserver's answer. A Workflow
// created with a status gets it through the status subresource too.
func (s *Store) Create(ctx context.Context, obj store.Object) error {
	kind, ki, err := s.check(obj)
	if err != nil {
		return err
	}
	wire, pk, err := s.wireObject(ctx, obj)
	if err != nil {
		return err
	}
	if wire.GetResourceVersion() != "" { // the apiserver refuses one on create
		if wire == obj {
			wire = obj.DeepCopyObject().(store.Object)
		}
		wire.SetResourceVersion("")
	}
	out := ki.newObj()
	s.writes.Add(1)
	err = s.rc.Post().NamespaceIfScoped(obj.GetNamespace(), ki.namespaced).Resource(ki.plural).Body(wire).Do(ctx).Into(out)
	if err != nil {
		return mapErr(err, "create %s %s", kind, describe(obj))
	}
	if wf, ok := wire.(*v1alpha1.Workflow); ok && !emptyStatus(&wf.Status) {
		sub, err := s.hasStatusSubresource(ctx)
		if err != nil {
			copyMeta(obj, out)
			return err
		}
		if sub { // the apiserver dropped the status: write it
			wf.ObjectMeta = *out.(*v1alpha1.Workflow).ObjectMeta.DeepCopy()
			if out, err = s.putStatus(ctx, wf); err != nil {
				copyMeta(obj, wf)
				return err
			}
		}
	}
	copyMeta(obj, out)
	s.afterWrite(ctx, kind, obj, out, pk)
	return nil
}

// Update writes obj's metadata, spec and (for a Workflow, through the
// status subresource when the CRD has it) status, under optimistic
// concurrency: a stale resourceVersion fails with store.ErrConflict. A
// Workflow whose Status.Nodes is nil (from List or Watch) keeps the stored
// nodes.
func (s *Store) Update(ctx context.Context, obj store.Object) error {
	kind, ki, err := s.check(obj)
	if err != nil {
		return err
	}
	if obj.GetResourceVersion() == "" {
		return fmt.Errorf("kube store: update %s %s without a resourceVersion: %w", kind, describe(obj), store.ErrConflict)
	}
	if wf, ok := obj.(*v1alpha1.Workflow); ok && wf.Status.Nodes == nil {
		if err := s.keepNodes(ctx, wf); err != nil {
			return err
		}
	}
	wire, pk, err := s.wireObject(ctx, obj)
	if err != nil {
		return err
	}
	var out store.Object
	if w, ok := wire.(*v1alpha1.Workflow); ok {
		sub, err := s.hasStatusSubresource(ctx)
		if err != nil {
			return err
		}
		var spec store.Object
		if out, spec, err = s.putWorkflow(ctx, w, sub); err != nil {
			if spec != nil {
				copyMeta(obj, spec) // the spec is written: the caller holds its new version
			}
			return err
		}
	} else {
		out = ki.newObj()
		s.writes.Add(1)
		err = s.rc.Put().NamespaceIfScoped(obj.GetNamespace(), ki.namespaced).Resource(ki.plural).Name(obj.GetName()).Body(wire).Do(ctx).Into(out)
		if err != nil {
			return mapErr(err, "update %s %s", kind, describe(obj))
		}
	}
	copyMeta(obj, out)
	s.afterWrite(ctx, kind, obj, out, pk)
	return nil
}

// UpdateWorkflowStatus writes wf's status (all of it: an object has no
// per-node rows, so changedNodes is not needed) through the status
// subresource, under optimistic concurrency, and sets wf's new
// resourceVersion. Without the subresource, the whole object is written.
func (s *Store) UpdateWorkflowStatus(ctx context.Context, wf *v1alpha1.Workflow, _ []string) error {
	if wf == nil {
		return errors.New("kube store: nil workflow")
	}
	if err := s.managed(store.KindWorkflow, wf.Namespace); err != nil {
		return err
	}
	if wf.ResourceVersion == "" {
		return fmt.Errorf("kube store: update workflow status %s without a resourceVersion: %w", describe(wf), store.ErrConflict)
	}
	wire, pk, err := s.wireObject(ctx, wf)
	if err != nil {
		return err
	}
	w := wire.(*v1alpha1.Workflow)
	sub, err := s.hasStatusSubresource(ctx)
	if err != nil {
		return err
	}
	var out store.Object
	if sub {
		out, err = s.putStatus(ctx, w)
	} else {
		var spec store.Object
		if out, spec, err = s.putWorkflow(ctx, w, false); err != nil && spec != nil {
			copyMeta(wf, spec)
		}
	}
	if err != nil {
		return err
	}
	copyMeta(wf, out)
	s.afterWrite(ctx, store.KindWorkflow, wf, out, pk)
	return nil
}

// putWorkflow writes w (PUT), then its status through the subresource if
// the apiserver did not take it with the object: always when the CRD has
// the subresource (sub), and when the CRD gained one since discovery. On
// an error after the first write, spec is the object that write returned.
func (s *Store) putWorkflow(ctx context.Context, w *v1alpha1.Workflow, sub bool) (out, spec store.Object, err error) {
	got := &v1alpha1.Workflow{}
	s.writes.Add(1)
	err = s.rc.Put().Namespace(w.Namespace).Resource(v1alpha1.WorkflowPlural).Name(w.Name).Body(w).Do(ctx).Into(got)
	if err != nil {
		return nil, nil, mapErr(err, "update workflow %s", describe(w))
	}
	if sameStatus(&w.Status, &got.Status) {
		return got, nil, nil
	}
	if !sub {
		s.statusSub.Store(0)
		if sub, err = s.hasStatusSubresource(ctx); err != nil || !sub {
			return got, nil, nil // the status was pruned or defaulted, not dropped
		}
	}
	w.ObjectMeta = *got.ObjectMeta.DeepCopy()
	if out, err = s.putStatus(ctx, w); err != nil {
		return nil, got, err
	}
	return out, nil, nil
}

// putStatus writes wf's status through /status. A 404 may mean the CRD
// lost its subresource: discovery is asked again, and the whole object is
// written when it did.
func (s *Store) putStatus(ctx context.Context, wf *v1alpha1.Workflow) (store.Object, error) {
	out := &v1alpha1.Workflow{}
	s.writes.Add(1)
	err := s.rc.Put().Namespace(wf.Namespace).Resource(v1alpha1.WorkflowPlural).Name(wf.Name).SubResource("status").
		Body(wf).Do(ctx).Into(out)
	if apierrors.IsNotFound(err) {
		s.statusSub.Store(0)
		if sub, derr := s.hasStatusSubresource(ctx); derr == nil && !sub {
			s.writes.Add(1)
			err = s.rc.Put().Namespace(wf.Namespace).Resource(v1alpha1.WorkflowPlural).Name(wf.Name).Body(wf).Do(ctx).Into(out)
		}
	}
	if err != nil {
		return nil, mapErr(err, "update workflow status %s", describe(wf))
	}
	return out, nil
}

// Delete deletes an object, and a Workflow's offloaded nodes.
func (s *Store) Delete(ctx context.Context, kind store.Kind, namespace, name string) error {
	if err := s.managed(kind, namespace); err != nil {
		return err
	}
	ki, ok := kinds(kind)
	if !ok {
		return fmt.Errorf("kube store: unknown kind %q", kind)
	}
	if !ki.namespaced {
		namespace = ""
	}
	in := s.started(kind)
	var uid types.UID
	if in != nil {
		if cur, err := in.lookup(ctx, s, namespace, name); err == nil {
			uid = cur.GetUID()
		}
	}
	s.writes.Add(1)
	result := s.rc.Delete().NamespaceIfScoped(namespace, ki.namespaced).Resource(ki.plural).Name(name).Do(ctx)
	if err := result.Error(); err != nil {
		return mapErr(err, "delete %s %s", kind, cacheKey(namespace, name))
	}
	res, _ := result.Get() // the deleted object or a Status; either may name the uid
	switch r := res.(type) {
	case metav1.Object:
		uid = r.GetUID()
	case *metav1.Status:
		if r.Details != nil && r.Details.UID != "" {
			uid = r.Details.UID
		}
	}
	if in != nil {
		in.remember(namespace, name, nil, string(uid), math.MaxInt64)
	}
	if kind == store.KindWorkflow && s.opts.Offloader != nil && uid != "" {
		if err := s.opts.Offloader.Delete(ctx, string(uid)); err != nil {
			s.log.Warn("kube store: delete offloaded nodes", "workflow", cacheKey(namespace, name), "err", err)
		}
	}
	return nil
}

// check returns obj's kind and refuses a namespace on a cluster-scoped
// kind or none on a namespaced one.
func (s *Store) check(obj store.Object) (store.Kind, kindInfo, error) {
	if obj == nil {
		return "", kindInfo{}, errors.New("kube store: nil object")
	}
	kind, err := kindOf(obj)
	if err != nil {
		return "", kindInfo{}, err
	}
	ki, _ := kinds(kind)
	if err := s.managed(kind, obj.GetNamespace()); err != nil {
		return "", kindInfo{}, err
	}
	switch {
	case ki.namespaced && obj.GetNamespace() == "":
		return "", kindInfo{}, fmt.Errorf("kube store: %s %s has no namespace", kind, obj.GetName())
	case !ki.namespaced && obj.GetNamespace() != "":
		return "", kindInfo{}, fmt.Errorf("kube store: %s is cluster-scoped; namespace %q given", kind, obj.GetNamespace())
	}
	return kind, ki, nil
}

// wireObject returns what is sent for obj: for a Workflow a shallow copy
// whose nodes are packed (compressed or offloaded); other kinds as they are.
func (s *Store) wireObject(ctx context.Context, obj store.Object) (store.Object, packed, error) {
	wf, ok := obj.(*v1alpha1.Workflow)
	if !ok {
		return obj, packed{}, nil
	}
	pk, err := s.codec.pack(ctx, string(wf.UID), wf.Status.Nodes)
	if err != nil {
		return nil, packed{}, fmt.Errorf("kube store: workflow %s: %w", describe(wf), err)
	}
	w := *wf
	w.Status.Nodes, w.Status.CompressedNodes, w.Status.OffloadNodeStatusVersion = pk.nodes, pk.compressed, pk.version
	return &w, pk, nil
}

// keepNodes gives wf the nodes of its stored version (same resourceVersion).
func (s *Store) keepNodes(ctx context.Context, wf *v1alpha1.Workflow) error {
	if in := s.started(store.KindWorkflow); in != nil {
		if cur, err := in.lookup(ctx, s, wf.Namespace, wf.Name); err == nil && cur.GetResourceVersion() == wf.ResourceVersion {
			c := cur.(*v1alpha1.Workflow).DeepCopy() // the cache's copy is shared
			if err := s.codec.expand(ctx, c); err == nil {
				wf.Status.Nodes = c.Status.Nodes
				return nil
			}
		}
	}
	cur := &v1alpha1.Workflow{}
	if err := s.rc.Get().Namespace(wf.Namespace).Resource(v1alpha1.WorkflowPlural).Name(wf.Name).Do(ctx).Into(cur); err != nil {
		return mapErr(err, "read workflow %s", describe(wf))
	}
	if cur.ResourceVersion != wf.ResourceVersion {
		return fmt.Errorf("kube store: update workflow %s at resourceVersion %s (stored: %s): %w",
			describe(wf), wf.ResourceVersion, cur.ResourceVersion, store.ErrConflict)
	}
	if err := s.codec.expand(ctx, cur); err != nil {
		return fmt.Errorf("kube store: %w", err)
	}
	wf.Status.Nodes = cur.Status.Nodes
	return nil
}

// afterWrite remembers the written object for reads until the informer has
// it, and prunes offloaded versions that are no longer current.
func (s *Store) afterWrite(ctx context.Context, kind store.Kind, obj, out store.Object, pk packed) {
	if in := s.started(kind); in != nil {
		in.remember(out.GetNamespace(), out.GetName(), out, "", parseRV(out.GetResourceVersion()))
	}
	wf, ok := obj.(*v1alpha1.Workflow)
	if !ok || s.opts.Offloader == nil || pk.version == "" && pk.compressed == "" {
		return // small workflows were never offloaded (Delete cleans up the rare rest)
	}
	before := s.now().Add(-s.opts.OffloadGrace)
	if err := s.opts.Offloader.Prune(ctx, string(wf.UID), pk.version, before); err != nil {
		s.log.Warn("kube store: prune offloaded nodes", "workflow", describe(wf), "err", err)
	}
}

// started returns kind's informer if one was started, without waiting.
func (s *Store) started(kind store.Kind) *informer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.informers[kind]
}

// hasStatusSubresource says whether the Workflow CRD has a status
// subresource (asked once through discovery, again after a 404).
func (s *Store) hasStatusSubresource(ctx context.Context) (bool, error) {
	switch s.statusSub.Load() {
	case 1:
		return true, nil
	case 2:
		return false, nil
	}
	list, err := s.disc.ServerResourcesForGroupVersion(v1alpha1.APIVersion)
	if err != nil {
		return false, fmt.Errorf("kube store: discover the workflow status subresource: %w", err)
	}
	for _, r := range list.APIResources {
		if r.Name == v1alpha1.WorkflowPlural+"/status" {
			s.statusSub.Store(1)
			return true, nil
		}
	}
	s.log.Warn("kube store: the Workflow CRD has no status subresource; status is written with the object")
	s.statusSub.Store(2)
	return false, nil
}

// StatusSubresource says whether Workflow status is written through the
// status subresource (the CRD has one).
func (s *Store) StatusSubresource(ctx context.Context) (bool, error) {
	return s.hasStatusSubresource(ctx)
}

// emptyStatus: st encodes as the zero status does.
func emptyStatus(st *v1alpha1.WorkflowStatus) bool {
	return sameStatus(st, &v1alpha1.WorkflowStatus{})
}

// sameStatus compares two statuses as JSON (the apiserver's copy against
// the one to write).
func sameStatus(a, b *v1alpha1.WorkflowStatus) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// copyMeta gives dst the server-set metadata of src.
func copyMeta(dst, src store.Object) {
	dst.SetName(src.GetName())
	dst.SetUID(src.GetUID())
	dst.SetResourceVersion(src.GetResourceVersion())
	dst.SetGeneration(src.GetGeneration())
	dst.SetCreationTimestamp(src.GetCreationTimestamp())
	dst.SetManagedFields(src.GetManagedFields())
}

func describe(o metav1.Object) string {
	if o.GetName() == "" {
		return cacheKey(o.GetNamespace(), o.GetGenerateName()+"*")
	}
	return cacheKey(o.GetNamespace(), o.GetName())
}

// mapErr maps apiserver errors to the store's sentinels, keeping the
// apiserver's message.
func mapErr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	var sentinel error
	switch {
	case apierrors.IsNotFound(err):
		sentinel = store.ErrNotFound
	case apierrors.IsAlreadyExists(err):
		sentinel = store.ErrAlreadyExists
	case apierrors.IsConflict(err):
		sentinel = store.ErrConflict
	default:
		return fmt.Errorf("kube store: %s: %w", what, err)
	}
	return fmt.Errorf("kube store: %s: %w (%s)", what, sentinel, err.Error())
}
