package expr

import (
	"fmt"
	"reflect"
	"regexp"
	"sync"

	exprlang "github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/vm/runtime"
)

// The names the guard adds to an expression. The meter is a variable of the
// environment; the others are functions of the compiler configuration.
const (
	meterName   = "__braid_meter__"
	tickName    = "__braid_tick__"
	addName     = "__braid_add__"
	concatName  = "__braid_concat__"
	matchesName = "__braid_matches__"
	chargeName  = "__braid_charge__"
	equalName   = "__braid_equal__"
	inName      = "__braid_in__"
)

var (
	meterType = reflect.TypeFor[*meter]()
	errorType = reflect.TypeFor[error]()
	anyType   = reflect.TypeFor[any]()
)

// guard is the expr-lang patcher that puts an expression on its meter. It
// runs after the first type check, before the optimizer and the compiler:
//   - every predicate body (map, filter, all, reduce, ...) first calls tick,
//     so each iteration checks the deadline (groupBy also charges the entry
//     it adds);
//   - "+" of operands that are not both numbers or times becomes a call
//     that charges a string concatenation before it is made;
//   - "matches" becomes a call that checks the size of the regular
//     expression before compiling it;
//   - a map literal charges its map;
//   - calls of sprig.name and of the guarded builtins (guardedBuiltins)
//     get the meter as first argument; a sprig call with a wrong number of
//     arguments is recorded in err.
type guard struct {
	bytes int64 // the budget, for regular expressions written as constants
	err   error
}

// Visit implements ast.Visitor.
func (g *guard) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.PredicateNode:
		n.Node = &ast.SequenceNode{Nodes: []ast.Node{meterCall(tickName, &ast.IntegerNode{Value: 0}), n.Node}}
	case *ast.BuiltinNode:
		if n.Name == "groupBy" && len(n.Arguments) == 2 {
			setTickCost(n.Arguments[1], 96)
		}
	case *ast.BinaryNode:
		g.binary(node, n)
	case *ast.MapNode:
		cost := &ast.IntegerNode{Value: 64 * (len(n.Pairs) + 1)}
		ast.Patch(node, &ast.SequenceNode{Nodes: []ast.Node{meterCall(chargeName, cost), n}})
	case *ast.CallNode:
		g.call(n)
	}
}

func (g *guard) binary(node *ast.Node, n *ast.BinaryNode) {
	switch n.Operator {
	case "+":
		left, right := n.Left.Type(), n.Right.Type()
		if isNumberOrTime(left) && isNumberOrTime(right) {
			return
		}
		name := addName
		if isString(left) && isString(right) {
			name = concatName
		}
		ast.Patch(node, meterCall(name, n.Left, n.Right))
	case "==", "!=":
		if isScalar(n.Left.Type()) || isScalar(n.Right.Type()) {
			return
		}
		var eq ast.Node = meterCall(equalName, n.Left, n.Right)
		if n.Operator == "!=" {
			eq = &ast.UnaryNode{Operator: "!", Node: eq}
		}
		ast.Patch(node, eq)
	case "in":
		if isScalar(n.Left.Type()) {
			return
		}
		ast.Patch(node, meterCall(inName, n.Left, n.Right))
	case "matches":
		if p, ok := n.Right.(*ast.StringNode); ok && g.err == nil {
			g.err = checkPattern(p.Value, g.bytes)
		}
		ast.Patch(node, meterCall(matchesName, n.Left, n.Right))
	}
}

func (g *guard) call(n *ast.CallNode) {
	switch callee := n.Callee.(type) {
	case *ast.IdentifierNode:
		if _, ok := guardedBuiltins()[callee.Value]; ok {
			n.Arguments = append([]ast.Node{meterIdent()}, n.Arguments...)
			n.SetType(nil) // so that the final type check sees the new argument
		}
	case *ast.MemberNode:
		base, ok := callee.Node.(*ast.IdentifierNode)
		prop, ok2 := callee.Property.(*ast.StringNode)
		if !ok || !ok2 || base.Value != "sprig" {
			return
		}
		t, ok := sprigTypes()[prop.Value]
		if !ok {
			return
		}
		if err := arity("sprig."+prop.Value, t, len(n.Arguments)); err != nil && g.err == nil {
			g.err = err
		}
		n.Arguments = append([]ast.Node{meterIdent()}, n.Arguments...)
		n.SetType(nil)
	}
}

