package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/wait"

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
	d := &driver{c: c, req: req, wf: req.Workflow, log: c.log.With("workflow", workflowKey(req.Workflow)), results: map[string]engine.StepResult{}, prepared: engine.NewPrepared(),
		events: req.events}
	if d.events == nil {
		d.events = c.rt.Events()
	}
	return d
}

// driver is the state of one Run.
type driver struct {
	c        *Controller
	log      *slog.Logger // the controller's, with the workflow's key
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
	// begun is set once the workflow's first steps are taken (begin).
	begun bool
	// daemons are the nodes launched as daemons and not yet finished:
	// their Running report is what their dependents wait for, so it ends
	// a wait at once (no runningGrace).
	daemons map[string]bool
}

// loop drives the workflow until it completes, ctx ends, or a system
// error outlasts its retries: each turn is one pass (pass), and one switch
// (after) turns its outcome into a wait, a reload, a backoff or the end,
// as controller-runtime turns a Reconcile's result into a requeue.
func (d *driver) loop(ctx context.Context) (*v1alpha1.Workflow, error) {
	defer d.listen()()
	retry := d.backoff()
	for {
		res, err := d.pass(ctx)
		switch next, delay := d.after(ctx, res, err, &retry); next {
		case nextDone:
			if err == nil && d.wf.Status.Phase.Completed() {
				d.workflowCompleted(ctx) // hooks.go
			}
			return d.wf, err
		case nextReload:
			if err := d.reload(ctx); err != nil {
				return d.wf, err
			}
		case nextBackoff:
			if err := d.sleep(ctx, delay); err != nil {
				return d.wf, err
			}
			if d.req.h != nil {
				if err := d.reload(ctx); err != nil {
					d.log.Warn("reload after a failed pass", "err", err)
				}
			}
		case nextWait:
			if err := d.wait(ctx, res.RequeueAfter); err != nil {
				return d.wf, err
			}
		}
	}
}

// next is what the driver does after a pass.
type next int

const (
	// nextWait: wait for a step's report, a wake-up or RequeueAfter.
	nextWait next = iota
	// nextDone: the workflow completed, or the driver stops with the error.
	nextDone
	// nextReload: the stored workflow changed under the pass (a conflict):
	// start again from it, keeping the results not yet merged.
	nextReload
	// nextBackoff: a system error; try again after a growing delay.
	nextBackoff
)

// after is the one switch over a pass's outcome. User errors never get
// here (the engine records them in the status); an error is a system
// fault: a conflict reloads, a lost context or workflow ends the driver,
// and anything else is retried with exponential backoff, until the
// backoff's steps run out (braid run's driver; a Manager's never does).
func (d *driver) after(ctx context.Context, res engine.Result, err error, retry *wait.Backoff) (next, time.Duration) {
	switch {
	case err == nil && d.wf.Status.Phase.Completed():
		return nextDone, 0
	case err == nil:
		*retry = d.backoff()
		return nextWait, 0
	case ctx.Err() != nil, errors.Is(err, store.ErrNotFound), errors.Is(err, context.Canceled):
		return nextDone, 0
	case errors.Is(err, store.ErrConflict) && d.req.h != nil:
		return nextReload, 0
	case retry.Steps <= 0:
		return nextDone, 0
	}
	delay := retry.Step()
	d.log.Warn("pass failed; retrying", "err", err, "after", delay, "retriesLeft", retry.Steps)
	return nextBackoff, delay
}

// backoff is the retry policy of system errors: from 50ms, doubling, up
// to 30s between tries; a driver without a Manager (braid run) gives up
// after 6 tries and reports the error.
func (d *driver) backoff() wait.Backoff {
	b := wait.Backoff{Duration: 50 * time.Millisecond, Factor: 2, Jitter: 0.1, Cap: 30 * time.Second, Steps: 6}
	if d.req.h != nil {
		b.Steps = math.MaxInt32
	}
	return b
}

