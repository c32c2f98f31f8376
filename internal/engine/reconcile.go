package engine

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/synclock"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// run is the state of one Reconcile. It is created, used and dropped within
// the call; nothing in it outlives Reconcile.
type run struct {
	wf       *v1alpha1.Workflow
	spec     *v1alpha1.WorkflowSpec
	nodes    v1alpha1.Nodes
	now      time.Time
	resolver TemplateResolver
	results  map[string]StepResult
	relaunch map[string]bool
	memos    map[MemoKey]MemoLookup // Snapshot.Memos: memoization look-ups
	noMemos  bool
	locks    *synclock.Table // Snapshot.Locks: template-level synchronization
	lim      Limits          // with defaults
	pattern  string

	changed    map[string]prevNode // what each node changed in this pass was before it
	changedIDs []string
	plan       Plan
	wakeAt     time.Time
	lockOps    []synclock.Decision // Result.Locks
	needs      Need                // Result.Need
	meta       *Metadata           // Result.Metadata

	// Variables that change during the pass (rule 6.3).
	statusVar string
	duration  string
	afterRoot bool
	globals   map[string]any
	failures  *string

	deadline     time.Time // workflow deadline; zero when there is none
	pastDeadline bool
	shutdown     v1alpha1.ShutdownStrategy

	*caches
	refErrs map[v1alpha1.TemplateRef]error // resolver errors: never kept in a Prepared
	counters

	stop    *limitError // a bound that ends the workflow Error (maxNodes, maxDepth)
	created int         // nodes created in this pass (Limits.MaxNodesPerPass)
	yielded bool        // the pass stopped creating nodes: it is called again at once

	sawActive  bool // a leaf node still running was seen this pass
	sawRunning bool // a Pod node Running was seen this pass (PodRunning)
	prepared   bool // caches outlive the pass (Snapshot.Prepared)
	transient  *regexp.Regexp
	keyBuf     []byte                         // scratch for node IDs (byName)
	childSets  map[string]map[string]struct{} // children of big nodes (addChild)
}

// caches memoise pure functions of the spec: within one pass, or across
// passes when the caller keeps a Prepared.
type caches struct {
	local      map[string]*v1alpha1.Template
	refTmpls   map[v1alpha1.TemplateRef]*v1alpha1.Template
	merged     map[*v1alpha1.Template]*v1alpha1.Template
	dags       map[*v1alpha1.Template]*dagInfo
	resultRefs map[*v1alpha1.Template]map[string]bool
	loops      map[string]*loopEntry
}

// Prepared keeps, between Reconcile calls for one workflow, what Reconcile
// derives from its templates: templates by name, templateRef look-ups,
// templates merged with templateDefaults, the shape of each DAG (targets,
// dependencies, parsed depends) and which steps' results are referenced.
// With it, a pass over a workflow of thousands of steps or tasks does not
// rebuild these on every call.
//
// A Prepared is optional: Reconcile gives the same result without one. Keep one
// per workflow and pass it in every Snapshot of that workflow; it resets
// itself when the Snapshot carries a different *Workflow spec. Drop it when
// the spec's templates are edited in place. A templateRef resolved through
// a Prepared stays pinned for the Prepared's life, as Argo pins templates in
// status.storedTemplates. A Prepared is not safe for concurrent use.
type Prepared struct {
	spec *v1alpha1.WorkflowSpec
	c    caches
}

// NewPrepared returns an empty Prepared.
func NewPrepared() *Prepared { return &Prepared{} }

