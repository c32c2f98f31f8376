package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Observer is told about every persisted change of a workflow, with the IDs
// of the nodes that changed. It must not keep or modify wf.
type Observer func(wf *v1alpha1.Workflow, changed []string)

// RunRequest is one workflow to drive to completion in this process.
type RunRequest struct {
	// Workflow has its name, namespace and uid set; it is created in the store.
	Workflow  *v1alpha1.Workflow
	Templates engine.TemplateResolver
	Observe   Observer
	// Shutdown receives Stop or Terminate requests (Ctrl-C).
	Shutdown <-chan v1alpha1.ShutdownStrategy

	// Set by the Manager, which shares one runtime between many workflows.
	events  <-chan runtime.StepEvent // this workflow's events; nil: the runtime's
	changes <-chan struct{}          // the stored workflow changed
	h       *handle
}

// Run creates the workflow in the store and drives it until it completes,
// ctx ends, or a system error occurs. It returns the final workflow.
func (c *Controller) Run(ctx context.Context, req RunRequest) (*v1alpha1.Workflow, error) {
	wf := req.Workflow
	if err := c.store.Create(ctx, wf); err != nil {
		return nil, fmt.Errorf("create workflow %s/%s: %w", wf.Namespace, wf.Name, err)
	}
	d := c.newDriver(req)
	final, err := d.loop(ctx)
	if err == nil {
		d.collectArtifacts(ctx)
	}
	return final, err
}

func (c *Controller) newDriver(req RunRequest) *driver {
	d := &driver{c: c, req: req, wf: req.Workflow, results: map[string]engine.StepResult{}, prepared: engine.NewPrepared(),
		events: req.events}
	if d.events == nil {
		d.events = c.rt.Events()
	}
	return d
}

// driver is the state of one Run.
type driver struct {
	c        *Controller
	req      RunRequest
	wf       *v1alpha1.Workflow
	results  map[string]engine.StepResult
	prepared *engine.Prepared // what the engine may keep between passes over this workflow
	events   <-chan runtime.StepEvent
	timer    *time.Timer
	// relaunch lists the nodes to launch again (see engine.Snapshot.Relaunch)
	// in the next reconcile only.
	relaunch map[string]bool
	// specChanged is set when the spec changed (a shutdown request): the
	// next persist writes the whole workflow instead of its status.
	specChanged bool
	adm         driverAdmission // parallelism and locks (admission.go)
	// memos are the memoization entries the last pass asked for, loaded
	// for the next pass only.
	memos map[engine.MemoKey]engine.MemoLookup
}

func (d *driver) loop(ctx context.Context) (*v1alpha1.Workflow, error) {
	defer d.listen()()
	if ok, err := d.storeTemplateSpec(ctx); err != nil || !ok { // templates.go
		return d.wf, err
	}
	if ok, err := d.applyWorkflowDefaults(ctx); err != nil || !ok { // defaults.go
		return d.wf, err
	}
	if err := d.workflowStarted(ctx); err != nil || d.wf.Status.Phase.Completed() { // hooks.go
		return d.wf, err
	}
	for {
		if ok, err := d.admit(ctx); !ok { // held back: parallelism or workflow-level locks
			if err == nil {
				err = d.wait(ctx, 0)
			}
			if errors.Is(err, store.ErrConflict) && d.req.h != nil {
				err = d.reload(ctx)
			}
			if err != nil {
				return d.wf, err
			}
			continue
		}
		if d.req.h != nil {
			d.req.h.busy() // quarantine.go
		}
		res, err := d.reconcile(ctx)
		if errors.Is(err, store.ErrConflict) && d.req.h != nil {
			// Someone else (an API call) changed the workflow: start over from
			// the stored one, keeping the results not yet merged.
			if err = d.reload(ctx); err == nil {
				continue
			}
		}
		if err != nil {
			return d.wf, err
		}
		if d.wf.Status.Phase.Completed() {
			d.workflowCompleted(ctx) // hooks.go
			return d.wf, nil
		}
		if err := d.wait(ctx, res.RequeueAfter); err != nil {
			return d.wf, err
		}
	}
}

