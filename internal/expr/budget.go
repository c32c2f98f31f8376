package expr

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Budget bounds one evaluation in time and in the size of what it builds
// (issue 15). A zero field takes its value from DefaultBudget. The methods
// of Budget are the evaluating entry points of this package; the
// package-level functions of the same names use DefaultBudget.
type Budget struct {
	// Time bounds the wall time of one evaluation (config
	// limits.expressionTimeout). It is checked at every iteration of a
	// map, filter, reduce or other predicate, and before every helper
	// function call, so an evaluation stops within one step of it.
	Time time.Duration
	// Bytes bounds the size of what one evaluation builds: the sum of the
	// strings, lists and maps made by its operators and functions (config
	// limits.maxExpressionBytes). Each function checks the size of what it
	// is about to build before it builds it. Lists, ranges and maps that
	// expr-lang's VM builds are counted by elements, at most Bytes/8 of
	// them.
	Bytes int64
	// Nodes bounds the size of the expression's syntax tree (expr-lang's
	// MaxNodes).
	Nodes uint
}

// DefaultBudget is the budget of the package-level functions. It matches
// config.DefaultLimits: ExpressionTimeout 1s, MaxExpressionBytes 1 MiB.
var DefaultBudget = Budget{Time: time.Second, Bytes: 1 << 20, Nodes: 10000}

// boxed is what each string, list or map that a guarded function returns
// costs besides its contents: its header, boxed in an interface.
const boxed = 32

// maxValueDepth bounds how deeply an expression value may nest lists and
// maps: encoding, printing and copying a value recurse once per level.
const maxValueDepth = 1000

// withDefaults returns b with every zero (or negative) field set from
// DefaultBudget.
func (b Budget) withDefaults() Budget {
	if b.Time <= 0 {
		b.Time = DefaultBudget.Time
	}
	if b.Bytes <= 0 {
		b.Bytes = DefaultBudget.Bytes
	}
	if b.Nodes == 0 {
		b.Nodes = DefaultBudget.Nodes
	}
	return b
}

// meter is the running account of one evaluation (one Eval, one Replace
// pass, one EvalWhen). It has no exported field or method, because
// expressions can reach it: it is in their environment under meterName.
type meter struct {
	budget   Budget
	used     int64
	deadline time.Time
	err      error // the first budget error; every later check returns it
	lastRe   string
	lastReOK any // *regexp.Regexp of lastRe, a one-entry cache for "matches"
}

func (b Budget) newMeter() *meter {
	b = b.withDefaults()
	return &meter{budget: b, deadline: time.Now().Add(b.Time)}
}

// exceeded records and returns a budget error.
func (m *meter) exceeded(format string, args ...any) error {
	if m.err == nil {
		m.err = fmt.Errorf("%w: %s", ErrBudget, fmt.Sprintf(format, args...))
	}
	return m.err
}

// tick checks the deadline.
func (m *meter) tick() error {
	if m == nil {
		return errNoMeter
	}
	if m.err != nil {
		return m.err
	}
	if time.Now().After(m.deadline) {
		return m.exceeded("it ran longer than %v (limits.expressionTimeout)", m.budget.Time)
	}
	return nil
}

// charge accounts n bytes that what is about to build, before it builds
// them, and checks the deadline.
func (m *meter) charge(what string, n int64) error {
	return m.chargeBoxed(what, n, 0)
}

// chargeValue charges a string, list or map of n bytes that a function
// returns, with its boxed header.
func (m *meter) chargeValue(what string, n int64) error {
	return m.chargeBoxed(what, n, boxed)
}

func (m *meter) chargeBoxed(what string, n, header int64) error {
	if err := m.check(what, n, header); err != nil {
		return err
	}
	m.used = satAdd(m.used, satAdd(n, header))
	return nil
}

// fits checks that what may build n bytes that it drops again at once (a
// compiled regular expression, a sorted copy) without charging them.
func (m *meter) fits(what string, n int64) error {
	return m.check(what, n, 0)
}

// check checks that n bytes and a header fit what the budget has left; the
// error names n.
func (m *meter) check(what string, n, header int64) error {
	if err := m.tick(); err != nil {
		return err
	}
	if n < 0 || satAdd(n, header) > m.budget.Bytes-m.used {
		if n < 0 {
			n = math.MaxInt64
		}
		if m.used == 0 {
			return m.exceeded("%s builds %d bytes, more than %d (limits.maxExpressionBytes)", what, n, m.budget.Bytes)
		}
		return m.exceeded("%s builds %d bytes after %d already built, more than %d in all (limits.maxExpressionBytes)",
			what, n, m.used, m.budget.Bytes)
	}
	return nil
}

// room is what the budget has left: the limit of the size walks of
// arguments, so that a walk costs at most the budget, even over a list that
// holds the same list many times.
func (m *meter) room() int64 {
	return max(m.budget.Bytes-m.used, 0) + 1
}

// elements is the element budget of expr-lang's VM.
func (m *meter) elements() uint {
	return uint(max(m.budget.Bytes/8, 1))
}

// cause turns an error of expr-lang into the budget error when the budget
// was the cause.
func (m *meter) cause(err error) error {
	if m.err != nil {
		return m.err
	}
	if strings.Contains(err.Error(), "memory budget exceeded") {
		return m.exceeded("it builds lists, maps or ranges of more than %d elements (limits.maxExpressionBytes / 8)",
			m.elements())
	}
	return err
}

// checkResult checks the size and depth of an evaluation's value.
func (m *meter) checkResult(v any) error {
	n, err := sizeOf(v, memorySize, m.budget.Bytes)
	if err != nil {
		return m.exceeded("its value %v", err)
	}
	if n > m.budget.Bytes {
		return m.exceeded("its value is more than %d bytes (limits.maxExpressionBytes)", m.budget.Bytes)
	}
	return m.tick()
}

// errNoMeter is returned by a guarded function called without its meter,
// which only a hand-made call such as "let s = sprig; s.repeat(...)" does.
var errNoMeter = fmt.Errorf("%w: the function must be called by its name (sprig.name(...))", ErrBudget)

// satMul and satAdd are a*b and a+b for sizes, saturated at MaxInt64.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