// Reconcile decides the next state of one workflow. It reads the snapshot,
// merges the reported step results, walks the template tree from the
// entrypoint as Argo does (rule 0.1), and returns the new status, the IDs of
// the nodes it created or changed, what to launch and kill, and when to be
// called again. It never blocks, performs no I/O and reads no clock.
//
// User errors (a bad reference, a failed step, an unresolvable template) end
// up in the status as Error or Failed nodes and workflow messages. The error
// return is for callers' mistakes only (ErrNoWorkflow).
func Reconcile(s Snapshot, now time.Time) (Result, error) {
	if s.Workflow == nil || s.Workflow.Name == "" {
		return Result{}, ErrNoWorkflow
	}
	r := newRun(s, now)
	if r.wf.Status.Phase.Completed() {
		return Result{Status: r.wf.Status}, nil
	}
	if ok := r.start(); ok {
		r.mergeResults()
		r.applyExecutionControl()
		if !r.suspended() {
			r.operate()
		}
		if r.stop != nil { // even when the walk completed the workflow in this pass
			r.failForLimit(r.stop)
		}
		r.keepGoing()
		r.updateSums()
		r.setPodRunning()
		r.planMemoSaves()
	}
	r.settleLocks()
	return r.result(), nil
}

// keepGoing asks for another pass when this one changed nodes but left
// nothing that will report back (no active step, no timer): a later part of
// the tree may now be able to move, as Argo's controller would notice from
// its own update.
func (r *run) keepGoing() {
	if len(r.changedIDs) == 0 || !r.wakeAt.IsZero() || r.wf.Status.Phase.Completed() ||
		len(r.plan.Launch) > 0 || r.sawActive {
		return
	}
	r.again()
}

func newRun(s Snapshot, now time.Time) *run {
	wf := s.Workflow
	if wf.Status.Nodes == nil {
		wf.Status.Nodes = v1alpha1.Nodes{}
	}
	r := &run{
		wf:       wf,
		spec:     execSpec(wf),
		nodes:    wf.Status.Nodes,
		now:      now.UTC(),
		resolver: s.Templates,
		results:  s.Results,
		relaunch: withLockWaiters(s),
		memos:    s.Memos,
		noMemos:  s.NoMemos,
		locks:    s.Locks,
		lim:      s.Limits.WithDefaults(),
		pattern:  s.TransientErrorPattern,
		changed:  map[string]prevNode{},
	}
	r.caches = &caches{}
	if m := s.Prepared; m != nil {
		if m.spec != r.spec {
			m.spec, m.c = r.spec, caches{}
		}
		r.caches = &m.c
		r.prepared = true
	}
	r.activePods = -1
	return r
}

// execSpec is the spec the workflow runs (v1alpha1.Workflow.ExecSpec). A
// stored template spec follows the shutdown and suspend of the workflow's
// own spec, where the API sets them, as Argo's controller copies them.
func execSpec(wf *v1alpha1.Workflow) *v1alpha1.WorkflowSpec {
	s := wf.ExecSpec()
	if s != &wf.Spec {
		s.Shutdown, s.Suspend = wf.Spec.Shutdown, wf.Spec.Suspend
	}
	return s
}

// start marks a new workflow Running and computes the values every pass
// needs: workflow.status and workflow.duration (rule 6.3), the workflow
// deadline (rule 8.1) and the shutdown strategy. It returns false when the
// workflow cannot start (a bad global parameter ends it Failed, rule 2.8).
func (r *run) start() bool {
	st := &r.wf.Status
	r.statusVar = string(st.Phase)
	starting := st.Phase == v1alpha1.WorkflowUnknown || st.Phase == v1alpha1.WorkflowPending
	if starting {
		st.Phase = v1alpha1.WorkflowRunning
	}
	if st.StartedAt.IsZero() {
		st.StartedAt = metav1.NewTime(r.now)
	}
	r.duration = fmt.Sprintf("%f", r.now.Sub(st.StartedAt.Time).Seconds())
	if err := r.checkGlobalParameters(r.spec.Arguments.Parameters); err != nil {
		r.completeWorkflow(v1alpha1.WorkflowFailed, "failed to set global parameters: "+err.Error())
		return false
	}
	if starting {
		if err := r.applyWorkflowMetadata(); err != nil { // metadata.go
			r.completeWorkflow(v1alpha1.WorkflowError, err.Error())
			return false
		}
	}
	if ads := r.spec.ActiveDeadlineSeconds; ads != nil {
		r.deadline = st.StartedAt.Truncate(time.Second).Add(time.Duration(*ads) * time.Second).UTC()
		r.pastDeadline = !r.now.Before(r.deadline)
		if !r.pastDeadline {
			r.wake(r.deadline)
		}
	}
	switch r.spec.Shutdown {
	case v1alpha1.ShutdownStop, v1alpha1.ShutdownTerminate:
		r.shutdown = r.spec.Shutdown
	}
	return true
}