// reconcile runs one decide-persist-act cycle: a snapshot (with the lock
// state and the memoization entries the previous pass asked for), one
// engine pass, one write, then the pass's decisions: locks, memoization
// writes, kills and launches.
func (d *driver) reconcile(ctx context.Context) (engine.Result, error) {
	before := statusWithoutNodes(&d.wf.Status)
	sess, view := d.lockView()
	defer sess.Abort()         // a no-op once committed
	res, err := d.decide(view) // recover.go: a panic there ends this workflow Error
	d.relaunch, d.memos = nil, nil
	if pe, ok := errPanicked(err); ok {
		sess.Abort()
		return engine.Result{}, d.failPanicked(ctx, pe)
	}
	if err != nil {
		return res, fmt.Errorf("reconcile %s: %w", d.wf.Name, err)
	}
	d.wf.Status = res.Status
	if m := res.Metadata; m != nil { // workflowMetadata: a status write does not carry it
		d.wf.Labels, d.wf.Annotations = m.Labels, m.Annotations
		d.specChanged = true
	}
	if d.wf.Status.Phase.Completed() {
		d.c.adm.throttle.Remove(workflowKey(d.wf))
	}
	labelsChanged := setPhaseLabels(d.wf)
	labelsChanged = setPodNameFormat(d.wf) || labelsChanged
	if d.specChanged || labelsChanged || len(res.Changed) > 0 || !sameStatus(before, &d.wf.Status) {
		if err := d.persist(ctx, res.Changed); err != nil {
			return res, fmt.Errorf("persist %s: %w", d.wf.Name, err)
		}
	}
	sess.Commit(res.Locks)
	d.wantLocks(res.Need.Locks)
	d.memos = d.loadMemos(ctx, res.Need.Memos)
	d.forgetMerged()
	if d.req.Observe != nil && len(res.Changed) > 0 {
		d.req.Observe(d.wf, res.Changed)
	}
	return res, d.act(ctx, res.Plan)
}

// persist writes the status and the changed nodes, or the whole workflow
// when its spec changed.
func (d *driver) persist(ctx context.Context, changed []string) error {
	var err error
	if d.specChanged {
		d.specChanged = false
		err = d.c.store.Update(ctx, d.wf)
	} else {
		err = d.c.store.UpdateWorkflowStatus(ctx, d.wf, changed)
	}
	if err == nil && d.req.h != nil {
		d.req.h.wrote(d.wf.ResourceVersion)
	}
	return err
}

// act carries out a plan that is already persisted.
func (d *driver) act(ctx context.Context, p engine.Plan) error {
	d.saveMemos(ctx, p.Memoize)
	for _, k := range p.Kill {
		if err := d.c.rt.Kill(ctx, RunID(d.wf, k.NodeID)); err != nil {
			d.c.log.Warn("kill step", "workflow", d.wf.Name, "node", k.NodeID, "err", err)
		}
	}
	for _, l := range p.Launch {
		run, err := d.run(l)
		if err == nil {
			err = d.c.rt.Start(ctx, run)
		}
		if err != nil {
			// The step cannot even be handed to the runtime: report it as the step's error.
			d.results[l.NodeID] = engine.StepResult{Phase: v1alpha1.NodeError, Message: err.Error(), FinishedAt: d.c.now()}
		}
	}
	return nil
}

func (d *driver) run(l engine.Launch) (runtime.Run, error) {
	plan, err := d.artifactPlan(l)
	return runtime.Run{
		ID: RunID(d.wf, l.NodeID), Namespace: d.wf.Namespace, Workflow: d.wf.Name, WorkflowUID: string(d.wf.UID),
		NodeID: l.NodeID, PodName: l.PodName, Template: l.Template, Spec: d.wf.ExecSpec(), IncludeResult: l.IncludeResult,
		ActiveDeadline: l.ActiveDeadline, Deadline: l.Deadline, Env: l.Env, Artifacts: plan,
	}, err
}

// forgetMerged drops the results the engine has taken into the status.
func (d *driver) forgetMerged() {
	for id, r := range d.results {
		n, ok := d.wf.Status.Nodes[id]
		if !ok {
			continue
		}
		if n.Phase == r.Phase || n.Phase.Completed() {
			delete(d.results, id)
		}
	}
}

// wait blocks until a runtime event, the requeue timer, a shutdown request
// or the end of ctx, then drains whatever else is ready.
func (d *driver) wait(ctx context.Context, after time.Duration) error {
	d.idle(after) // quarantine.go
	var timeout <-chan time.Time
	if after > 0 {
		if d.timer == nil {
			d.timer = time.NewTimer(after)
		} else {
			d.timer.Reset(after)
		}
		defer d.timer.Stop()
		timeout = d.timer.C
	}
	for {
		select {
		case ev := <-d.events:
			d.record(ev)
			if !ev.Phase.Completed() {
				d.settle(ctx)
			}
		case <-d.req.changes:
			if !d.req.h.stale() {
				continue // the watch reporting this driver's own write
			}
			if err := d.reload(ctx); err != nil {
				return err
			}
		case <-timeout:
		case <-d.adm.wake: // a lock or a parallelism slot may be free
		case s := <-d.req.Shutdown:
			d.shutdown(s)
		case <-ctx.Done():
			return ctx.Err()
		}
		d.drain()
		return nil
	}
}

