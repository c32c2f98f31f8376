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
// Sprig's own functions do (for example sprig.now and sprig.randAlpha, kept
// for compatibility with Argo; sprig.getHostByName is removed).
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
// # Budget
//
// Every evaluation is bounded (issue 15) by a Budget; the package-level
// functions use DefaultBudget, which matches config.DefaultLimits
// (expressionTimeout 1s, maxExpressionBytes 1 MiB):
//
//	type Budget struct{ Time time.Duration; Bytes int64; Nodes uint }
//	(Budget).Eval, EvalBool, Replace, ReplaceJSON, EvalWhen
//
// An evaluation that would exceed it stops with ErrBudget, "expression
// exceeded its budget: <what>", before the allocation or at the first check
// after the deadline; a {{= }} tag that exceeds it fails in every Mode. How
// (budget.go, guard.go, builtins.go, sprig.go, size.go):
//
//   - A patcher (guard) rewrites the syntax tree before compiling: each
//     predicate iteration (map, filter, reduce, all, ...) checks the
//     deadline; string "+", "matches", "==", "in" of lists and map literals
//     become calls that check the size first; sprig.name(...) and the
//     builtins that build strings or lists get the evaluation's meter as
//     first argument.
//   - Every Sprig function and those builtins (repeat, join, replace,
//     split, upper, lower, string, toJSON, fromJSON, toBase64, keys,
//     flatten, ...) compute an upper bound of what they will build from
//     their arguments and charge it before the call; the rest of Sprig,
//     whose results are at most a few times their arguments, is charged by
//     the size of its result. Key and certificate generation with RSA or
//     DSA is refused: it may run for seconds and cannot be stopped.
//   - expr-lang's VM counts the lists, maps and ranges it builds; its
//     memory budget is Bytes/8 elements.
//   - The value of an evaluation must fit Bytes and nest at most 1000 deep.
//   - Replace has one budget for the whole pass, all its tags together.
//   - EvalWhen cannot stop govaluate, so the condition is checked first: at
//     most Bytes long, parentheses at most 1000 deep, regular expressions
//     within Bytes; what remains is linear in its length.
//   - Depends expressions are evaluated on braid's own tree, with a depth
//     limit, in time linear in their length; they need no budget.
//
// Bytes counts what an evaluation builds, in all (not what is live at
// once). FuzzEval checks that no evaluation runs past Time by more than a
// margin or grows the heap by more than 16 MiB.
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
