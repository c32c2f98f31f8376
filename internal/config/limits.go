package config

import (
	"fmt"
	"time"

	"github.com/braidwf/braid/internal/engine"
	"github.com/braidwf/braid/internal/expr"
)

// Limits bound what one workflow may make the server build, under the
// config key `limits`. A zero field takes its default (DefaultLimits); a
// negative one is refused. The defaults are above anything Argo can hold in
// one Workflow object, so a spec Argo runs is not stopped by them.
type Limits struct {
	// MaxNodes is how many nodes one workflow may have.
	MaxNodes int `json:"maxNodes,omitempty"`
	// MaxDepth is how deeply templates may call templates (Argo's maximum
	// recursion depth).
	MaxDepth int `json:"maxDepth,omitempty"`
	// MaxLoopItems is how many items one withItems, withParam or
	// withSequence may expand to.
	MaxLoopItems int `json:"maxLoopItems,omitempty"`
	// MaxParameterBytes bounds one parameter's value (inputs, outputs,
	// arguments, globals).
	MaxParameterBytes int `json:"maxParameterBytes,omitempty"`
	// MaxResultBytes bounds outputs.result: a step's stdout keeps its last
	// MaxResultBytes bytes, as Argo keeps the last 256 kB.
	MaxResultBytes int `json:"maxResultBytes,omitempty"`
	// MaxExpressionBytes bounds the size of what one expression evaluation
	// builds (strings, lists, maps).
	MaxExpressionBytes int `json:"maxExpressionBytes,omitempty"`
	// ExpressionTimeout bounds the time of one expression evaluation: a
	// duration such as 1s or 500ms.
	ExpressionTimeout string `json:"expressionTimeout,omitempty"`
	// MaxNodesPerPass is how many nodes one reconcile pass may create
	// before it yields (and is called again at once), so that stop and
	// terminate are seen within a pass even in a huge loop.
	MaxNodesPerPass int `json:"maxNodesPerPass,omitempty"`
	// QuarantineAfterCrashes: a workflow that was being reconciled in this
	// many consecutive server crashes ends Error on the next start instead
	// of being reconciled again.
	QuarantineAfterCrashes int `json:"quarantineAfterCrashes,omitempty"`
}

// DefaultLimits are the limits of the fields left at zero: the engine's
// and the expression evaluator's own defaults, so both say them once.
var DefaultLimits = Limits{
	MaxNodes:               engine.DefaultMaxNodes,
	MaxDepth:               engine.DefaultMaxDepth,
	MaxLoopItems:           engine.DefaultMaxLoopItems,
	MaxParameterBytes:      engine.DefaultMaxParameterBytes,
	MaxResultBytes:         engine.DefaultMaxResultBytes,
	MaxExpressionBytes:     int(expr.DefaultBudget.Bytes),
	ExpressionTimeout:      expr.DefaultBudget.Time.String(),
	MaxNodesPerPass:        engine.DefaultMaxNodesPerPass,
	QuarantineAfterCrashes: 3,
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits
	pick := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	l.MaxNodes = pick(l.MaxNodes, d.MaxNodes)
	l.MaxDepth = pick(l.MaxDepth, d.MaxDepth)
	l.MaxLoopItems = pick(l.MaxLoopItems, d.MaxLoopItems)
	l.MaxParameterBytes = pick(l.MaxParameterBytes, d.MaxParameterBytes)
	l.MaxResultBytes = pick(l.MaxResultBytes, d.MaxResultBytes)
	l.MaxExpressionBytes = pick(l.MaxExpressionBytes, d.MaxExpressionBytes)
	l.MaxNodesPerPass = pick(l.MaxNodesPerPass, d.MaxNodesPerPass)
	l.QuarantineAfterCrashes = pick(l.QuarantineAfterCrashes, d.QuarantineAfterCrashes)
	if l.ExpressionTimeout == "" {
		l.ExpressionTimeout = d.ExpressionTimeout
	}
	return l
}

// ExprTimeout is ExpressionTimeout (or its default) as a duration.
func (l Limits) ExprTimeout() time.Duration {
	d, err := time.ParseDuration(l.WithDefaults().ExpressionTimeout)
	if err != nil {
		d, _ = time.ParseDuration(DefaultLimits.ExpressionTimeout)
	}
	return d
}

// Check refuses negative limits and a timeout that does not parse.
func (l Limits) Check() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"maxNodes", l.MaxNodes}, {"maxDepth", l.MaxDepth}, {"maxLoopItems", l.MaxLoopItems},
		{"maxParameterBytes", l.MaxParameterBytes}, {"maxResultBytes", l.MaxResultBytes},
		{"maxExpressionBytes", l.MaxExpressionBytes}, {"maxNodesPerPass", l.MaxNodesPerPass},
		{"quarantineAfterCrashes", l.QuarantineAfterCrashes},
	} {
		if f.v < 0 {
			return fmt.Errorf("limits.%s %d: use a positive number, or 0 for the default", f.name, f.v)
		}
	}
	if l.ExpressionTimeout != "" {
		if d, err := time.ParseDuration(l.ExpressionTimeout); err != nil || d <= 0 {
			return fmt.Errorf("limits.expressionTimeout %q: use a positive duration such as 1s or 500ms", l.ExpressionTimeout)
		}
	}
	return nil
}
