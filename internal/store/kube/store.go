package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Defaults of Options.
const (
	DefaultCompressAbove = 256 << 10 // bytes of nodes JSON
	DefaultOffloadAbove  = 1 << 20   // bytes of compressed nodes (base64)
	DefaultOffloadGrace  = 5 * time.Minute
	DefaultWatchBuffer   = 1024
)

// Options configure a Store.
type Options struct {
	// Config reaches the apiserver (clientcmd or rest.InClusterConfig).
	Config *rest.Config
	// CompressAbove: nodes whose JSON is larger are written as
	// status.compressedNodes. 0: DefaultCompressAbove; negative: never.
	CompressAbove int
	// OffloadAbove: compressed nodes larger than this go to Offloader.
	// 0: DefaultOffloadAbove. Without an Offloader they stay compressed
	// and the apiserver decides whether the object fits.
	OffloadAbove int
	// Offloader keeps node maps too large for the object; nil: none.
	Offloader NodeOffloader
	// OffloadGrace is how long an offloaded version that is no longer
	// current is kept, for readers still holding the older object.
	// 0: DefaultOffloadGrace.
	OffloadGrace time.Duration
	// WatchBuffer is each Watch channel's buffer; a watcher that falls that
	// far behind is dropped (its channel closed). 0: DefaultWatchBuffer.
	WatchBuffer int
	// Namespace, when set, is the only namespace whose objects this store
	// watches and writes (a namespaced braid); cluster-scoped kinds are
	// still served. A call naming another namespace fails with
	// store.ErrForbidden; "" in a List or Watch means this namespace.
	Namespace string
	Logger    *slog.Logger     // nil: discard
	Clock     func() time.Time // nil: time.Now
}

// kindInfo is what the store knows of one kind.
type kindInfo struct {
	plural     string
	namespaced bool
	newObj     func() store.Object
	newList    func() runtime.Object
}

// kinds is a fixed table; the function keeps it out of package variables.
func kinds(k store.Kind) (kindInfo, bool) {
	switch k {
	case store.KindWorkflow:
		return kindInfo{v1alpha1.WorkflowPlural, true,
			func() store.Object { return &v1alpha1.Workflow{} },
			func() runtime.Object { return &v1alpha1.WorkflowList{} }}, true
	case store.KindWorkflowTemplate:
		return kindInfo{v1alpha1.WorkflowTemplatePlural, true,
			func() store.Object { return &v1alpha1.WorkflowTemplate{} },
			func() runtime.Object { return &v1alpha1.WorkflowTemplateList{} }}, true
	case store.KindClusterWorkflowTemplate:
		return kindInfo{v1alpha1.ClusterWorkflowTemplatePlural, false,
			func() store.Object { return &v1alpha1.ClusterWorkflowTemplate{} },
			func() runtime.Object { return &v1alpha1.ClusterWorkflowTemplateList{} }}, true
	case store.KindCronWorkflow:
		return kindInfo{v1alpha1.CronWorkflowPlural, true,
			func() store.Object { return &v1alpha1.CronWorkflow{} },
			func() runtime.Object { return &v1alpha1.CronWorkflowList{} }}, true
	case store.KindWorkflowEventBinding:
		return kindInfo{v1alpha1.WorkflowEventBindingPlural, true,
			func() store.Object { return &v1alpha1.WorkflowEventBinding{} },
			func() runtime.Object { return &v1alpha1.WorkflowEventBindingList{} }}, true
	}
	return kindInfo{}, false
}

// kindOf returns the store kind of a typed object.
func kindOf(obj store.Object) (store.Kind, error) {
	switch obj.(type) {
	case *v1alpha1.Workflow:
		return store.KindWorkflow, nil
	case *v1alpha1.WorkflowTemplate:
		return store.KindWorkflowTemplate, nil
	case *v1alpha1.ClusterWorkflowTemplate:
		return store.KindClusterWorkflowTemplate, nil
	case *v1alpha1.CronWorkflow:
		return store.KindCronWorkflow, nil
	case *v1alpha1.WorkflowEventBinding:
		return store.KindWorkflowEventBinding, nil
	}
	return "", fmt.Errorf("kube store: unsupported object type %T", obj)
}

// Store keeps braid's objects as custom resources. Reads come from shared
// informers, writes go to the apiserver. Safe for concurrent use.
type Store struct {
	opts  Options
	rc    *rest.RESTClient
	disc  discovery.DiscoveryInterface
	log   *slog.Logger
	now   func() time.Time
	ctx   context.Context // lives until Close
	stop  context.CancelFunc
	wg    sync.WaitGroup
	codec nodeCodec

	writes atomic.Int64

	mu        sync.Mutex
	informers map[store.Kind]*informer
	// statusSub: 0 unknown, 1 the Workflow CRD has the status
	// subresource, 2 it has not.
	statusSub atomic.Int32
}

// informer is one kind's shared informer and what this store wrote that
// it has not seen yet (read-your-writes).
type informer struct {
	kind store.Kind
	inf  cache.SharedIndexInformer
	mu   sync.Mutex
	// written holds, by namespace/name, the latest object this store wrote
	// (nil object: deleted) until the informer catches up.
	written map[string]writtenObj
}

type writtenObj struct {
	obj store.Object // nil: deleted
	uid string       // of the deleted object
	rv  int64
}

