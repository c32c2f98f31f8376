package engine

import (
	"errors"
	"fmt"
)

// ErrNoWorkflow is returned by Reconcile when the snapshot holds no
// workflow, or one without a name: a caller's mistake, not a user's.
var ErrNoWorkflow = errors.New("engine: snapshot has no named workflow")

// Internal signals. They travel from executeTemplate to the steps and DAG
// code, which decide what each means for the group or the task (rules 2.4,
// 8.3, 10.1). None of them leaves the package.
var (
	// errParallelism: the node was not created (or not advanced) this pass
	// because a parallelism limit or template failFast holds it back.
	errParallelism = errors.New("max parallelism reached")
	// errTimeout: a Pending node passed its template timeout; the node is
	// Failed "timeout" and its step group fails at once.
	errTimeout = errors.New("timeout")
	// errWait: a steps./tasks. reference is not known yet; try again on a
	// later pass (rule 0.2).
	errWait = errors.New("waiting for a reference")
	// errNodeLimit: creating the node would pass Limits.MaxNodes.
	errNodeLimit = errors.New("node limit reached")
	// errNotLoaded: the snapshot lacks a memoization entry or a lock's
	// state that creating the node needs; the node is created on the next
	// pass, after the caller has loaded what Result.Need asks for.
	errNotLoaded = errors.New("waiting for the caller to load state")
	// errYield: this pass created Limits.MaxNodesPerPass nodes; the node is
	// created on the next pass, which Reconcile asks for at once.
	errYield = errors.New("nodes per pass reached")
)

// limitError is a crossed bound of Limits: it names the node, the bound by
// its config key and the bound's value, and says by how much it was passed.
type limitError struct {
	node  string // node name
	what  string // what crossed it, e.g. `withSequence has 200000 items`
	key   string // config key under limits:, e.g. maxLoopItems
	limit int
}

func (e *limitError) Error() string {
	msg := fmt.Sprintf("node %q: %s, more than the limit (limits.%s = %d)", e.node, e.what, e.key, e.limit)
	if e.key == "maxDepth" {
		msg = "Maximum recursion depth exceeded: " + msg
	}
	return msg
}

// isSignal reports whether err is one of the internal signals that a caller
// treats as "not now" rather than as a user error on the node.
func isSignal(err error) bool {
	return errors.Is(err, errParallelism) || errors.Is(err, errWait) || errors.Is(err, errNodeLimit) ||
		errors.Is(err, errYield) || errors.Is(err, errNotLoaded)
}

// endsWorkflow reports whether err is a bound that ends the whole workflow
// at the end of the pass (Limits.MaxDepth): the caller records nothing more.
func endsWorkflow(err error) bool {
	var e *limitError
	return errors.As(err, &e) && e.key == "maxDepth"
}
