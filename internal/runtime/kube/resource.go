package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/braidwf/braid/internal/executor/emissary"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Messages of resource runs.
const (
	// MsgResourceDeadline: the run's absolute Deadline passed.
	MsgResourceDeadline = "Step exceeded its deadline"
	// MsgNoRestConfig: the runtime was built without Config.Rest.
	MsgNoRestConfig = "the Kubernetes runtime has no client configuration for resource templates (Config.Rest)"
)

// resources runs resource templates in the controller's process: no pod,
// the dynamic client impersonating the workflow's service account, a RESTMapper
// on discovery (cached, refreshed on a miss), and a watch on the one object
// while its conditions are pending.
type resources struct {
	rt     *Runtime
	rest   *rest.Config // nil: resource runs end Error
	mapper *restmapper.DeferredDiscoveryRESTMapper
	expand meta.RESTMapperWithContext // mapper with kubectl's short names
	ctx    context.Context            // cancelled by close
	cancel context.CancelFunc

	mu      sync.Mutex
	runs    map[string]*resRun
	clients map[string]dynamic.Interface // by impersonated user
}

// resRun is one resource run.
type resRun struct {
	id, wfUID, nodeID string
	last              runtime.StepEvent
	cancel            context.CancelCauseFunc
}

func newResources(rt *Runtime, rc *rest.Config) (*resources, error) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &resources{rt: rt, ctx: ctx, cancel: cancel, runs: map[string]*resRun{}, clients: map[string]dynamic.Interface{}}
	if rc == nil {
		return r, nil
	}
	r.rest = rest.CopyConfig(rc)
	dc, err := discovery.NewDiscoveryClientForConfig(r.rest)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("kube runtime: discovery client: %w", err)
	}
	cached := memory.NewMemCacheClientWithContext(dc)
	r.mapper = restmapper.NewDeferredDiscoveryRESTMapperWithContext(cached)
	r.expand = restmapper.NewShortcutExpanderWithContext(r.mapper, cached, func(string) {})
	return r, nil
}

// close cancels every run's work (their objects stay).
func (r *resources) close() {
	r.cancel()
}

// isResource reports whether run is one the controller runs itself: a
// resource template's, or a data template's (data.go).
func isResource(run runtime.Run) bool {
	return run.Template != nil && (run.Template.Resource != nil || run.Template.Data != nil)
}

// start begins run: Running at once, then its action and wait in a
// goroutine, and the final event. Starting a known run does nothing.
func (r *resources) start(run runtime.Run) {
	r.mu.Lock()
	if _, ok := r.runs[run.ID]; ok {
		r.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancelCause(r.ctx)
	rr := &resRun{id: run.ID, wfUID: run.WorkflowUID, nodeID: run.NodeID, cancel: cancel}
	now := r.rt.now()
	rr.last = runtime.StepEvent{RunID: run.ID, WorkflowUID: run.WorkflowUID, NodeID: run.NodeID,
		Result: step.Result{Phase: v1alpha1.NodeRunning, StartedAt: now}}
	r.runs[run.ID] = rr
	ev := rr.last
	r.mu.Unlock()
	r.rt.events.Push(ev)
	ctx, stop := withDeadlines(ctx, run, now)
	go func() {
		defer stop()
		ph, msg, outs := r.exec(ctx, run)
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			ph, msg, outs = v1alpha1.NodeFailed, causeMessage(cause), nil
		}
		r.finish(rr, step.Result{Phase: ph, Message: msg, Outputs: outs})
	}()
}

// deadlineErr ends a run whose deadline passed.
type deadlineErr string

func (e deadlineErr) Error() string { return string(e) }

// killedErr ends a run that Kill stopped.
var errKilled = errors.New(MsgKilled)

func causeMessage(err error) string {
	var d deadlineErr
	switch {
	case errors.As(err, &d):
		return string(d)
	case errors.Is(err, errKilled):
		return MsgKilled
	}
	return "the Kubernetes runtime was closed while the step ran"
}

// withDeadlines bounds ctx by the run's ActiveDeadline (from now) and its
// absolute Deadline, whichever comes first.
func withDeadlines(ctx context.Context, run runtime.Run, now time.Time) (context.Context, context.CancelFunc) {
	var at time.Time
	var msg string
	if run.ActiveDeadline > 0 {
		at, msg = now.Add(run.ActiveDeadline), emissary.MsgActiveDeadline
	}
	if !run.Deadline.IsZero() && (at.IsZero() || run.Deadline.Before(at)) {
		at, msg = run.Deadline, MsgResourceDeadline
	}
	if at.IsZero() {
		return ctx, func() {}
	}
	return context.WithDeadlineCause(ctx, at, deadlineErr(msg))
}

// finish records and emits a run's final event, with the result res, once.
func (r *resources) finish(rr *resRun, res step.Result) {
	r.mu.Lock()
	if rr.last.Phase.Completed() {
		r.mu.Unlock()
		return
	}
	res.StartedAt, res.FinishedAt = rr.last.StartedAt, r.rt.now()
	ev := runtime.StepEvent{RunID: rr.id, WorkflowUID: rr.wfUID, NodeID: rr.nodeID, Result: res}
	rr.last = ev
	r.mu.Unlock()
	r.rt.events.Push(ev)
}

// kill stops a known run's work, leaving its object, and ends it Failed;
// false: not a resource run this runtime knows.
func (r *resources) kill(runID string) bool {
	r.mu.Lock()
	rr := r.runs[runID]
	r.mu.Unlock()
	if rr == nil {
		return false
	}
	rr.cancel(errKilled)
	r.finish(rr, step.Result{Phase: v1alpha1.NodeFailed, Message: MsgKilled})
	return true
}

// status is a known run's latest event.
func (r *resources) status(runID string) (runtime.StepEvent, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rr := r.runs[runID]; rr != nil {
		return rr.last, true
	}
	return runtime.StepEvent{}, false
}

// client is the dynamic client acting as user.
func (r *resources) client(user string) (dynamic.Interface, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clients[user]; c != nil {
		return c, nil
	}
	rc := rest.CopyConfig(r.rest)
	rc.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("dynamic client as %s: %w", user, err)
	}
	r.clients[user] = c
	return c, nil
}

// mapping finds the resource of gvk, refreshing discovery once on a miss
// (a CRD installed after the cache was filled).
func (r *resources) mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := r.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		r.mapper.ResetWithContext(ctx)
		m, err = r.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, userError(fmt.Sprintf("the cluster has no kind %s in %s", gvk.Kind, gvk.GroupVersion()))
		}
		return nil, err
	}
	return m, nil
}

// mappingOf finds the resource named as kubectl names it on its command
// line ("configmap", "cm", "workflows.argoproj.io"), refreshing once.
func (r *resources) mappingOf(ctx context.Context, name string) (*meta.RESTMapping, error) {
	gr := schema.ParseGroupResource(name)
	find := func() (*meta.RESTMapping, error) {
		gvk, err := r.expand.KindForWithContext(ctx, gr.WithVersion(""))
		if err != nil {
			return nil, err
		}
		return r.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	}
	m, err := find()
	if meta.IsNoMatchError(err) {
		r.mapper.ResetWithContext(ctx)
		m, err = find()
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, userError(fmt.Sprintf("the cluster has no resource type %q", name))
		}
		return nil, err
	}
	return m, nil
}
