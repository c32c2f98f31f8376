package expr

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// budgetCase is one expression evaluated with Eval within a budget.
type budgetCase struct {
	name string
	expr string
	// over is a part of the budget error's text, or "" when the evaluation
	// must stay within its budget.
	over string
}

// hostile expressions: each must fail with ErrBudget, quickly and without
// building more than a few times the budget.
var hostile = []budgetCase{
	{"nested sprig.repeat (issue 15)", "len(sprig.repeat(100000, sprig.repeat(100000, 'x')))", "sprig.repeat builds 10000000000 bytes"},
	{"sprig.repeat 2e9", "sprig.repeat(int(2e9), 'x')", "sprig.repeat builds 2000000000 bytes, more than 1048576 (limits.maxExpressionBytes)"},
	{"builtin repeat", "repeat('x', 2000000000)", "repeat builds 2000000000 bytes"},
	{"huge range", "len(1..1000000000)", "more than 131072 elements"},
	{"map over a huge range", "len(map(1..int(1e9), #))", "elements"},
	{"concatenation doubling in reduce", "len(reduce(1..100, #acc + #acc, 'x'))", "'+' builds"},
	{"repeat in a loop", "len(map(1..1000, sprig.repeat(2000, 'x')))", "sprig.repeat builds 2000 bytes after"},
	{"nested loops run too long", "let r = 1..1000; sum(r, sum(r, sum(r, #)))", "it ran longer than"},
	{"all loops run too long", "let r = 1..1000; all(r, all(r, all(r, true)))", "it ran longer than"},
	{"sprig.until", "len(sprig.until(1000000000))", "sprig.until builds"},
	{"sprig.untilStep", "len(sprig.untilStep(0, 1000000000, 1))", "sprig.untilStep builds"},
	{"sprig.seq", "len(sprig.seq(1000000000))", "sprig.seq builds"},
	{"sprig.randAlpha", "len(sprig.randAlpha(1000000000))", "sprig.randAlpha builds"},
	{"sprig.genPrivateKey rsa", "sprig.genPrivateKey('rsa')", "may take longer than limits.expressionTimeout"},
	{"sprig.genCA", "sprig.genCA('x', 1)", "may take longer than"},
	{"sprig.indent", "len(sprig.indent(1000000, sprig.repeat(1000, '\\n')))", "sprig.indent builds"},
	{"sprig.replace growth", "len(sprig.replace('x', sprig.repeat(1000, 'y'), sprig.repeat(10000, 'x')))", "sprig.replace builds"},
	{"sprig.join of a big list", "len(sprig.join(sprig.repeat(10000, 'y'), 1..1000))", "sprig.join builds"},
	{"sprig.toPrettyJson deep", "len(sprig.toPrettyJson(reduce(1..900, [#acc], [])))", "sprig.toPrettyJson builds"},
	{"sprig.splitList per byte", "len(sprig.splitList('', sprig.repeat(500000, 'x')))", "sprig.splitList builds"},
	{"sprig.regexFindAll per byte", "len(sprig.regexFindAll('', sprig.repeat(500000, 'x'), -1))", "sprig.regexFindAll builds more than"},
	{"sprig.wrapWith", "len(sprig.wrapWith(1, sprig.repeat(2000, 'x'), sprig.repeat(2000, 'y')))", "sprig.wrapWith builds"},
	{"sprig.b64enc doubling", "len(reduce(1..60, sprig.b64enc(#acc), 'xxxxxxxx'))", "sprig.b64enc builds"},
	{"toBase64 doubling", "len(reduce(1..60, toBase64(#acc), 'xxxxxxxx'))", "toBase64 builds"},
	{"join builtin", "len(join(map(1..1000, 'a'), sprig.repeat(2000, 's')))", "join builds"},
	{"upper in a loop", "len(map(1..100000, upper('abcdefghijklmnop')))", "upper builds"},
	{"string of a big value", "len(map(1..1000, string(1..1000)))", "string builds"},
	{"toJSON deep", "len(toJSON(reduce(1..1500, [#acc], [])))", "nests lists and maps more than 1000 levels deep"},
	{"deep value", "reduce(1..1500, [#acc], [])", "its value nests"},
	{"fromJSON", "len(fromJSON('[' + sprig.repeat(100000, '0,') + '0]'))", "fromJSON builds"},
	{"sprig.fromJson", "len(sprig.fromJson('[' + sprig.repeat(100000, '0,') + '0]'))", "sprig.fromJson builds"},
	{"jsonpath", "jsonpath('[' + sprig.repeat(100000, '0,') + '0]', '$[0]')", "jsonpath builds"},
	{"map literals", "len(map(1..60000, {{'a': #}}))", "a map literal builds"},
	{"groupBy", "len(map(1..100, groupBy(1..10000, #)))", "groupBy builds"},
	{"regexp repetition", "'a' matches '[a-z]{1000}[a-z]{1000}[a-z]{1000}[a-z]{1000}[a-z]{1000}[a-z]{1000}[a-z]{1000}'", "the regular expression"},
	{"dynamic regexp repetition", "'a' matches sprig.repeat(10, '[a-z]{1000}')", "matches compiling its regular expression"},
	{"sprig regexp repetition", "sprig.regexMatch(sprig.repeat(10, '[a-z]{1000}'), 'a')", "sprig.regexMatch compiling"},
	{"split", "len(split(sprig.repeat(500000, 'x'), ''))", "split builds"},
	{"replace builtin", "len(replace(sprig.repeat(10000, 'x'), 'x', sprig.repeat(1000, 'y')))", "replace builds"},
	{"result too big", "1..100000", "more than 1048576 bytes"},
	{"shared lists: ==", "let d = reduce(1..50, [#acc, #acc], []); d == reduce(1..50, [#acc, #acc], [])", "'==' compares values"},
	{"shared lists: in", "let d = reduce(1..50, [#acc, #acc], []); d in [d]", "'in' compares values"},
	{"shared lists: toPrettyJson", "sprig.toPrettyJson(reduce(1..50, [#acc, #acc], []))", "sprig.toPrettyJson builds"},
	{"shared lists: flatten", "len(flatten(reduce(1..50, [#acc, #acc], [])))", "flatten builds"},
	{"shared lists: result", "reduce(1..50, [#acc, #acc], [])", "its value is more than"},
}

