package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apiv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/executor"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Config configures a Runtime. Only Client is required.
type Config struct {
	Client kubernetes.Interface
	// Rest is the client configuration resource templates use (resource.go):
	// a dynamic client impersonating the workflow's service account, and
	// discovery. nil: resource templates end Error.
	Rest *rest.Config
	// Namespace limits the pods watched; "" watches every namespace.
	Namespace string
	// BraidImage is the image the init container copies braid from;
	// "" means braid:dev. BraidPath is braid's path in it ("/bin/braid").
	BraidImage string
	BraidPath  string
	// Images gives the entrypoint of images whose container sets no
	// command; nil means DefaultImages().
	Images executor.ImageTable
	// Artifacts reads what pods saved: a result too big for the
	// termination message, and the main log once the pod is gone. nil: no
	// such reads.
	Artifacts *artifact.Drivers
	// PullWait bounds the wait on an image that keeps failing to pull
	// (ErrImageNeverPull ends at once); 0 means 60 s.
	PullWait time.Duration
	// UnschedulableWait bounds the wait on a pod the scheduler cannot
	// place; 0 means 120 s.
	UnschedulableWait time.Duration
	// KillGrace is the pod's deletion grace period on Kill; 0 means 10 s.
	KillGrace time.Duration
	Logger    *slog.Logger
	Clock     func() time.Time
}

// DefaultImages is the entrypoint table of the images of Argo's examples,
// as the images themselves define them. Every python tag (python:alpine3.23,
// python:3.11, ...) runs python3, which also answers to python; on the
// hack/kube node those tags name one image, Debian's python3.11 with busybox.
func DefaultImages() executor.ImageTable {
	shell := executor.Image{Args: []string{"sh"}}
	bash := executor.Image{Args: []string{"bash"}}
	python := executor.Image{Args: []string{"python3"}, Aliases: map[string][]string{"python": {"python3"}}}
	return executor.ImageTable{
		"argoproj/argosay":         {Command: []string{"/argosay"}},
		"quay.io/argoproj/argosay": {Command: []string{"/argosay"}},
		"docker/whalesay":          {Args: []string{"/bin/bash"}},
		"python":                   python,
		"alpine":                   shell,
		"busybox":                  shell,
		"debian":                   bash,
		"ubuntu":                   bash,
	}
}

const indexRunID = "runID"

// Runtime runs steps as pods and follows them with a shared informer.
type Runtime struct {
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	builder podBuilder
	waits   waits

	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer
	events   *runtime.Queue
	stop     chan struct{}
	closeMu  sync.Once

	mu   sync.Mutex
	runs map[string]*runState

	res *resources // resource templates (resource.go)
}

// runState is what the runtime knows of one run.
type runState struct {
	id, ns, pod   string
	wfUID, nodeID string
	last          runtime.StepEvent
	final         bool
	timer         *time.Timer
	stopped       bool // sidecars told to stop
}

var _ runtime.Runtime = (*Runtime)(nil)

