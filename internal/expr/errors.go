package expr

import (
	"errors"
	"strings"
)

// Sentinel errors. Every error this package returns wraps exactly one of them
// (test with errors.Is) and adds the text that caused it.
var (
	// ErrUnresolved is returned when a tag must resolve and does not: any
	// unknown tag in Strict mode, or an unknown steps./tasks. tag in
	// StrictRefs mode; for an expression tag, a variable it reads is missing
	// ("failed to resolve {{=expr}}: steps.a.outputs.result is missing").
	// Its text always starts "failed to resolve {{", so
	// IsMissingVariable reports it; callers that resolve step or task
	// references wait (requeue) on it rather than fail (rule 0.2).
	ErrUnresolved = errors.New("failed to resolve")

	// ErrAbsentOptional is returned when a simple tag resolves to an absent
	// optional: a scope key that is present with a nil value, such as an
	// output of a skipped producer that declares no default (rule 6.6). It is
	// a terminal error in every mode and is not a missing variable.
	ErrAbsentOptional = errors.New("refers to an absent optional value")

	// ErrNotString is returned in Strict mode when a simple tag resolves to a
	// value that is not a string (for example an artifact). Lenient and
	// StrictRefs leave such a tag as it is for a later pass.
	ErrNotString = errors.New("does not resolve to a string")

	// ErrExpression is returned when an expression (a {{= }} tag in a mode
	// that does not leave it literal, or an Eval/EvalBool/Check call) fails
	// to parse, fails to run, or gives nil.
	ErrExpression = errors.New("failed to evaluate expression")

	// ErrNotBool is returned by EvalBool when the expression gives a value
	// that is not a bool.
	ErrNotBool = errors.New("expression result is not a bool")

	// ErrInvalidJSON is returned by ReplaceJSON when its input is not valid
	// JSON, when the substituted text would not be, or (Strict mode) when a
	// tag's body cannot be decoded because it spans the end of a JSON string.
	ErrInvalidJSON = errors.New("invalid JSON")

	// ErrInvalidWhen is returned by EvalWhen when the condition does not parse
	// or does not evaluate (including a leftover {{ tag, rule 4.3). Its text
	// is "Invalid 'when' expression '<w>': <cause>".
	ErrInvalidWhen = errors.New("invalid 'when' expression")

	// ErrWhenNotBool is returned by EvalWhen when the condition evaluates to a
	// value that is not a bool. Its text is
	// "Expected boolean evaluation for '<w>'. Got <v>".
	ErrWhenNotBool = errors.New("'when' is not boolean")

	// ErrDepends is returned by ParseDepends and DependenciesToDepends for a
	// depends expression that does not follow the grammar of rule 3.1:
	// unbalanced parentheses, a stray character, a missing operand or
	// operator, or a task name that starts with a digit.
	ErrDepends = errors.New("invalid depends expression")

	// ErrTaskResult is returned by ParseDepends for an operand "task.Result"
	// whose Result is not one of Succeeded, Failed, Errored, Skipped,
	// Omitted, Daemoned, AnySucceeded or AllFailed. The text names it.
	ErrTaskResult = errors.New("invalid task result")

	// ErrBudget is returned when an evaluation would exceed its Budget: it
	// would build more than Budget.Bytes, or it ran longer than
	// Budget.Time. The work is stopped before the allocation, or at the
	// first check after the deadline. Its text is "expression exceeded its
	// budget: <what>", for example "it builds 2000000000 bytes, more than
	// 1048576 (limits.maxExpressionBytes)". It is terminal: a {{= }} tag
	// that exceeds its budget fails in every Mode, Lenient included. An
	// Eval, EvalBool or Replace error that wraps it also wraps
	// ErrExpression.
	ErrBudget = errors.New("expression exceeded its budget")
)

// IsMissingVariable reports whether err means a variable is not known yet
// (rule 0.2). A caller resolving step or task references should wait and try
// again on such an error, not fail the node. Besides ErrUnresolved it matches
// the texts Argo matches ("failed to resolve {{", " is missing", "variable not
// in env"), so an error that crossed a boundary as text still counts.
func IsMissingVariable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnresolved) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "failed to resolve {{") ||
		strings.Contains(msg, " is missing") ||
		strings.Contains(msg, "variable not in env")
}

// textError carries an exact message (Argo's messages put the specific text
// first, for example "Invalid 'when' expression ...") while errors.Is still
// finds the sentinel and the cause.
type textError struct {
	text     string
	sentinel error
	cause    error
}

func (e *textError) Error() string { return e.text }

// Unwrap returns the sentinel and the cause, so errors.Is sees both.
func (e *textError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}

func newTextError(sentinel error, cause error, text string) error {
	return &textError{text: text, sentinel: sentinel, cause: cause}
}