// checkPattern reports a constant regular expression that does not compile,
// or that would build more than bytes.
func checkPattern(pattern string, bytes int64) error {
	if n := regexpSize(pattern); n > bytes {
		return fmt.Errorf("%w: the regular expression %q builds %d bytes, more than %d (limits.maxExpressionBytes)",
			ErrBudget, clip(pattern), n, bytes)
	}
	_, err := regexp.Compile(pattern)
	return err
}

// arity checks the number of arguments of a call of a function of type t.
func arity(name string, t reflect.Type, got int) error {
	want := t.NumIn()
	if t.IsVariadic() {
		if got < want-1 {
			return fmt.Errorf("%s takes at least %d arguments %v, got %d", name, want-1, t, got)
		}
		return nil
	}
	if got != want {
		return fmt.Errorf("%s takes %d arguments %v, got %d", name, want, t, got)
	}
	return nil
}

// setTickCost makes the tick of a predicate charge cost bytes.
func setTickCost(arg ast.Node, cost int) {
	p, ok := arg.(*ast.PredicateNode)
	if !ok {
		return
	}
	if seq, ok := p.Node.(*ast.SequenceNode); ok && len(seq.Nodes) == 2 {
		if c, ok := seq.Nodes[0].(*ast.CallNode); ok && len(c.Arguments) == 2 {
			c.Arguments[1] = &ast.IntegerNode{Value: cost}
		}
	}
}

func meterIdent() ast.Node { return &ast.IdentifierNode{Value: meterName} }

func meterCall(name string, args ...ast.Node) *ast.CallNode {
	return &ast.CallNode{
		Callee:    &ast.IdentifierNode{Value: name},
		Arguments: append([]ast.Node{meterIdent()}, args...),
	}
}

func isNumberOrTime(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return t == timeType
}

// isScalar reports whether values of type t compare in constant time.
func isScalar(t reflect.Type) bool {
	if isNumberOrTime(t) || isString(t) {
		return true
	}
	return t != nil && t.Kind() == reflect.Bool
}

func isString(t reflect.Type) bool { return t != nil && t.Kind() == reflect.String }

// guardOptions are the compiler options of a guarded evaluation: the
// patcher, the guard functions and the guarded builtins.
func guardOptions(g *guard, nodes uint) []exprlang.Option {
	return []exprlang.Option{
		exprlang.MaxNodes(nodes),
		exprlang.Patch(g),
		func(c *conf.Config) {
			for name, f := range guardFunctions() {
				c.Functions[name] = f
			}
			for name, f := range guardedBuiltins() {
				c.Functions[name] = f
			}
		},
	}
}

// meterOf returns the meter of a guarded call: its first argument.
func meterOf(args []any) (*meter, []any, error) {
	if len(args) == 0 {
		return nil, nil, errNoMeter
	}
	m, ok := args[0].(*meter)
	if !ok || m == nil {
		return nil, nil, errNoMeter
	}
	return m, args[1:], nil
}

// guardFunctions are the functions the patcher calls.
var guardFunctions = sync.OnceValue(func() map[string]*builtin.Function {
	fns := map[string]*builtin.Function{
		tickName: {Func: tick, Types: funcTypes([]reflect.Type{meterType, reflect.TypeFor[int]()}, anyType)},
		addName:  {Func: add, Types: funcTypes([]reflect.Type{meterType, anyType, anyType}, anyType)},
		concatName: {Func: add, Types: funcTypes(
			[]reflect.Type{meterType, reflect.TypeFor[string](), reflect.TypeFor[string]()}, reflect.TypeFor[string]())},
		matchesName: {Func: matches, Types: funcTypes([]reflect.Type{meterType, anyType, anyType}, reflect.TypeFor[bool]())},
		chargeName:  {Func: charge, Types: funcTypes([]reflect.Type{meterType, reflect.TypeFor[int]()}, anyType)},
		equalName:   {Func: equal, Types: funcTypes([]reflect.Type{meterType, anyType, anyType}, reflect.TypeFor[bool]())},
		inName:      {Func: in, Types: funcTypes([]reflect.Type{meterType, anyType, anyType}, reflect.TypeFor[bool]())},
	}
	for name, f := range fns {
		f.Name = name
	}
	return fns
})

