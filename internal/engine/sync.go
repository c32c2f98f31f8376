package engine

import (
	"slices"
	"strings"

	"github.com/braidwf/braid/internal/synclock"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// LockHolder is the holder key of a node's template-level locks:
// "<namespace>/<workflow>/<node ID>" (a workflow's own are
// "<namespace>/<workflow>").
func LockHolder(wf *v1alpha1.Workflow, nodeID string) string {
	return wf.Namespace + "/" + wf.Name + "/" + nodeID
}

// withLockWaiters adds to Snapshot.Relaunch the leaf nodes that wait for a
// lock, so that every walk (steps, DAG tasks, loops) takes them past the
// fast path for running leaves to acquireLocks. Only a workflow whose
// status records synchronization pays for the scan.
func withLockWaiters(s Snapshot) map[string]bool {
	if s.Locks == nil || s.Workflow.Status.Synchronization == nil {
		return s.Relaunch
	}
	out, copied := s.Relaunch, false
	for id, n := range s.Workflow.Status.Nodes {
		if !isLeafType(n.Type) || !waitingForLock(n) || out[id] {
			continue
		}
		if !copied {
			out, copied = make(map[string]bool, len(s.Relaunch)+1), true
			for k, v := range s.Relaunch {
				out[k] = v
			}
		}
		out[id] = true
	}
	return out
}

// waitingForLock reports whether a node was created, or kept, Pending
// because its template's locks were taken.
func waitingForLock(n v1alpha1.NodeStatus) bool {
	return n.SynchronizationStatus != nil && n.SynchronizationStatus.Waiting != "" && !n.Phase.Fulfilled()
}

// acquireLocks takes the locks of a template's synchronization for the
// node name (ctl/operator.go, after checkParallelism). When they are taken,
// it returns wait false, and a node that waited for them goes on: a leaf is
// launched in this pass. When they are not, the node is created (or kept)
// Pending with the waiting message and its synchronizationStatus, nothing is
// launched, and it returns wait true with the invocation's outcome: the
// controller reconciles again when a lock frees. The workflow's priority
// orders the waiters, as in Argo. A lock whose state the snapshot lacks
// holds the node (holdNotLoaded).
func (r *pass) acquireLocks(in invocation, existing *v1alpha1.NodeStatus, opts execOpts) (o outcome, wait bool) {
	s := in.tmpl.Synchronization
	if s == nil || r.locks == nil || r.stopsNew(opts) {
		return outcome{}, false
	}
	var prio int32
	if r.spec.Priority != nil {
		prio = *r.spec.Priority
	}
	id := r.id(in.name)
	if !r.lockStateLoaded(in.tmpl) {
		return outcome{hold: holdNotLoaded}, true
	}
	holder, created := LockHolder(r.wf, id), r.wf.CreationTimestamp.Time
	ok, waitingOn, msg := r.locks.TryAcquire(holder, r.wf.Namespace, s, prio, created)
	op := synclock.OpWait
	if ok {
		op = synclock.OpAcquire
	}
	r.addLockOp(synclock.Decision{Op: op, Holder: holder, Namespace: r.wf.Namespace, Sync: s, Priority: prio, Created: created})
	if ok {
		if existing != nil && waitingForLock(*existing) {
			*existing = r.lockAcquired(*existing)
		}
		return outcome{}, false
	}
	r.sawWaiting()
	if existing != nil {
		n := *existing
		if n.Message != msg || n.SynchronizationStatus == nil || n.SynchronizationStatus.Waiting != waitingOn {
			n.Message = msg
			n.SynchronizationStatus = &v1alpha1.NodeSynchronizationStatus{Waiting: waitingOn}
			r.put(n)
		}
		return outcome{node: n}, true
	}
	n, ok := r.newNode(nodeInit{name: in.name, typ: r.lockNodeType(in.tmpl), h: in.h, scope: in.scope,
		boundaryID: opts.boundaryID, phase: v1alpha1.NodePending, flag: opts.flag, inputs: in.inputs, message: msg})
	if !ok {
		return outcome{hold: holdNodeLimit}, true
	}
	n.SynchronizationStatus = &v1alpha1.NodeSynchronizationStatus{Waiting: waitingOn}
	r.put(n)
	return outcome{node: n}, true
}

// lockStateLoaded reports whether the snapshot's lock table holds every
// lock of t's synchronization; when it does not, the locks are asked for
// (Result.Need).
func (r *pass) lockStateLoaded(t *v1alpha1.Template) bool {
	s := t.Synchronization
	if s == nil || r.locks == nil || r.locks.Has(r.wf.Namespace, s) {
		return true
	}
	r.need(func(n *Need) {
		if !slices.Contains(n.Locks, s) {
			n.Locks = append(n.Locks, s)
		}
	})
	return false
}

// lockAcquired moves on a node that waited for its locks: the waiting
// record and message go, a Steps, DAG or Retry node starts Running, and a
// leaf is launched in this pass (as a relaunch: the node exists, Pending).
func (r *pass) lockAcquired(n v1alpha1.NodeStatus) v1alpha1.NodeStatus {
	n.SynchronizationStatus = nil
	n.Message = ""
	if isLeafType(n.Type) && !r.relaunch[n.ID] {
		relaunch := make(map[string]bool, len(r.relaunch)+1)
		for k, v := range r.relaunch {
			relaunch[k] = v
		}
		relaunch[n.ID] = true
		r.relaunch = relaunch
	}
	if !isLeafType(n.Type) {
		n.Phase = v1alpha1.NodeRunning
	}
	r.put(n)
	return n
}

// lockNodeType is the type of the node a template's invocation creates.
func (f *facts) lockNodeType(t *v1alpha1.Template) v1alpha1.NodeType {
	if f.retryStrategy(t) != nil {
		return v1alpha1.NodeTypeRetry
	}
	return templateNodeType(t)
}

// settleLocks ends a pass over a lock table: the locks of nodes that
// completed (or are gone) are released, all of a completed workflow's are,
// and status.synchronization shows the table's state for the workflow.
// Without a table the status keeps what it had.
func (r *pass) settleLocks() {
	if r.locks == nil {
		return
	}
	key := r.wf.Namespace + "/" + r.wf.Name
	if r.wf.Status.Phase.Completed() {
		if r.locks.Involved(key) {
			r.locks.ReleaseWorkflow(key)
			r.addLockOp(synclock.Decision{Op: synclock.OpReleaseWorkflow, Holder: key})
		}
		r.wf.Status.Synchronization = nil
		return
	}
	for _, h := range r.locks.Holders(key) {
		id, ok := strings.CutPrefix(h, key+"/")
		if !ok {
			continue // the workflow's own locks: held until it completes
		}
		if n, found := r.nodes[id]; !found || n.Phase.Fulfilled() {
			r.locks.Release(h)
			r.addLockOp(synclock.Decision{Op: synclock.OpRelease, Holder: h})
		}
	}
	r.wf.Status.Synchronization = r.locks.Status(key)
}