// legit expressions stay within the default budget.
var legit = []budgetCase{
	{name: "arithmetic", expr: "1 + 2 * 3 == 7"},
	{name: "strings", expr: "'a' + 'b' + sprig.upper('c') == 'abC'"},
	{name: "repeat", expr: "len(sprig.repeat(1000, 'ab')) == 2000"},
	{name: "builtin repeat", expr: "repeat('ab', 3) == 'ababab'"},
	{name: "loops", expr: "sum(map(filter(1..1000, # % 2 == 0), # * 2)) == 501000"},
	{name: "reduce", expr: "reduce(1..100, #acc + #, 0) == 5050"},
	{name: "range of 100000", expr: "len(1..100000) == 100000"},
	{name: "join", expr: "join(['a', 'b'], '-') == 'a-b' && sprig.join('-', ['a', 'b']) == 'a-b'"},
	{name: "json", expr: "toJson({'a': [1, 2]}) == '{\"a\":[1,2]}' && fromJSON('[1]')[0] == 1"},
	{name: "jsonpath", expr: "jsonpath('{\"a\": {\"b\": 3}}', '$.a.b') == 3"},
	{name: "sprig lists", expr: "len(sprig.list(1, 2, 3)) == 3 && sprig.first(sprig.splitList(',', 'a,b')) == 'a'"},
	{name: "sprig until", expr: "len(sprig.until(1000)) == 1000"},
	{name: "regexps", expr: "'abc' matches '^a.c$' && sprig.regexMatch('^[a-z]+$', 'abc') && len(sprig.regexFindAll('[0-9]', '1a2b3', -1)) == 3"},
	{name: "regexp in a loop", expr: "len(filter(map(1..1000, string(#)), # matches '^1')) == 112"},
	{name: "groupBy", expr: "len(groupBy(1..1000, # % 10)) == 10"},
	{name: "map literal", expr: "{'a': 1}.a == 1"},
	{name: "time", expr: "now() + duration('1h') > now()"},
	{name: "b64", expr: "sprig.b64dec(sprig.b64enc('x')) == 'x' && fromBase64(toBase64('y')) == 'y'"},
	{name: "genPrivateKey ecdsa", expr: "sprig.hasPrefix('-----BEGIN', sprig.genPrivateKey('ecdsa'))"},
	{name: "pipe", expr: "'a' | upper() == 'A'"},
	{name: "regexp repetition", expr: "'a' matches '^[a-z]{1000}|a$' && sprig.regexMatch('\\\\pL{1000}|a', 'a')"},
	{name: "nested repeat under budget", expr: "len(sprig.repeat(100, sprig.repeat(100, 'x'))) == 10000"},
	{name: "params bigger than half the budget", expr: "len(sprig.trim(big)) + len(sprig.default('x', big)) == 1200000"},
}

