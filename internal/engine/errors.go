package engine

import (
	"errors"
	"fmt"
)

// ErrNoWorkflow is returned by Reconcile when the snapshot holds no
// workflow, or one without a name: a caller's mistake, not a user's.
var ErrNoWorkflow = errors.New("engine: snapshot has no named workflow")

// Inside the package an error means one thing: a user error on the node
// that the failing function returns it for (a bad reference, a missing
// input, an invalid field), which ends that node Error and which its caller
// turns into a group or task outcome (rules 2.4, 2.9). Everything else a
// function has to say about a node it did not create or advance travels in
// an outcome (outcome.go).

// limitError is a crossed bound of Limits: it names the node, the bound by
// its config key and the bound's value, and says by how much it was passed.
// It is a user error like any other: the node ends Error with its message.
// The depth bound ends the whole workflow besides (endsWorkflow), which
// run.stopFor records when it is crossed.
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

// endsWorkflow reports whether err is a bound that ends the whole workflow
// at the end of the pass (Limits.MaxDepth): the caller records nothing more.
func endsWorkflow(err error) bool {
	var e *limitError
	return errors.As(err, &e) && e.key == "maxDepth"
}
