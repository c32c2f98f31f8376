package engine

import (
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Locks is the controller's lock manager as the engine sees it: the
// semaphores and mutexes of template-level synchronization
// (internal/synclock implements it).
type Locks interface {
	// TryAcquire takes, for holder, every lock that s names, or none. When
	// it cannot, the holder keeps its place in the queues, waitingOn is the
	// key of the lock in the way and message says why (Argo's "Waiting for
	// <key> lock. Lock status: <free>/<limit>"). A holder that holds the
	// locks already gets them again. priority and created order the queue.
	TryAcquire(holder, namespace string, s *v1alpha1.Synchronization, priority int32, created time.Time) (acquired bool, waitingOn, message string)
}

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
// launched, and it returns wait true: the controller reconciles again when
// a lock frees. The workflow's priority orders the waiters, as in Argo.
func (r *run) acquireLocks(in invocation, existing *v1alpha1.NodeStatus, opts execOpts) (v1alpha1.NodeStatus, bool, error) {
	s := in.tmpl.Synchronization
	if s == nil || r.locks == nil || (r.shutdown != "" && !(r.shutdown == v1alpha1.ShutdownStop && opts.onExit)) {
		return v1alpha1.NodeStatus{}, false, nil
	}
	var prio int32
	if r.spec.Priority != nil {
		prio = *r.spec.Priority
	}
	id := r.id(in.name)
	ok, waitingOn, msg := r.locks.TryAcquire(LockHolder(r.wf, id), r.wf.Namespace, s, prio, r.wf.CreationTimestamp.Time)
	if ok {
		if existing != nil && waitingForLock(*existing) {
			*existing = r.lockAcquired(*existing)
		}
		return v1alpha1.NodeStatus{}, false, nil
	}
	r.sawActive = true
	if existing != nil {
		n := *existing
		if n.Message != msg || n.SynchronizationStatus == nil || n.SynchronizationStatus.Waiting != waitingOn {
			n.Message = msg
			n.SynchronizationStatus = &v1alpha1.NodeSynchronizationStatus{Waiting: waitingOn}
			r.put(n)
		}
		return n, true, nil
	}
	n, err := r.newNode(nodeInit{name: in.name, typ: r.lockNodeType(in.tmpl), h: in.h, scope: in.scope,
		boundaryID: opts.boundaryID, phase: v1alpha1.NodePending, flag: opts.flag, inputs: in.inputs, message: msg})
	if err != nil {
		return n, true, err
	}
	n.SynchronizationStatus = &v1alpha1.NodeSynchronizationStatus{Waiting: waitingOn}
	r.put(n)
	return n, true, nil
}

// lockAcquired moves on a node that waited for its locks: the waiting
// record and message go, a Steps, DAG or Retry node starts Running, and a
// leaf is launched in this pass (as a relaunch: the node exists, Pending).
func (r *run) lockAcquired(n v1alpha1.NodeStatus) v1alpha1.NodeStatus {
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
func (r *run) lockNodeType(t *v1alpha1.Template) v1alpha1.NodeType {
	if r.retryStrategy(t) != nil {
		return v1alpha1.NodeTypeRetry
	}
	return templateNodeType(t)
}