// New returns a Store on the cluster that opts.Config reaches. Nothing is
// read until the first call that needs a kind's informer.
func New(opts Options) (*Store, error) {
	if opts.Config == nil {
		return nil, errors.New("kube store: no rest config")
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("kube store: scheme: %w", err)
	}
	cfg := rest.CopyConfig(opts.Config)
	cfg.GroupVersion = &v1alpha1.SchemeGroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if cfg.UserAgent == "" {
		cfg.UserAgent = "braid-store"
	}
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 200, 400
	}
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube store: rest client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("kube store: discovery client: %w", err)
	}
	opts = withDefaults(opts)
	ctx, stop := context.WithCancel(context.Background())
	s := &Store{opts: opts, rc: rc, disc: disc, log: opts.Logger, now: opts.Clock, ctx: ctx, stop: stop,
		informers: map[store.Kind]*informer{}}
	s.codec = nodeCodec{compressAbove: opts.CompressAbove, offloadAbove: opts.OffloadAbove, off: opts.Offloader}
	return s, nil
}

func withDefaults(o Options) Options {
	if o.CompressAbove == 0 {
		o.CompressAbove = DefaultCompressAbove
	}
	if o.OffloadAbove == 0 {
		o.OffloadAbove = DefaultOffloadAbove
	}
	if o.OffloadGrace == 0 {
		o.OffloadGrace = DefaultOffloadGrace
	}
	if o.WatchBuffer <= 0 {
		o.WatchBuffer = DefaultWatchBuffer
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

// Close stops the informers. Watch channels close.
func (s *Store) Close() error {
	s.stop()
	s.wg.Wait()
	return nil
}

// Writes is the number of write requests sent to the apiserver so far
// (create, update, status update, delete), whatever their outcome.
func (s *Store) Writes() int64 { return s.writes.Load() }

// informer returns kind's informer, started and synced.
func (s *Store) informer(ctx context.Context, kind store.Kind) (*informer, error) {
	ki, ok := kinds(kind)
	if !ok {
		return nil, fmt.Errorf("kube store: unknown kind %q", kind)
	}
	s.mu.Lock()
	in := s.informers[kind]
	if in == nil {
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			return nil, errors.New("kube store: closed")
		}
		in = s.newInformer(kind, ki)
		s.informers[kind] = in
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			in.inf.RunWithContext(s.ctx)
		}()
	}
	s.mu.Unlock()
	if in.inf.HasSynced() {
		return in, nil
	}
	if !cache.WaitForCacheSync(ctx.Done(), in.inf.HasSynced) {
		return nil, fmt.Errorf("kube store: %s informer did not sync: %w", kind, context.Cause(ctx))
	}
	return in, nil
}

func (s *Store) newInformer(kind store.Kind, ki kindInfo) *informer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			out := ki.newList()
			err := s.rc.Get().NamespaceIfScoped(s.opts.Namespace, ki.namespaced).Resource(ki.plural).VersionedParams(&o, metav1.ParameterCodec).Do(ctx).Into(out)
			return out, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.Watch = true
			return s.rc.Get().NamespaceIfScoped(s.opts.Namespace, ki.namespaced).Resource(ki.plural).
				VersionedParams(&o, metav1.ParameterCodec).Watch(ctx)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, ki.newObj(), 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	in := &informer{kind: kind, inf: inf, written: map[string]writtenObj{}}
	if kind == store.KindWorkflow {
		// Nodes are expanded once, as objects enter the cache.
		_ = inf.SetTransform(func(o any) (any, error) {
			if wf, ok := o.(*v1alpha1.Workflow); ok {
				s.expandLogged(wf)
			}
			return o, nil
		})
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { in.seen(o, false) },
		UpdateFunc: func(_, o any) { in.seen(o, false) },
		DeleteFunc: func(o any) { in.seen(o, true) },
	})
	return in
}

// expandLogged expands a workflow's nodes in place, logging a failure (a
// Get tries an offloaded load again).
func (s *Store) expandLogged(wf *v1alpha1.Workflow) {
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	if err := s.codec.expand(ctx, wf); err != nil {
		s.log.Warn("kube store: expand workflow nodes", "workflow", wf.Namespace+"/"+wf.Name, "err", err)
	}
}

// seen drops what this store wrote once the informer has caught up with it.
func (in *informer) seen(o any, deleted bool) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o, deleted = d.Obj, true
	}
	m, ok := o.(metav1.Object)
	if !ok {
		return
	}
	key := cacheKey(m.GetNamespace(), m.GetName())
	in.mu.Lock()
	defer in.mu.Unlock()
	w, ok := in.written[key]
	if !ok {
		return
	}
	if deleted || w.obj == nil && string(m.GetUID()) != w.uid || parseRV(m.GetResourceVersion()) >= w.rv {
		delete(in.written, key)
	}
}

// remember records an object this store wrote (nil obj: deleted).
func (in *informer) remember(ns, name string, obj store.Object, uid string, rv int64) {
	in.mu.Lock()
	in.written[cacheKey(ns, name)] = writtenObj{obj: obj, uid: uid, rv: rv}
	in.mu.Unlock()
}

func cacheKey(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// managed refuses a namespace this store does not serve, and, in a
// namespaced store, the cluster-scoped kinds (whose RBAC a namespaced
// install does not grant). A namespaced call with namespace "" (List,
// Watch: every namespace) is narrowed to the managed one by the informer.
func (s *Store) managed(kind store.Kind, namespace string) error {
	ki, ok := kinds(kind)
	switch {
	case !ok || s.opts.Namespace == "":
		return nil
	case !ki.namespaced:
		return fmt.Errorf("kube store: %s is cluster-scoped, and this braid serves only namespace %q: %w",
			kind, s.opts.Namespace, store.ErrForbidden)
	case namespace == "" || namespace == s.opts.Namespace:
		return nil
	}
	return fmt.Errorf("kube store: namespace %q is not managed: this braid serves only namespace %q: %w",
		namespace, s.opts.Namespace, store.ErrForbidden)
}
