package expr

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// Run each for a while with, for example:
//
//	go test -run '^$' -fuzz '^FuzzReplace$' -fuzztime 30s ./internal/expr/

func FuzzReplace(f *testing.F) {
	for _, seed := range []string{
		"", "plain", "{{x}}", "{{ x }}", "{{=1+1}}", "{{={'k':1}}}", "{{=[1,2]}}", "a {{b", "{{a {{b}}",
		"{{=asInt('x')}}", "{{=sprig.upper(x)}}", "{{=x ?? 'fb'}}", "{{=jsonpath(j, '$.a[?(@.n==\"x\")]')}}",
		"{{steps.a.outputs.result}}", "{{=steps['a-b'].outputs.result}}", `{{="}}"}}`, "{{='\\'}}'}}",
		"{{=\n map([1], {#})[0] }}", "{{{{x}}}}", "}}{{", "{{=let v = 1; v}}", "{{nil}}", "{{=toJson(o)}}",
	} {
		f.Add(seed, uint8(0))
	}
	scope := Scope{
		"x": "hel\"lo\n", "j": `{"a":[{"n":"x"}]}`, "nil": nil, "o": artifact{Name: "n"},
		"steps.a.outputs.result": "r", "steps.a-b.outputs.result": "h", "item": "{}", "item.k": "v",
	}
	f.Fuzz(func(t *testing.T, s string, m uint8) {
		checkTags(t, s, Tags(s))
		mode := Mode(m % 3)
		out, err := Replace(s, scope, mode)
		if !strings.Contains(s, "{{") && (err != nil || out != s) {
			t.Fatalf("Replace(%q) = %q, %v; text without tags must not change", s, out, err)
		}
		raw, _ := json.Marshal(s)
		if out, err := ReplaceJSON(string(raw), scope, mode); err == nil && !json.Valid([]byte(out)) {
			t.Fatalf("ReplaceJSON(%s) gave invalid JSON %q", raw, out)
		}
		_ = Check(s)
	})
}

// checkTags verifies the offsets of the tags Tags found.
func checkTags(t *testing.T, s string, tags []Tag) {
	last := 0
	for _, tag := range tags {
		if tag.Start < last || tag.End > len(s) || tag.End < tag.Start+4 {
			t.Fatalf("Tags(%q): bad offsets %+v", s, tag)
		}
		if s[tag.Start:tag.Start+2] != "{{" || s[tag.End-2:tag.End] != "}}" {
			t.Fatalf("Tags(%q): %+v is not a {{...}}", s, tag)
		}
		last = tag.End
	}
}

func FuzzWhen(f *testing.F) {
	for _, seed := range []string{
		"", "heads == heads", "1 == 1.0", "'3' < '10'", "tails =~ hea", "hello world == x", "a-b == a-b",
		"{{x}} == 1", "a in (a, b)", "a =~ ^a", "((a == b) || !(c != d)) && e >= f", "'a", "(", "1 + 1",
		"x ? y : z", "2006-01-02 == 2006-01-02", "'2006-01-02T15:04:05Z' > '2006-01-01'", "[1, 2]",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, w string) {
		_, err := EvalWhen(w)
		if err != nil && !errors.Is(err, ErrInvalidWhen) && !errors.Is(err, ErrWhenNotBool) {
			t.Fatalf("EvalWhen(%q): error %v wraps no sentinel", w, err)
		}
	})
}

