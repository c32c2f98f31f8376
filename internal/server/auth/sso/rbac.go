package sso

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/braidwf/braid/internal/server/auth"
)

// maxCachedRules bounds the compiled-rule cache; past it the cache starts
// again (rules change rarely, so this only guards against churn).
const maxCachedRules = 512

// ruleCache compiles each distinct rule text once. A rule that does not
// compile is logged once and then skipped.
type ruleCache struct {
	log   *slog.Logger
	mu    sync.Mutex
	progs map[string]*compiled
}

type compiled struct {
	prog *vm.Program // nil: the rule does not compile
	// warned is set once the rule's failure to give a bool was logged.
	warned bool
}

func newRuleCache(log *slog.Logger) *ruleCache {
	return &ruleCache{log: log, progs: map[string]*compiled{}}
}

// program is the compiled rule, or nil when it does not compile.
func (c *ruleCache) program(r auth.RBACRule) *compiled {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.progs[r.Rule]; ok {
		return p
	}
	if len(c.progs) >= maxCachedRules {
		c.progs = map[string]*compiled{}
	}
	prog, err := expr.Compile(r.Rule, expr.AllowUndefinedVariables())
	p := &compiled{prog: prog}
	if err != nil {
		p.prog = nil
		c.log.Warn("skipping an RBAC rule that does not compile", "token", r.Name, "rule", r.Rule, "err", err)
	}
	c.progs[r.Rule] = p
	return p
}

// eval runs r over claims; an error, or a result that is not a bool, is
// false (logged once per rule).
func (c *ruleCache) eval(r auth.RBACRule, claims map[string]any) bool {
	p := c.program(r)
	if p.prog == nil {
		return false
	}
	out, err := expr.Run(p.prog, claims)
	if err != nil {
		// A claim this user lacks is a normal reason for a rule to fail.
		c.log.Debug("an RBAC rule failed for this user; taken as false", "token", r.Name, "err", err)
		return false
	}
	b, ok := out.(bool)
	if !ok {
		c.mu.Lock()
		warn := !p.warned
		p.warned = true
		c.mu.Unlock()
		if warn {
			c.log.Warn("skipping an RBAC rule that does not give true or false", "token", r.Name, "rule", r.Rule,
				"result", fmt.Sprintf("%T", out))
		}
		return false
	}
	return b
}

// match picks, among the rules that are true for claims, the one with the
// highest Precedence (ties: the first by Name); ok is false when none is.
func (c *ruleCache) match(rules []auth.RBACRule, claims map[string]any) (best auth.RBACRule, ok bool) {
	for _, r := range rules {
		if r.Rule == "" || !c.eval(r, claims) {
			continue
		}
		if !ok || r.Precedence > best.Precedence || (r.Precedence == best.Precedence && r.Name < best.Name) {
			best, ok = r, true
		}
	}
	return best, ok
}