func (r *run) suspended() bool {
	return r.spec.Suspend != nil && *r.spec.Suspend
}

// operate runs the entrypoint, the workflow hooks and the exit handler, in
// the order of rule 9.4, and settles the workflow phase (rule 2.2).
func (r *run) operate() {
	root, err := r.executeTemplate(r.wf.Name, holder{kind: holderEntry, template: r.spec.Entrypoint},
		r.rootContext(), &r.spec.Arguments, execOpts{})
	if err != nil && !isSignal(err) {
		r.completeWorkflow(v1alpha1.WorkflowError, "error in entry template execution: "+err.Error())
		return
	}
	if root.ID == "" {
		return
	}
	root = r.nodes[root.ID] // a hold (failFast) may have settled it
	mapped := workflowPhaseOf(root.Phase)
	r.setGlobal("workflow.status", string(mapped))
	r.afterRoot = true
	if !r.workflowHooks() || !fulfilled(root) {
		return
	}
	exitNode, done := r.workflowExitHandler()
	if !done {
		return
	}
	if r.activePodsRemain() {
		return
	}
	r.settle(root, mapped, exitNode)
}

// settle sets the final workflow phase from the root and the exit handler
// (rule 2.2, trap 14).
func (r *run) settle(root v1alpha1.NodeStatus, mapped v1alpha1.WorkflowPhase, exitNode *v1alpha1.NodeStatus) {
	msg := root.Message
	if root.Phase.FailedOrError() {
		msg = r.failureMessage(root)
	}
	if root.Phase.FailedOrError() && r.shutdown != "" {
		msg = fmt.Sprintf("Stopped with strategy '%s'", r.shutdown)
	}
	switch mapped {
	case v1alpha1.WorkflowSucceeded:
		switch {
		case exitNode != nil && exitNode.Phase == v1alpha1.NodeFailed:
			r.completeWorkflow(v1alpha1.WorkflowFailed, r.failureMessage(*exitNode))
		case exitNode != nil && exitNode.Phase == v1alpha1.NodeError:
			r.completeWorkflow(v1alpha1.WorkflowError, r.failureMessage(*exitNode))
		default:
			r.completeWorkflow(v1alpha1.WorkflowSucceeded, "")
		}
	case v1alpha1.WorkflowFailed:
		r.completeWorkflow(v1alpha1.WorkflowFailed, msg)
	default:
		r.completeWorkflow(v1alpha1.WorkflowError, msg)
	}
}

// workflowExitHandler runs <wf>.onExit (rule 9.1). It returns the exit node
// (nil when there is none) and whether the workflow may complete.
func (r *run) workflowExitHandler() (*v1alpha1.NodeStatus, bool) {
	hook := workflowExitHook(r.spec)
	if hook == nil {
		return nil, true
	}
	name := r.wf.Name + ".onExit"
	_, exists := r.byName(name)
	if !exists && r.shutdown == v1alpha1.ShutdownTerminate {
		return nil, true
	}
	args := hook.Arguments
	node, err := r.executeTemplate(name, hookHolder(hook), r.rootContext(), &args,
		execOpts{onExit: true, flag: &v1alpha1.NodeFlag{Hooked: true}})
	if err != nil && !isSignal(err) {
		r.completeWorkflow(v1alpha1.WorkflowError, "error in exit template execution : "+err.Error())
		return nil, false
	}
	if node.ID == "" || !fulfilled(node) {
		return nil, false
	}
	return &node, true
}

