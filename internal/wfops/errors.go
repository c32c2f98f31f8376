package wfops

import (
	"errors"
	"fmt"
)

// ErrBadRequest is wrapped by every error caused by a bad argument: an
// unparsable or unsupported node field selector, a malformed or undeclared
// parameter, an unknown phase, an output parameter the node does not
// declare, a selector that matches nothing. The server maps it to gRPC
// InvalidArgument.
var ErrBadRequest = errors.New("bad request")

// ErrState is wrapped by every error caused by the workflow's state: retrying
// a workflow that is not Failed or Error, suspending, resuming or stopping a
// completed one, resubmitting a Succeeded one with --memoized. The server
// maps it to gRPC FailedPrecondition.
var ErrState = errors.New("not allowed in the workflow's current state")

// opError carries a user-facing message and the kind (ErrBadRequest or
// ErrState) it wraps, without adding the kind's text to the message.
type opError struct {
	kind error
	err  error
}

func (e *opError) Error() string   { return e.err.Error() }
func (e *opError) Unwrap() []error { return []error{e.kind, e.err} }

// badRequest returns an error wrapping ErrBadRequest; format may use %w.
func badRequest(format string, a ...any) error {
	return &opError{kind: ErrBadRequest, err: fmt.Errorf(format, a...)}
}

// badState returns an error wrapping ErrState; format may use %w.
func badState(format string, a ...any) error {
	return &opError{kind: ErrState, err: fmt.Errorf(format, a...)}
}