// sleep waits for delay or the end of ctx.
func (d *driver) sleep(ctx context.Context, delay time.Duration) error {
	select {
	case <-d.c.wakeAt(d.c.now().Add(delay)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pass is one turn of the loop: the workflow's first steps when it has
// not had them (its template spec, the defaults, the runtime's hook),
// then admission, then one reconcile. A panic anywhere in it is recovered
// here, at its boundary, and ends this workflow (and only this one) Error.
func (d *driver) pass(ctx context.Context) (res engine.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = d.failPanicked(ctx, d.c.recovered("driver", workflowKey(d.wf), v))
		}
	}()
	if !d.begun {
		if ok, err := d.begin(ctx); err != nil || !ok {
			return engine.Result{}, err
		}
		d.begun = true
	}
	if ok, err := d.admit(ctx); !ok { // held back: parallelism or workflow-level locks
		return engine.Result{}, err // wait for a wake-up
	}
	if d.req.h != nil {
		d.req.h.busy() // quarantine.go
	}
	return d.reconcile(ctx)
}

// begin takes a workflow's first steps: the spec of its template
// (templates.go), the controller's defaults (defaults.go) and the
// runtime's workflow hook (hooks.go). It reports false when the workflow
// cannot go on (it ended Error).
func (d *driver) begin(ctx context.Context) (bool, error) {
	if ok, err := d.storeTemplateSpec(ctx); err != nil || !ok {
		return ok, err
	}
	if ok, err := d.applyWorkflowDefaults(ctx); err != nil || !ok {
		return ok, err
	}
	if err := d.workflowStarted(ctx); err != nil {
		return false, err
	}
	return !d.wf.Status.Phase.Completed(), nil
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
	if res.Status.Phase.Completed() {
		d.c.adm.throttle.Remove(workflowKey(d.wf))
	}
	if err := d.commit(ctx, update{status: &res.Status, changed: res.Changed, meta: res.Metadata, before: before}); err != nil {
		return res, err
	}
	sess.Commit(res.Locks)
	d.wantLocks(res.Need.Locks)
	d.memos = d.loadMemos(ctx, res.Need.Memos)
	d.forgetMerged()
	d.act(ctx, res.Plan)
	return res, nil
}

// act carries out a plan that is already persisted. Its failures are not
// the pass's: a kill that fails is logged (the status already holds the
// node's end), and a step the runtime cannot start becomes that step's
// Error result, which the next pass records.
func (d *driver) act(ctx context.Context, p engine.Plan) {
	d.saveMemos(ctx, p.Memoize)
	for _, k := range p.Kill {
		if err := d.c.rt.Kill(ctx, RunID(d.wf, k.NodeID)); err != nil {
			d.log.Warn("kill step", "node", k.NodeID, "err", err)
		}
	}
	for _, l := range p.Launch {
		if t := l.Template; t != nil && t.Daemon != nil && *t.Daemon {
			if d.daemons == nil {
				d.daemons = map[string]bool{}
			}
			d.daemons[l.NodeID] = true
		}
		run, err := d.runFor(l)
		if err == nil {
			err = d.c.rt.Start(ctx, run)
		}
		if err != nil {
			// The step cannot even be handed to the runtime: report it as the step's error.
			d.results[l.NodeID] = engine.StepResult{Phase: v1alpha1.NodeError, Message: err.Error(), FinishedAt: d.c.now()}
		}
	}
}

// runFor is the runtime's run of a launch: the launch with the workflow's
// identity, spec and artifact plan.
func (d *driver) runFor(l engine.Launch) (runtime.Run, error) {
	plan, err := d.artifactPlan(l)
	return runtime.Run{
		ID: RunID(d.wf, l.NodeID), Namespace: d.wf.Namespace, Workflow: d.wf.Name, WorkflowUID: string(d.wf.UID),
		Launch: l, Spec: d.wf.ExecSpec(), Artifacts: plan,
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

// wait blocks until a final runtime event, the requeue timer, a shutdown
// request, a store change, an admission wake-up or the end of ctx, then
// drains whatever else is ready. A Running report alone does not end the
// wait at once: it arms runningGrace, so that a short step's start and
// end are answered by one reconcile and one write.
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
	var grace <-chan time.Time // armed by the first Running report
	for {
		select {
		case ev := <-d.events:
			d.record(ev)
			if !ev.Phase.Completed() && !d.daemons[ev.NodeID] {
				if grace == nil {
					t := time.NewTimer(runningGrace)
					defer t.Stop()
					grace = t.C
				}
				continue
			}
		case <-grace: // no final report came: persist the Running ones
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

// runningGrace is how long a Running report waits for a final one before
// a reconcile persists it. Every pass costs an engine pass and a store
// write (together about as much CPU as the local runtime's start of a
// step), and most steps of a big workflow are short. The grace was 3ms,
// less than a `true` step takes from its start to its final report on a
// busy machine: the 1,000 steps of test/bench's W1 chain took 1,556
// passes, and each Running-only pass competed for the CPU with the start
// of the step's process. Apart from a daemon's (driver.daemons, which ends
// the wait at once), a Running report decides nothing: the runtime keeps
// a step's deadlines, and its StartedAt comes with the report. Holding it
// back delays only what others see (and a lifecycle hook on a Running
// expression): 50ms is half of braid run's redraw period (redrawEvery)
// and not noticeable in braid get or the UI. A var for tests.
var runningGrace = 50 * time.Millisecond

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
	if ev.Phase.Completed() {
		delete(d.daemons, ev.NodeID)
	}
	if prev, ok := d.results[ev.NodeID]; ok && prev.Phase.Completed() && !ev.Phase.Completed() {
		return // a late Running never hides a final result
	}
	d.results[ev.NodeID] = ev.Result
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
