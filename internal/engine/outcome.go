package engine

import "github.com/braidwf/braid/pkg/apis/v1alpha1"

// hold says why a template invocation did not create, or did not advance,
// its node in this pass. It is not an error: the node is tried again on a
// later pass, and the caller decides what the hold means for its step group
// or DAG task (rules 2.4, 10.1).
type hold uint8

const (
	// holdNone: nothing held the node back.
	holdNone hold = iota
	// holdParallelism: a parallelism limit or a template's failFast holds
	// the node back (rules 10.1-10.3).
	holdParallelism
	// holdReference: a steps./tasks. reference is not known yet; the group
	// waits for a later pass (rule 0.2).
	holdReference
	// holdNodeLimit: creating the node would pass Limits.MaxNodes; the
	// workflow ends Error at the end of the pass (run.stop).
	holdNodeLimit
	// holdYield: this pass created Limits.MaxNodesPerPass nodes; the node
	// is created on the next pass, which Reconcile asks for at once.
	holdYield
	// holdNotLoaded: the snapshot lacks a memoization entry or a lock's
	// state that creating the node needs; the node is created on the next
	// pass, after the caller has loaded what Result.Need asks for.
	holdNotLoaded
)

// timeoutMessage is the message of a Pending node that passed its template
// timeout (rule 8.3), and of what its timeout fails.
const timeoutMessage = "timeout"

// nodeLimitMessage is the message of a step group that could not record
// an empty loop because the workflow reached Limits.MaxNodes (the workflow
// then ends Error with the bound's message).
const nodeLimitMessage = "node limit reached"

// outcome is what an invocation of a template (executeTemplate and the
// functions it dispatches to) did with its node, next to the plain error
// that reports a user error on it. At most one of hold and timeout is set,
// and neither is set when the error is not nil.
type outcome struct {
	// node is the invocation's node as stored, or the zero NodeStatus when
	// no node exists for it after this pass.
	node v1alpha1.NodeStatus
	// hold says why the node was not created or advanced in this pass.
	hold hold
	// timeout: a Pending leaf passed its template timeout (rule 8.3). The
	// leaf is Failed "timeout", and its caller fails at once: a step group
	// Failed "timeout", a DAG task's node Failed "timeout".
	timeout bool
}

// plain reports whether the invocation was neither held nor timed out.
func (o outcome) plain() bool { return o.hold == holdNone && !o.timeout }
