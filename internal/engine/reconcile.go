package engine

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// pass is one Reconcile. It composes what the pass knows (facts: the
// snapshot, the node tree, templates and limits, with read-only methods) and
// what it decides (recorder: node writes, the Plan, lock decisions, needs,
// wake-ups), and adds the walk itself: executeTemplate and the steps, DAG,
// loop, retry, hook and leaf code it dispatches to, which read the facts and
// record their decisions. Nothing in it outlives Reconcile.
type pass struct {
	facts
	recorder

	// Variables that change during the pass (rule 6.3).
	statusVar string
	duration  string
	afterRoot bool
	globals   map[string]any
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
	r := newPass(s, now)
	if r.wf.Status.Phase.Completed() {
		return Result{Status: r.wf.Status}, nil
	}
	if ok := r.start(); ok {
		r.mergeResults()
		r.applyExecutionControl()
		if !r.suspended() {
			r.operate()
		}
		r.endForLimit() // even when the walk completed the workflow in this pass
		r.keepGoing()
		r.updateSums()
		r.setPodRunning(r.suspended())
		r.planMemoSaves()
	}
	r.settleLocks()
	return r.result(), nil
}

func newPass(s Snapshot, now time.Time) *pass {
	f := newFacts(s, now)
	return &pass{facts: f, recorder: newRecorder(f.wf, f.now, f.lim)}
}

// start marks a new workflow Running and computes the values every pass
// needs: workflow.status and workflow.duration (rule 6.3), the workflow
// deadline (rule 8.1) and the shutdown strategy. It returns false when the
// workflow cannot start (a bad global parameter ends it Failed, rule 2.8).
func (r *pass) start() bool {
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

// operate runs the entrypoint, the workflow hooks and the exit handler, in
// the order of rule 9.4, and settles the workflow phase (rule 2.2).
func (r *pass) operate() {
	o, err := r.executeTemplate(r.wf.Name, callSite{kind: siteEntry, template: r.spec.Entrypoint},
		r.rootContext(), &r.spec.Arguments, execOpts{})
	if msg, failed := failureText(o, err); failed {
		r.completeWorkflow(v1alpha1.WorkflowError, "error in entry template execution: "+msg)
		return
	}
	if o.node.ID == "" {
		return
	}
	root := r.nodes[o.node.ID] // a hold (failFast) may have settled it
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
func (r *pass) settle(root v1alpha1.NodeStatus, mapped v1alpha1.WorkflowPhase, exitNode *v1alpha1.NodeStatus) {
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
func (r *pass) workflowExitHandler() (*v1alpha1.NodeStatus, bool) {
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
	o, err := r.executeTemplate(name, hookSite(hook), r.rootContext(), &args,
		execOpts{onExit: true, flag: &v1alpha1.NodeFlag{Hooked: true}})
	if msg, failed := failureText(o, err); failed {
		r.completeWorkflow(v1alpha1.WorkflowError, "error in exit template execution : "+msg)
		return nil, false
	}
	if o.node.ID == "" || !fulfilled(o.node) {
		return nil, false
	}
	return &o.node, true
}

// failureText is what ends the workflow when its entrypoint or exit handler
// failed to run: a user error, or a leaf that passed its template timeout.
// A hold is no failure: the node runs on a later pass.
func failureText(o outcome, err error) (string, bool) {
	switch {
	case err != nil:
		return err.Error(), true
	case o.timeout:
		return timeoutMessage, true
	}
	return "", false
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

var errBadParameter = errors.New("either value or valueFrom must be specified in order to set global parameter")

// checkGlobalParameters checks that every workflow parameter has a value
// (rule 2.8): braid reads no ConfigMaps, so valueFrom needs a default. A
// value longer than Limits.MaxParameterBytes is refused.
func (f *facts) checkGlobalParameters(params []v1alpha1.Parameter) error {
	for _, p := range params {
		if p.Value != nil && len(*p.Value) > f.lim.MaxParameterBytes {
			return &limitError{node: f.wf.Name, what: fmt.Sprintf("global parameter %q has %d bytes", p.Name, len(*p.Value)),
				key: "maxParameterBytes", limit: f.lim.MaxParameterBytes}
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
