package expr

import (
	"fmt"
	"strings"
)

// Task results that may follow a task name in a depends expression (rule 3.1).
const (
	ResultSucceeded    = "Succeeded"
	ResultFailed       = "Failed"
	ResultErrored      = "Errored"
	ResultSkipped      = "Skipped"
	ResultOmitted      = "Omitted"
	ResultDaemoned     = "Daemoned"
	ResultAnySucceeded = "AnySucceeded"
	ResultAllFailed    = "AllFailed"
)

// isResult reports whether name is one of the task results.
func isResult(name string) bool {
	switch name {
	case ResultSucceeded, ResultFailed, ResultErrored, ResultSkipped, ResultOmitted,
		ResultDaemoned, ResultAnySucceeded, ResultAllFailed:
		return true
	}
	return false
}

// maxDependsDepth bounds the nesting of parentheses and "!" so that no input
// can exhaust the stack.
const maxDependsDepth = 256

// Depends is a parsed enhanced `depends` expression (rule 3.1): "&&", "||",
// "!", parentheses, and operands "task" or "task.Result". The zero value and
// the result of parsing "" have no operands and evaluate to true.
type Depends struct {
	root *dependsNode
}

// Operand is one "task" or "task.Result" of a depends expression. Result is
// empty for a bare task name.
type Operand struct {
	Task   string
	Result string
}

// ContinueOn is a dependency's continueOn setting, which widens the meaning of
// its bare name (rule 3.2).
type ContinueOn struct {
	Error  bool
	Failed bool
}

// TaskState is what a depends expression can see of one dependency (rule
// 3.4). For a fanned-out task, Phase is the TaskGroup's phase; see
// TaskGroupState.
type TaskState struct {
	// Phase is the node phase: "Succeeded", "Failed", "Error", "Skipped",
	// "Omitted", "Running", "Pending".
	Phase string
	// Daemoned is true for a daemoned node.
	Daemoned bool
	// AnySucceeded is true for a TaskGroup with a Succeeded iteration.
	AnySucceeded bool
	// AllFailed is true for a TaskGroup with at least one iteration whose
	// iterations are all Failed (Error does not count).
	AllFailed bool
}

// TaskGroupState builds the state of a fanned-out task from the TaskGroup's
// phase and the phases of its iterations.
func TaskGroupState(phase string, iterationPhases []string) TaskState {
	s := TaskState{Phase: phase, AllFailed: len(iterationPhases) > 0}
	for _, p := range iterationPhases {
		s.AnySucceeded = s.AnySucceeded || p == "Succeeded"
		s.AllFailed = s.AllFailed && p == "Failed"
	}
	return s
}

type dependsKind uint8

const (
	kindOperand dependsKind = iota
	kindNot
	kindAnd
	kindOr
	kindParen
)

// dependsNode is a node of the expression tree. Operands use op; "!" and
// parentheses have one child, "&&" and "||" two.
type dependsNode struct {
	kind dependsKind
	op   Operand
	kids []*dependsNode
}

// ParseDepends parses and validates a depends expression. Errors wrap
// ErrDepends (grammar) or ErrTaskResult (an unknown result, which the text
// names).
func ParseDepends(expression string) (*Depends, error) {
	if strings.TrimSpace(expression) == "" {
		return &Depends{}, nil
	}
	p := &dependsParser{src: expression}
	if err := p.lex(); err != nil {
		return nil, fmt.Errorf("depends '%s': %w", expression, err)
	}
	root, err := p.parseOr(0)
	if err == nil && p.peek().kind != tokEOF {
		err = p.operatorExpected()
	}
	if err != nil {
		return nil, fmt.Errorf("depends '%s': %w", expression, err)
	}
	return &Depends{root: root}, nil
}

// DependenciesToDepends converts the legacy `dependencies` list to the
// equivalent expression, the bare names joined with " && " (rule 3.3). Apply
// Rewrite to give each name its continueOn meaning.
func DependenciesToDepends(dependencies []string) (*Depends, error) {
	var root *dependsNode
	for _, name := range dependencies {
		if err := checkTaskName(name); err != nil {
			return nil, fmt.Errorf("dependencies: %w", err)
		}
		leaf := &dependsNode{kind: kindOperand, op: Operand{Task: name}}
		if root == nil {
			root = leaf
		} else {
			root = &dependsNode{kind: kindAnd, kids: []*dependsNode{root, leaf}}
		}
	}
	return &Depends{root: root}, nil
}

// checkTaskName validates a name from the dependencies list.
func checkTaskName(name string) error {
	if name == "" || nameLength(name, 0) != len(name) {
		return fmt.Errorf("%w: '%s' is not a task name", ErrDepends, name)
	}
	if isDigit(name[0]) {
		return fmt.Errorf("%w: task name '%s' starts with a digit", ErrDepends, name)
	}
	return nil
}

// Operands returns the operands in the order they are written.
func (d *Depends) Operands() []Operand {
	var out []Operand
	d.root.walk(func(n *dependsNode) {
		if n.kind == kindOperand {
			out = append(out, n.op)
		}
	})
	return out
}