func FuzzDepends(f *testing.F) {
	for _, seed := range []string{
		"", "A", "A && B", "A && (C.Succeeded || C.Failed)", "!A.Skipped || b-2.AnySucceeded", "(A",
		"A.Foo", "A B", "a_b", "1a", "((A)) && !!B.AllFailed", "A.", "A & B", "should-not-execute",
	} {
		f.Add(seed, []byte{0, 1, 2})
	}
	phases := []string{"Succeeded", "Failed", "Error", "Skipped", "Omitted", "Running", "Pending"}
	f.Fuzz(func(t *testing.T, s string, states []byte) {
		d, err := ParseDepends(s)
		if err != nil {
			if !errors.Is(err, ErrDepends) && !errors.Is(err, ErrTaskResult) {
				t.Fatalf("ParseDepends(%q): error %v wraps no sentinel", s, err)
			}
			return
		}
		again, err := ParseDepends(d.String())
		if err != nil || again.String() != d.String() || !slices.Equal(again.Tasks(), d.Tasks()) {
			t.Fatalf("ParseDepends(%q).String() = %q does not parse back the same: %v", s, d.String(), err)
		}
		state := func(task string) TaskState {
			if len(states) == 0 {
				return TaskState{}
			}
			b := states[len(task)%len(states)]
			return TaskState{Phase: phases[int(b)%len(phases)], Daemoned: b&8 != 0, AnySucceeded: b&16 != 0, AllFailed: b&32 != 0}
		}
		cont := func(task string) ContinueOn { return ContinueOn{Error: len(task)%2 == 0, Failed: len(task)%3 == 0} }
		plain, err1 := d.Eval(state)
		rewritten, err2 := d.Rewrite(nil).Eval(state)
		if err1 != nil || err2 != nil || plain != rewritten {
			t.Fatalf("%q: Eval %v, %v; rewritten without continueOn %v, %v", s, plain, err1, rewritten, err2)
		}
		if _, err := ParseDepends(d.Rewrite(cont).String()); err != nil {
			t.Fatalf("%q: the rewritten form %q does not parse: %v", s, d.Rewrite(cont).String(), err)
		}
	})
}

// FuzzEval evaluates expressions within a budget and checks the budget
// holds: no panic, no evaluation longer than its Time plus a margin for a
// loaded machine, no heap growth over heapSlack, and every error wraps
// ErrExpression. Run it for the acceptance of issue 15 with:
//
//	go test -run '^$' -fuzz '^FuzzEval$' -fuzztime 10m ./internal/expr/
func FuzzEval(f *testing.F) {
	for _, c := range hostile {
		f.Add(c.expr)
	}
	for _, c := range legit {
		f.Add(c.expr)
	}
	for _, seed := range []string{
		"sprig.repeat(100000, x)", "reduce(1..20, #acc + #acc, x)", "map(1..1000, sprig.list(#, x))",
		"toJSON(map(1..1000, {'k': #}))", "sprig.join(x, sprig.until(1000))", "x matches x + '*'",
		"sprig.regexReplaceAll('(.)', sprig.repeat(1000, x), '$1$1$1')", "groupBy(1..1000, # % 7)",
		"sortBy(map(1..1000, -#), #)", "flatten(map(1..100, [#, [#]]))", "concat(1..10, 1..10)",
		"fromJSON(toJSON({'a': [x]}))", "sprig.deepCopy(sprig.dict('a', sprig.list(x)))",
		"sprig.toPrettyJson(reduce(1..50, [#acc, #acc], []))", "string(1..1000)", "split(x, '')",
	} {
		f.Add(seed)
	}
	budget := Budget{Time: 100 * time.Millisecond, Bytes: DefaultBudget.Bytes}
	const margin = 900 * time.Millisecond
	env := map[string]any{"x": "ab", "n": 3, "l": []any{"a", 1.5, map[string]any{"k": "v"}}}
	f.Fuzz(func(t *testing.T, s string) {
		var err error
		elapsed, grown := measure(func() { _, err = budget.Eval(s, env) })
		if elapsed > budget.Time+margin {
			t.Errorf("Eval(%q) took %v, more than its budget %v and a margin of %v", s, elapsed, budget.Time, margin)
		}
		if grown > heapSlack {
			t.Errorf("Eval(%q) grew the heap by %d bytes, more than %d", s, grown, heapSlack)
		}
		if err != nil && !errors.Is(err, ErrExpression) {
			t.Errorf("Eval(%q): error %v wraps no sentinel", s, err)
		}
	})
}
