package expr

import (
	"errors"
	"fmt"
	"strings"

	exprlang "github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// Eval evaluates an expr-lang expression over env, the nested maps of Expand,
// with the helper functions added (asInt, asFloat, jsonpath, toJson, sprig.*).
// env itself is not changed. It is for the expressions Argo evaluates with
// expr-lang outside tags: lifecycle hook expressions, retryStrategy.expression,
// valueFrom.expression and CronWorkflow stopStrategy (rule 4.5). A nil result
// is returned as it is; callers for which nil is an error (valueFrom, rule
// 12.2) check it. It is DefaultBudget.Eval.
func Eval(expression string, env map[string]any) (any, error) {
	return DefaultBudget.Eval(expression, env)
}

// Eval is the package-level Eval within budget b: an evaluation that would
// exceed it fails with ErrBudget (and ErrExpression).
func (b Budget) Eval(expression string, env map[string]any) (any, error) {
	m := b.newMeter()
	v, err := m.evaluate(expression, withFunctions(env, m))
	if err != nil {
		if errors.Is(err, ErrBudget) {
			return nil, budgetFailure(err, ErrExpression, fmt.Sprintf("expression '%s'", clip(expression)))
		}
		return nil, newTextError(ErrExpression, err,
			fmt.Sprintf("failed to evaluate expression '%s': %v", expression, err))
	}
	return v, nil
}

// EvalBool is Eval for expressions that must give a bool (hooks, retry,
// stopStrategy). Any other result is ErrNotBool. It is
// DefaultBudget.EvalBool.
func EvalBool(expression string, env map[string]any) (bool, error) {
	return DefaultBudget.EvalBool(expression, env)
}

// EvalBool is the package-level EvalBool within budget b.
func (b Budget) EvalBool(expression string, env map[string]any) (bool, error) {
	v, err := b.Eval(expression, env)
	if err != nil {
		return false, err
	}
	b2, ok := v.(bool)
	if !ok {
		return false, newTextError(ErrNotBool, nil,
			fmt.Sprintf("unable to cast expression result '%v' of '%s' to bool", v, expression))
	}
	return b2, nil
}

// budgetFailure is the error of an evaluation that exceeded its budget: the
// budget's text first ("expression exceeded its budget: ..."), then where.
// It wraps ErrBudget and sentinel.
func budgetFailure(err, sentinel error, where string) error {
	return newTextError(sentinel, err, fmt.Sprintf("%v, in %s", err, where))
}

// clip shortens an expression quoted in an error.
func clip(s string) string {
	const most = 200
	if len(s) <= most {
		return s
	}
	return s[:most] + "..."
}

// Check compiles expression for syntax only, as lint does where no variables
// are known. Tags inside it (which are substituted before evaluation, for
// example "{{inputs.parameters.x}} == true" in retryStrategy.expression) are
// replaced by a placeholder name first. Unknown variables are allowed; the
// helper functions are known, so a wrong number of arguments to one of them
// is reported.
func Check(expression string) error {
	src := placeholderTags(expression)
	err := safely(func() error {
		g := &guard{bytes: DefaultBudget.Bytes}
		opts := append(guardOptions(g, DefaultBudget.Nodes),
			exprlang.Env(withFunctions(nil, nil)), exprlang.AllowUndefinedVariables())
		if _, err := exprlang.Compile(src, opts...); err != nil {
			return err
		}
		return g.err
	})
	if err != nil {
		return newTextError(ErrExpression, err, fmt.Sprintf("invalid expression '%s': %v", expression, err))
	}
	return nil
}

// tagPlaceholder stands for a tag in Check. It is a valid identifier that no
// scope defines.
const tagPlaceholder = "__braid_tag__"

// placeholderTags replaces every tag of s with tagPlaceholder.
func placeholderTags(s string) string {
	tags := Tags(s)
	if len(tags) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, t := range tags {
		b.WriteString(s[last:t.Start])
		b.WriteString(tagPlaceholder)
		last = t.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// evaluate compiles src against env (which must already hold the helper
// functions and m, withFunctions) with the guard, and runs it on a VM whose
// element budget is m's.
func (m *meter) evaluate(src string, env map[string]any) (v any, err error) {
	defer recoverInto(&err)
	if err := m.tick(); err != nil {
		return nil, err
	}
	g := &guard{bytes: m.budget.Bytes}
	program, err := exprlang.Compile(src, append(guardOptions(g, m.budget.Nodes), exprlang.Env(env))...)
	if err == nil {
		err = g.err
	}
	if err != nil {
		return nil, m.cause(err)
	}
	machine := vm.VM{MemoryBudget: m.elements()}
	v, err = machine.Run(program, env)
	if err != nil {
		return nil, m.cause(err)
	}
	return v, m.checkResult(v)
}

// parseTree parses src without an environment.
func parseTree(src string) (tree *parser.Tree, err error) {
	defer recoverInto(&err)
	return parser.Parse(src)
}

// safely runs f and turns a panic in a library into an error. It is used only
// around third-party code (expr-lang, govaluate, jsonpath) so that no input can
// panic this package.
func safely(f func() error) (err error) {
	defer recoverInto(&err)
	return f()
}

func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("internal error in the expression library: %v", r)
	}
}

// referencedPaths returns the variable paths an expression reads: each
// identifier, and each member chain of constant names rooted at an
// identifier (a.b and a['b-c'] give [a b] and [a b-c]). Names bound by "let"
// and "$env" are left out.
func referencedPaths(tree *parser.Tree) [][]string {
	c := &pathCollector{lets: make(map[string]bool)}
	ast.Walk(&tree.Node, c)
	var paths [][]string
	for _, p := range c.paths {
		if !c.lets[p[0]] && !strings.HasPrefix(p[0], "$") {
			paths = append(paths, p)
		}
	}
	return paths
}

type pathCollector struct {
	paths [][]string
	lets  map[string]bool
}

// Visit implements ast.Visitor.
func (c *pathCollector) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		c.paths = append(c.paths, []string{n.Value})
	case *ast.MemberNode:
		if segs, ok := memberPath(n); ok {
			c.paths = append(c.paths, segs)
		}
	case *ast.VariableDeclaratorNode:
		c.lets[n.Name] = true
	}
}

// memberPath returns the names of a member chain such as a.b['c'].d, or false
// when some part is not a constant name or the chain is not rooted at an
// identifier.
func memberPath(n *ast.MemberNode) ([]string, bool) {
	var rev []string
	for {
		prop, ok := n.Property.(*ast.StringNode)
		if !ok {
			return nil, false
		}
		rev = append(rev, prop.Value)
		switch base := n.Node.(type) {
		case *ast.IdentifierNode:
			rev = append(rev, base.Value)
			return reversed(rev), true
		case *ast.MemberNode:
			n = base
		default:
			return nil, false
		}
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