// Tasks returns the names of the tasks referenced, in order, each once.
func (d *Depends) Tasks() []string {
	var out []string
	seen := make(map[string]bool)
	for _, op := range d.Operands() {
		if !seen[op.Task] {
			seen[op.Task] = true
			out = append(out, op.Task)
		}
	}
	return out
}

// String returns the expression in a normal form ("A && (B.Failed || C)").
// After Rewrite it is the text Argo evaluates, for example
// "(A.Succeeded || A.Skipped || A.Daemoned || A.Errored)".
func (d *Depends) String() string {
	var b strings.Builder
	d.root.write(&b)
	return b.String()
}

// Rewrite returns a copy in which every bare name A is replaced by
// (A.Succeeded || A.Skipped || A.Daemoned), followed by " || A.Errored" if A
// has continueOn.error and " || A.Failed" if it has continueOn.failed (rule
// 3.2). continueOn may be nil, meaning no task has continueOn.
func (d *Depends) Rewrite(continueOn func(task string) ContinueOn) *Depends {
	return &Depends{root: d.root.rewrite(continueOn)}
}

// Eval evaluates the expression over the dependencies' states (rule 3.4).
// The caller must call it only once every dependency is fulfilled with its
// hooks and exit handlers (rule 3.5). A bare name that was not rewritten means
// Succeeded, Skipped or Daemoned. The result equals Argo's evaluation of the
// same expression with expr-lang after replacing '-' by '_'.
func (d *Depends) Eval(state func(task string) TaskState) (bool, error) {
	if d.root == nil {
		return true, nil
	}
	if state == nil {
		return false, fmt.Errorf("%w: no task states to evaluate '%s' with", ErrDepends, d.String())
	}
	return d.root.eval(state), nil
}

func (n *dependsNode) walk(f func(*dependsNode)) {
	if n == nil {
		return
	}
	f(n)
	for _, k := range n.kids {
		k.walk(f)
	}
}

func (n *dependsNode) write(b *strings.Builder) {
	if n == nil {
		return
	}
	switch n.kind {
	case kindOperand:
		b.WriteString(n.op.Task)
		if n.op.Result != "" {
			b.WriteString("." + n.op.Result)
		}
	case kindNot:
		b.WriteString("!")
		n.kids[0].write(b)
	case kindParen:
		b.WriteString("(")
		n.kids[0].write(b)
		b.WriteString(")")
	case kindAnd:
		n.writeBinary(b, " && ")
	case kindOr:
		n.writeBinary(b, " || ")
	}
}

func (n *dependsNode) writeBinary(b *strings.Builder, op string) {
	n.kids[0].write(b)
	b.WriteString(op)
	n.kids[1].write(b)
}

func (n *dependsNode) rewrite(continueOn func(string) ContinueOn) *dependsNode {
	if n == nil {
		return nil
	}
	if n.kind == kindOperand {
		if n.op.Result != "" {
			return n
		}
		return bareExpansion(n.op.Task, continueOn)
	}
	kids := make([]*dependsNode, len(n.kids))
	for i, k := range n.kids {
		kids[i] = k.rewrite(continueOn)
	}
	return &dependsNode{kind: n.kind, kids: kids}
}

// bareExpansion builds the rule 3.2 meaning of a bare task name.
func bareExpansion(task string, continueOn func(string) ContinueOn) *dependsNode {
	results := []string{ResultSucceeded, ResultSkipped, ResultDaemoned}
	if continueOn != nil {
		c := continueOn(task)
		if c.Error {
			results = append(results, ResultErrored)
		}
		if c.Failed {
			results = append(results, ResultFailed)
		}
	}
	var or *dependsNode
	for _, r := range results {
		leaf := &dependsNode{kind: kindOperand, op: Operand{Task: task, Result: r}}
		if or == nil {
			or = leaf
		} else {
			or = &dependsNode{kind: kindOr, kids: []*dependsNode{or, leaf}}
		}
	}
	return &dependsNode{kind: kindParen, kids: []*dependsNode{or}}
}

func (n *dependsNode) eval(state func(string) TaskState) bool {
	switch n.kind {
	case kindOperand:
		return operandValue(n.op, state(n.op.Task))
	case kindNot:
		return !n.kids[0].eval(state)
	case kindParen:
		return n.kids[0].eval(state)
	case kindAnd:
		return n.kids[0].eval(state) && n.kids[1].eval(state)
	case kindOr:
		return n.kids[0].eval(state) || n.kids[1].eval(state)
	}
	return false
}

// operandValue is the truth of one operand for a dependency in state s.
func operandValue(op Operand, s TaskState) bool {
	daemoned := s.Daemoned && s.Phase != "Pending"
	switch op.Result {
	case "":
		return s.Phase == "Succeeded" || s.Phase == "Skipped" || daemoned
	case ResultSucceeded:
		return s.Phase == "Succeeded"
	case ResultFailed:
		return s.Phase == "Failed"
	case ResultErrored:
		return s.Phase == "Error"
	case ResultSkipped:
		return s.Phase == "Skipped"
	case ResultOmitted:
		return s.Phase == "Omitted"
	case ResultDaemoned:
		return daemoned
	case ResultAnySucceeded:
		return s.AnySucceeded
	case ResultAllFailed:
		return s.AllFailed
	}
	return false
}