// New starts the pod informer; Close stops it.
func New(cfg Config) (*Runtime, error) {
	if cfg.Client == nil {
		return nil, errors.New("kube runtime: no Kubernetes client")
	}
	cfg.BraidImage = cmpOr(cfg.BraidImage, "braid:dev")
	cfg.BraidPath = cmpOr(cfg.BraidPath, "/bin/braid")
	if cfg.Images == nil {
		cfg.Images = DefaultImages()
	}
	cfg.PullWait = durOr(cfg.PullWait, 60*time.Second)
	cfg.UnschedulableWait = durOr(cfg.UnschedulableWait, 120*time.Second)
	cfg.KillGrace = durOr(cfg.KillGrace, 10*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	rt := &Runtime{cfg: cfg, log: cfg.Logger, now: cfg.Clock,
		builder: podBuilder{braidImage: cfg.BraidImage, braidPath: cfg.BraidPath, images: cfg.Images},
		waits:   waits{pull: cfg.PullWait, unschedulable: cfg.UnschedulableWait},
		events:  runtime.NewQueue(256), stop: make(chan struct{}), runs: map[string]*runState{}}
	var err error
	if rt.res, err = newResources(rt, cfg.Rest); err != nil {
		return nil, err
	}
	rt.factory = informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0, informers.WithNamespace(cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = LabelRunID }))
	rt.informer = rt.factory.Core().V1().Pods().Informer()
	if err := rt.informer.AddIndexers(cache.Indexers{indexRunID: func(obj any) ([]string, error) {
		if p, ok := obj.(*apiv1.Pod); ok && p.Annotations[AnnotationRunID] != "" {
			return []string{p.Annotations[AnnotationRunID]}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, fmt.Errorf("kube runtime: %w", err)
	}
	if err := rt.informer.SetTransform(func(obj any) (any, error) {
		if p, ok := obj.(*apiv1.Pod); ok {
			p.ManagedFields = nil
		}
		return obj, nil
	}); err != nil {
		return nil, fmt.Errorf("kube runtime: %w", err)
	}
	if _, err := rt.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { rt.onPod(obj) },
		UpdateFunc: func(_, obj any) { rt.onPod(obj) },
		DeleteFunc: rt.onDelete,
	}); err != nil {
		return nil, fmt.Errorf("kube runtime: %w", err)
	}
	rt.factory.Start(rt.stop)
	return rt, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func durOr(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

// Close stops the informer and the event queue; pods keep running.
func (rt *Runtime) Close() error {
	rt.closeMu.Do(func() {
		close(rt.stop)
		rt.res.close()
		rt.factory.Shutdown()
		rt.mu.Lock()
		for _, st := range rt.runs {
			if st.timer != nil {
				st.timer.Stop()
			}
		}
		rt.mu.Unlock()
		rt.events.Close()
	})
	return nil
}

// Events delivers every event once, in order per run.
func (rt *Runtime) Events() <-chan runtime.StepEvent { return rt.events.Out() }

// WaitSynced blocks until the informer has listed the pods, or ctx ends.
func (rt *Runtime) WaitSynced(ctx context.Context) error {
	if !cache.WaitForCacheSync(ctx.Done(), rt.informer.HasSynced) {
		return fmt.Errorf("kube runtime: pod informer not synced: %w", context.Cause(ctx))
	}
	return nil
}

// Start creates the run's pod. A run that exists already is left alone; a
// pod of the same name left by an earlier run (a retried workflow) is
// replaced. A template that cannot become a pod ends the run Error.
func (rt *Runtime) Start(ctx context.Context, run runtime.Run) error {
	if isResource(run) {
		rt.res.start(run)
		return nil
	}
	run.Artifacts = reachablePlan(run.Artifacts)
	rt.mu.Lock()
	if _, ok := rt.runs[run.ID]; ok {
		rt.mu.Unlock()
		return nil
	}
	st := &runState{id: run.ID, ns: run.Namespace, pod: run.PodName, wfUID: run.WorkflowUID, nodeID: run.NodeID}
	rt.runs[run.ID] = st
	rt.mu.Unlock()
	pod, err := rt.builder.build(run)
	if err != nil {
		var ue userError
		if errors.As(err, &ue) {
			rt.finish(st, step.Result{Phase: v1alpha1.NodeError, Message: ue.Error()})
			return nil
		}
		rt.forget(run.ID)
		return fmt.Errorf("kube runtime: pod of %s: %w", run.ID, err)
	}
	if err := rt.create(ctx, pod); err != nil {
		if isUserFault(err) {
			rt.finish(st, step.Result{Phase: v1alpha1.NodeError, Message: fmt.Sprintf("create pod %s: %v", pod.Name, err)})
			return nil
		}
		rt.forget(run.ID)
		return fmt.Errorf("kube runtime: create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

func (rt *Runtime) forget(id string) {
	rt.mu.Lock()
	delete(rt.runs, id)
	rt.mu.Unlock()
}

// isUserFault: the API refuses the pod for what it is, not for a passing
// reason (an invalid spec, a denied request, a missing namespace).
func isUserFault(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err)
}

// create creates pod; an existing pod of another run is deleted first.
func (rt *Runtime) create(ctx context.Context, pod *apiv1.Pod) error {
	pods := rt.cfg.Client.CoreV1().Pods(pod.Namespace)
	for attempt := 0; ; attempt++ {
		_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err == nil || !apierrors.IsAlreadyExists(err) {
			return err
		}
		old, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return err
		case old.Annotations[AnnotationRunID] == pod.Annotations[AnnotationRunID]:
			return nil
		case attempt >= 60:
			return fmt.Errorf("pod %s of an earlier run is still being deleted", pod.Name)
		}
		if old.DeletionTimestamp == nil {
			zero := int64(0)
			err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
				Preconditions: &metav1.Preconditions{UID: &old.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return fmt.Errorf("delete the pod of an earlier run: %w", err)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Kill deletes the run's pod (SIGTERM to the emissary, which forwards it,
// SIGKILL after KillGrace) and ends the run Failed at once.
func (rt *Runtime) Kill(ctx context.Context, runID string) error {
	if rt.res.kill(runID) {
		return nil
	}
	rt.mu.Lock()
	st := rt.runs[runID]
	rt.mu.Unlock()
	if st == nil {
		pod := rt.podOf(runID)
		if pod == nil {
			return nil
		}
		st = rt.state(pod)
	}
	rt.mu.Lock()
	done := st.final
	rt.mu.Unlock()
	if done {
		return nil
	}
	rt.finish(st, step.Result{Phase: v1alpha1.NodeFailed, Message: MsgKilled})
	grace := int64(rt.cfg.KillGrace / time.Second)
	err := rt.cfg.Client.CoreV1().Pods(st.ns).Delete(ctx, st.pod, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kube runtime: kill %s: delete pod %s/%s: %w", runID, st.ns, st.pod, err)
	}
	return nil
}

// Status returns the run's latest event: from memory, else from its pod in
// the informer's cache (after a restart). Unknown: no pod and no Start.
func (rt *Runtime) Status(ctx context.Context, runID string) (runtime.StepEvent, bool, error) {
	if ev, ok := rt.res.status(runID); ok {
		return ev, true, nil
	}
	if err := rt.WaitSynced(ctx); err != nil {
		return runtime.StepEvent{}, false, err
	}
	rt.mu.Lock()
	st := rt.runs[runID]
	if st != nil && st.last.Phase != "" {
		ev := st.last
		rt.mu.Unlock()
		return ev, true, nil
	}
	rt.mu.Unlock()
	pod := rt.podOf(runID)
	if pod == nil {
		if st != nil {
			return st.eventOf(step.Result{Phase: v1alpha1.NodePending}), true, nil
		}
		return runtime.StepEvent{}, false, nil
	}
	o := observe(pod, rt.now(), rt.waits)
	if o.full != nil {
		o = rt.loadFull(artifact.WithNamespace(ctx, pod.Namespace), o)
	}
	st = rt.state(pod)
	ev := st.event(o)
	if ev.Phase == "" {
		ev.Phase = v1alpha1.NodePending
	}
	return ev, true, nil
}

// podOf finds the run's pod in the informer's cache.
func (rt *Runtime) podOf(runID string) *apiv1.Pod {
	objs, err := rt.informer.GetIndexer().ByIndex(indexRunID, runID)
	if err != nil || len(objs) == 0 {
		return nil
	}
	pod, _ := objs[0].(*apiv1.Pod)
	return pod
}

// reachablePlan drops a local file repository from a run's artifact plan:
// a pod cannot reach braid's data directory, so on Kubernetes a run has a
// repository only when one that pods can reach (S3, ...) is configured.
func reachablePlan(p *step.ArtifactPlan) *step.ArtifactPlan {
	if p == nil || p.Repository == nil || p.Repository.File == nil {
		return p
	}
	c := *p
	c.Repository = nil
	return &c
}