func funcTypes(in []reflect.Type, out reflect.Type) []reflect.Type {
	return []reflect.Type{reflect.FuncOf(in, []reflect.Type{out}, false)}
}

func tick(args ...any) (any, error) {
	m, rest, err := meterOf(args)
	if err != nil {
		return nil, err
	}
	if cost, ok := rest[0].(int); ok && cost > 0 {
		return nil, m.charge("groupBy", int64(cost))
	}
	return nil, m.tick()
}

func charge(args ...any) (any, error) {
	m, rest, err := meterOf(args)
	if err != nil {
		return nil, err
	}
	cost, _ := rest[0].(int)
	return nil, m.charge("a map literal", int64(cost))
}

// add is "+": a string concatenation is charged before it is made; any
// other operands go to expr-lang's own addition.
func add(args ...any) (any, error) {
	m, rest, err := meterOf(args)
	if err != nil {
		return nil, err
	}
	if a, ok := rest[0].(string); ok {
		if b, ok := rest[1].(string); ok {
			if err := m.chargeValue("'+'", satAdd(int64(len(a)), int64(len(b)))); err != nil {
				return nil, err
			}
			return a + b, nil
		}
	}
	if err := m.tick(); err != nil {
		return nil, err
	}
	return runtime.Add(rest[0], rest[1]), nil
}

// equal is "==" of values that are not both scalars: comparing lists
// recurses into them, so one side must fit the budget as a tree (a list that
// holds the same list twice at each of 50 levels is 2^50 elements to
// compare).
func equal(args ...any) (any, error) {
	m, rest, err := meterOf(args)
	if err != nil {
		return nil, err
	}
	if err := m.comparable("'=='", rest[0], rest[1]); err != nil {
		return nil, err
	}
	return runtime.Equal(rest[0], rest[1]), nil
}

// in is "in" of a needle that is not a scalar: each element is compared
// with it.
func in(args ...any) (any, error) {
	m, rest, err := meterOf(args)
	if err != nil {
		return nil, err
	}
	if err := m.comparable("'in'", rest[0], rest[0]); err != nil {
		return nil, err
	}
	return runtime.In(rest[0], rest[1]), nil
}

// comparable checks that a or b is at most the budget's room as a tree.
func (m *meter) comparable(what string, a, b any) error {
	if err := m.tick(); err != nil {
		return err
	}
	room := m.room()
	if n, err := sizeOf(a, memorySize, room); err == nil && n <= room {
		return nil
	}
	if n, err := sizeOf(b, memorySize, room); err == nil && n <= room {
		return nil
	}
	return m.exceeded("%s compares values of more than %d bytes (limits.maxExpressionBytes)", what, room)
}

// matches is the "matches" operator: the regular expression must fit the
// budget before it is compiled. The last one is kept for the next call, as
// in a loop.
func matches(args ...any) (any, error) {
	m, rest, err := meterOf(args)
	if err != nil {
		return nil, err
	}
	if rest[0] == nil || rest[1] == nil {
		return false, nil
	}
	s, ok := rest[0].(string)
	pattern, ok2 := rest[1].(string)
	if !ok || !ok2 {
		return nil, fmt.Errorf("invalid operation: %T matches %T", rest[0], rest[1])
	}
	re, err := m.regexp("matches", pattern)
	if err != nil {
		return nil, err
	}
	return re.MatchString(s), nil
}

// regexp compiles pattern once it fits the budget.
func (m *meter) regexp(what, pattern string) (*regexp.Regexp, error) {
	if re, ok := m.lastReOK.(*regexp.Regexp); ok && m.lastRe == pattern {
		return re, m.tick()
	}
	if err := m.fits(what+" compiling its regular expression", regexpSize(pattern)); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	m.lastRe, m.lastReOK = pattern, re
	return re, nil
}