// runningGrace is how long a lone "started" report waits for the step's
// final one: a short step then costs one reconcile and one write, not two.
const runningGrace = 3 * time.Millisecond

// settle waits up to runningGrace for a final event after a Running one.
func (d *driver) settle(ctx context.Context) {
	t := time.NewTimer(runningGrace)
	defer t.Stop()
	for {
		select {
		case ev := <-d.events:
			d.record(ev)
			if ev.Phase.Completed() {
				return
			}
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// drain records every event that is already waiting, so that one reconcile
// answers many finished steps.
func (d *driver) drain() {
	for {
		select {
		case ev := <-d.events:
			d.record(ev)
		case s := <-d.req.Shutdown:
			d.shutdown(s)
		default:
			return
		}
	}
}

func (d *driver) shutdown(s v1alpha1.ShutdownStrategy) {
	d.wf.Spec.Shutdown = s
	d.specChanged = true
}

func (d *driver) record(ev runtime.StepEvent) {
	if prev, ok := d.results[ev.NodeID]; ok && prev.Phase.Completed() && !ev.Phase.Completed() {
		return // a late Running never hides a final result
	}
	d.results[ev.NodeID] = engine.StepResult{
		Phase: ev.Phase, Message: ev.Message, ExitCode: ev.ExitCode, Outputs: ev.Outputs,
		StartedAt: ev.StartedAt, FinishedAt: ev.FinishedAt, PodIP: ev.PodIP, HostNode: ev.HostNode,
		Containers: containerResults(ev.Containers),
	}
}

// containerResults are the engine's view of a containerSet's containers.
func containerResults(cs []runtime.ContainerState) []engine.ContainerResult {
	if len(cs) == 0 {
		return nil
	}
	out := make([]engine.ContainerResult, len(cs))
	for i, c := range cs {
		out[i] = engine.ContainerResult{Name: c.Name, Phase: c.Phase, Message: c.Message, ExitCode: c.ExitCode,
			StartedAt: c.StartedAt, FinishedAt: c.FinishedAt}
	}
	return out
}

// setPhaseLabels keeps the labels Argo sets on a workflow in step with its
// phase; it reports whether they changed.
func setPhaseLabels(wf *v1alpha1.Workflow) bool {
	if wf.Status.Phase == "" {
		return false
	}
	completed := "false"
	if wf.Status.Phase.Completed() {
		completed = "true"
	}
	const phaseLabel, completedLabel = "workflows.argoproj.io/phase", "workflows.argoproj.io/completed"
	if wf.Labels[phaseLabel] == string(wf.Status.Phase) && wf.Labels[completedLabel] == completed {
		return false
	}
	if wf.Labels == nil {
		wf.Labels = map[string]string{}
	}
	wf.Labels[phaseLabel] = string(wf.Status.Phase)
	wf.Labels[completedLabel] = completed
	return true
}

// podNameFormatAnnotation records the pod naming scheme, as Argo's
// controller does when a workflow starts (ARGO-SEMANTICS rule 1.3): braid
// names pods the v2 way. A value already there is kept.
const podNameFormatAnnotation = "workflows.argoproj.io/pod-name-format"

// setPodNameFormat annotates a started workflow with its pod name format;
// it reports whether the annotation was added.
func setPodNameFormat(wf *v1alpha1.Workflow) bool {
	if wf.Status.Phase == "" {
		return false
	}
	if _, ok := wf.Annotations[podNameFormatAnnotation]; ok {
		return false
	}
	if wf.Annotations == nil {
		wf.Annotations = map[string]string{}
	}
	wf.Annotations[podNameFormatAnnotation] = "v2"
	return true
}

// statusWithoutNodes is a copy of the status minus its nodes, cheap to
// compare: a reconcile that changed neither a node nor the rest of the
// status writes nothing.
func statusWithoutNodes(s *v1alpha1.WorkflowStatus) *v1alpha1.WorkflowStatus {
	c := *s
	c.Nodes = nil
	return c.DeepCopy()
}

func sameStatus(before, after *v1alpha1.WorkflowStatus) bool {
	a := *after
	a.Nodes = nil
	return equality.Semantic.DeepEqual(before, &a)
}

// starting reports whether the workflow has not had its first pass yet.
func starting(wf *v1alpha1.Workflow) bool {
	p := wf.Status.Phase
	return p == v1alpha1.WorkflowUnknown || p == v1alpha1.WorkflowPending
}