func TestBudgetHostile(t *testing.T) {
	env := map[string]any{"big": strings.Repeat("b", 600000)}
	for _, c := range hostile {
		t.Run(c.name, func(t *testing.T) {
			var v any
			var err error
			elapsed, grown := measure(func() { v, err = Eval(c.expr, env) })
			if !errors.Is(err, ErrBudget) || !errors.Is(err, ErrExpression) {
				t.Fatalf("Eval(%s) = %.50v, %v; want ErrBudget", c.expr, v, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "expression exceeded its budget: ") || !strings.Contains(msg, c.over) {
				t.Errorf("error %q\nwant it to start with the budget and contain %q", msg, c.over)
			}
			if elapsed > DefaultBudget.Time+time.Second {
				t.Errorf("it took %v", elapsed)
			}
			if grown > heapSlack {
				t.Errorf("the heap grew by %d bytes", grown)
			}
		})
	}
}

func TestBudgetLegit(t *testing.T) {
	env := map[string]any{"big": strings.Repeat("b", 600000)}
	for _, c := range legit {
		t.Run(c.name, func(t *testing.T) {
			v, err := Eval(c.expr, env)
			if err != nil || v != true {
				t.Fatalf("Eval(%s) = %v, %v; want true", c.expr, v, err)
			}
		})
	}
}

// TestBudgetFields checks that each field of a Budget is the bound.
func TestBudgetFields(t *testing.T) {
	small := Budget{Time: 50 * time.Millisecond, Bytes: 1000}
	for _, c := range []struct {
		expr   string
		budget Budget
		over   string // "" = within
	}{
		{"len(sprig.repeat(900, 'x'))", small, ""},
		{"len(sprig.repeat(1001, 'x'))", small, "more than 1000 (limits.maxExpressionBytes)"},
		{"len(sprig.repeat(1001, 'x'))", Budget{}, ""},
		{"let r = 1..100; all(r, all(r, all(r, true)))", small, "it ran longer than 50ms (limits.expressionTimeout)"},
		{"len(1..100)", small, ""},
		{"len(1..200)", small, "more than 125 elements"},
		{"1 + 1 + 1 + 1", Budget{Nodes: 3}, "exceeds maximum allowed nodes"},
	} {
		_, err := c.budget.Eval(c.expr, nil)
		switch {
		case c.over == "" && err != nil:
			t.Errorf("%+v.Eval(%s): %v", c.budget, c.expr, err)
		case c.over != "" && (err == nil || !strings.Contains(err.Error(), c.over)):
			t.Errorf("%+v.Eval(%s): %v, want an error with %q", c.budget, c.expr, err, c.over)
		}
	}
}

// TestBudgetReplace checks that the budget of a substitution holds for
// the whole pass and in every mode.
func TestBudgetReplace(t *testing.T) {
	scope := Scope{"inputs.parameters.n": "100000"}
	bomb := "{{=len(sprig.repeat(100000, sprig.repeat(100000, 'x')))}}"
	for _, mode := range []Mode{Lenient, Strict, StrictRefs} {
		if _, err := Replace("a "+bomb, scope, mode); !errors.Is(err, ErrBudget) {
			t.Errorf("Replace(%s, %v) = %v, want ErrBudget", bomb, mode, err)
		}
		if _, err := ReplaceJSON(`{"a": "`+bomb+`"}`, scope, mode); !errors.Is(err, ErrBudget) {
			t.Errorf("ReplaceJSON(%s, %v) = %v, want ErrBudget", bomb, mode, err)
		}
	}
	three := "{{=sprig.repeat(400, 'x')}}{{=sprig.repeat(400, 'x')}}{{=sprig.repeat(400, 'x')}}"
	if _, err := (Budget{Bytes: 1000}).Replace(three, scope, Lenient); !errors.Is(err, ErrBudget) {
		t.Errorf("three tags of 400 bytes within 1000: %v, want ErrBudget", err)
	}
	if out, err := (Budget{Bytes: 1000}).Replace(three[:len(three)/3], scope, Lenient); err != nil || len(out) != 400 {
		t.Errorf("one tag of 400 bytes within 1000: %d bytes, %v", len(out), err)
	}
	if out, err := Replace("{{=asInt(inputs.parameters.n) + 1}}", scope, Strict); err != nil || out != "100001" {
		t.Errorf("legit tag: %q, %v", out, err)
	}
}

func TestBudgetWhen(t *testing.T) {
	for _, c := range []struct {
		when string
		over string
	}{
		{strings.Repeat("(", 5000) + "a == a" + strings.Repeat(")", 5000), "nests parentheses 5000 deep"},
		{"a =~ '" + strings.Repeat("[a-z]{1000}", 10) + "'", "compiling its regular expression"},
		{strings.Repeat("a", 2<<20) + " == a", "more than 1048576"},
	} {
		_, err := EvalWhen(c.when)
		if !errors.Is(err, ErrBudget) || !errors.Is(err, ErrInvalidWhen) || !strings.Contains(err.Error(), c.over) {
			t.Errorf("EvalWhen(%.40s) = %v, want ErrBudget with %q", c.when, err, c.over)
		}
	}
	if ok, err := EvalWhen("((a == a)) && hello =~ 'h.*o'"); !ok || err != nil {
		t.Errorf("legit when: %v, %v", ok, err)
	}
}

// TestBudgetHandMadeCall checks that a guarded function reached without its
// meter refuses to run.
func TestBudgetHandMadeCall(t *testing.T) {
	for _, e := range []string{
		"let s = sprig; s.repeat(2, 'x')",
		"let s = sprig; s.repeat(nil, 2, 'x')",
		"sprig.repeat(2)",
	} {
		if _, err := Eval(e, nil); err == nil {
			t.Errorf("Eval(%s) succeeded", e)
		}
	}
	if err := Check("sprig.repeat(2)"); err == nil || !strings.Contains(err.Error(), "sprig.repeat takes 2 arguments") {
		t.Errorf("Check(sprig.repeat(2)) = %v, want the number of arguments", err)
	}
}

// heapSlack is how much the heap may grow during one evaluation within
// DefaultBudget: what the budget lets it build (at most Bytes, plus Bytes/8
// elements of 16 bytes counted by the VM), the garbage its loops make
// before the collector runs (the heap goal is at least 4 MiB), and room for
// the sampling. A bomb grows it by gigabytes.
const heapSlack = 16 << 20

// measure runs f and returns how long it took and how much the live heap
// grew at most while it ran, sampled every 100µs from a cold heap.
func measure(f func()) (time.Duration, int64) {
	runtime.GC()
	base := heapBytes()
	var peak atomic.Int64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if h := heapBytes(); h > peak.Load() {
					peak.Store(h)
				}
			}
		}
	}()
	start := time.Now()
	f()
	elapsed := time.Since(start)
	close(done)
	<-stopped
	if h := heapBytes(); h > peak.Load() {
		peak.Store(h)
	}
	return elapsed, max(peak.Load()-base, 0)
}

// heapBytes is the memory of the heap's objects, live or not yet swept.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