// workflowExitHook returns the workflow's exit hook: spec.onExit, or
// spec.hooks.exit; both receive spec.arguments unless hooks.exit has its own.
func workflowExitHook(spec *v1alpha1.WorkflowSpec) *v1alpha1.LifecycleHook {
	if spec.OnExit != "" {
		return &v1alpha1.LifecycleHook{Template: spec.OnExit, Arguments: spec.Arguments}
	}
	h, ok := spec.Hooks[v1alpha1.ExitLifecycleEvent]
	if !ok {
		return nil
	}
	if argumentsEmpty(h.Arguments) {
		h.Arguments = spec.Arguments
	}
	return &h
}

func argumentsEmpty(a v1alpha1.Arguments) bool {
	return len(a.Parameters) == 0 && len(a.Artifacts) == 0
}

// result assembles the Result of the pass.
func (r *run) result() Result {
	res := Result{Status: r.wf.Status, Changed: r.changedIDs, Plan: r.plan, Locks: r.lockOps, Need: r.needs, Metadata: r.meta}
	if !r.wakeAt.IsZero() && !r.wf.Status.Phase.Completed() {
		d := r.wakeAt.Sub(r.now)
		if d < time.Millisecond {
			d = time.Millisecond
		}
		res.RequeueAfter = d
	}
	return res
}

// need records something the snapshot lacks and asks for a pass at once,
// in which the caller has loaded it.
func (r *run) need(add func(*Need)) {
	add(&r.needs)
	r.again()
}

// stopFor records a bound that ends the workflow Error at the end of the
// pass; the first one is kept.
func (r *run) stopFor(e *limitError) {
	if r.stop == nil {
		r.stop = e
	}
}

// yield reports whether this pass has created Limits.MaxNodesPerPass nodes.
// The caller then creates no more, and Reconcile asks to be called again at
// once: a pass stays short however big the workflow, so a shutdown or a new
// result is seen soon.
func (r *run) yield() bool {
	if r.created < r.lim.MaxNodesPerPass {
		return false
	}
	r.yielded = true
	r.again()
	return true
}

// wake asks to be called again at t (the earliest such time wins).
func (r *run) wake(t time.Time) {
	if r.wakeAt.IsZero() || t.Before(r.wakeAt) {
		r.wakeAt = t
	}
}

// failForLimit ends a workflow that crossed Limits.MaxNodes or
// Limits.MaxDepth: running steps are killed and the workflow is Error with
// the bound's message.
func (r *run) failForLimit(e *limitError) {
	msg := e.Error()
	for _, id := range sortedIDs(r.nodes) {
		n := r.nodes[id]
		if isLeafType(n.Type) && !n.Phase.Fulfilled() {
			r.killNode(n, v1alpha1.NodeFailed, msg)
		}
	}
	r.completeWorkflow(v1alpha1.WorkflowError, msg)
}

var errBadParameter = errors.New("either value or valueFrom must be specified in order to set global parameter")

// checkGlobalParameters checks that every workflow parameter has a value
// (rule 2.8): braid reads no ConfigMaps, so valueFrom needs a default. A
// value longer than Limits.MaxParameterBytes is refused.
func (r *run) checkGlobalParameters(params []v1alpha1.Parameter) error {
	for _, p := range params {
		if p.Value != nil && len(*p.Value) > r.lim.MaxParameterBytes {
			return &limitError{node: r.wf.Name, what: fmt.Sprintf("global parameter %q has %d bytes", p.Name, len(*p.Value)),
				key: "maxParameterBytes", limit: r.lim.MaxParameterBytes}
		}
		if p.Value != nil {
			continue
		}
		if p.ValueFrom != nil && p.ValueFrom.Default != nil {
			continue
		}
		if p.ValueFrom != nil && p.ValueFrom.ConfigMapKeyRef != nil {
			return fmt.Errorf("failed to set global parameter %s from configmap with name %s and key %s: configmaps are not available",
				p.Name, p.ValueFrom.ConfigMapKeyRef.Name, p.ValueFrom.ConfigMapKeyRef.Key)
		}
		return fmt.Errorf("%w %s", errBadParameter, p.Name)
	}
	return nil
}
