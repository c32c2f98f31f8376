// Package expr evaluates the small languages inside Argo Workflows specs, with
// Argo's semantics (shared/reference/ARGO-SEMANTICS.md rules 0.2, 3, 4, 6.6,
// 6.8a, 6.9):
//
//   - template tags: {{ key }} and {{= expression }} in any text;
//   - expr-lang expressions (lifecycle hooks, retryStrategy.expression,
//     valueFrom.expression, CronWorkflow stopStrategy);
//   - `when` conditions, with govaluate semantics;
//   - enhanced `depends` expressions of DAG tasks.
//
// It owns no state and does no I/O: every function is pure apart from what
// Sprig's own functions do (for example sprig.now, sprig.randAlpha and
// sprig.getHostByName, kept for compatibility with Argo).
//
// # Tags
//
//	Tags(s string) []Tag                       each {{...}} with offsets, trimmed body, Expr flag
//
// # Substitution
//
//	type Scope map[string]any                  flat: "inputs.parameters.x" -> "v"; nil = absent optional
//	type Mode uint8                            Lenient, Strict, StrictRefs
//	Replace(s string, scope Scope, mode Mode) (string, error)
//	ReplaceJSON(jsonText string, scope Scope, mode Mode) (string, error)
//	Expand(scope Scope) map[string]any         the nested view expressions see
//
// Which mode to use where (rule 6.9): leaf template bodies, exit-handler and
// hook arguments are Lenient; step and task references are StrictRefs (a
// missing steps./tasks. variable is ErrUnresolved, and IsMissingVariable tells
// the caller to wait); loop expansion is Strict. Substitution of templates,
// steps and arguments is done on their JSON (ReplaceJSON) so that values with
// quotes and newlines keep the structure.
//
// Expression tags see Expand(scope) plus asInt, asFloat, jsonpath(json, path),
// toJson and sprig.* (Sprig v3 without env and expandenv). A string result is
// inserted raw, any other as JSON; nil is a failure. Hyphenated names need the
// index syntax: inputs.parameters['my-param'].
//
// # Expressions
//
//	Eval(expression string, env map[string]any) (any, error)
//	EvalBool(expression string, env map[string]any) (bool, error)
//	Check(expression string) error             syntax only, for lint
//
// # when
//
//	EvalWhen(condition string) (bool, error)
//
// # depends
//
//	ParseDepends(expression string) (*Depends, error)
//	DependenciesToDepends(dependencies []string) (*Depends, error)
//	(*Depends).Tasks() []string
//	(*Depends).Operands() []Operand
//	(*Depends).Rewrite(continueOn func(task string) ContinueOn) *Depends
//	(*Depends).Eval(state func(task string) TaskState) (bool, error)
//	(*Depends).String() string
//	TaskGroupState(phase string, iterationPhases []string) TaskState
//
// # Errors
//
// All sentinel errors are in errors.go, each with when it is returned.
// IsMissingVariable(err) tells a missing variable (wait and retry) from every
// other error (terminal: a user's mistake, never retried).
//
// # Differences from Argo, on purpose
//
//   - An expression tag ends at the first "}}" outside its strings and braces,
//     so "{{={'k':1}}}" works; Argo's scanner stops at the first "}}".
//   - An unterminated "{{" is text; Argo fails the whole substitution.
//   - In Lenient mode an expression tag that fails is always left as written
//     (rule 0.2, observed by running Argo), even when all its variables exist.
//   - Values are JSON-escaped with a JSON encoder, not strconv.Quote, so a
//     control character such as ESC cannot produce invalid JSON.
//   - Depends is evaluated on its own tree, not by expr-lang after replacing
//     '-' with '_'; the results are the same for every valid expression.
//
// # Imports
//
// This package imports only the standard library and the libraries Argo v4
// uses for the same jobs: expr-lang, Sprig v3, govaluate (the casbin fork) and
// evilmonkeyinc/jsonpath. It must not import pkg/apis or any other braid
// package, so that spec, engine and lint can all use it.
package expr
