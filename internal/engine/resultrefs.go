package engine

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// collectResultRefs returns the names of the steps (or tasks) whose
// outputs.result a Steps (or DAG) template mentions: steps.<n>.outputs.result
// or steps['<n>'].outputs.result (rule 11.3). Argo searches the template's
// JSON; this walks the fields that can hold such text instead, so that a
// template with thousands of steps is not marshalled on every launch.
func collectResultRefs(t *v1alpha1.Template) map[string]bool {
	prefix := "steps"
	if t.DAG != nil {
		prefix = "tasks"
	}
	refs := map[string]bool{}
	visit := func(s string) {
		if strings.Contains(s, ".outputs.result") {
			scanResultRefs(s, prefix, refs)
		}
	}
	for _, g := range t.Steps {
		for i := range g {
			s := &g[i]
			visitCall(visit, s.When, s.WithParam, s.Arguments, s.Hooks, s.Inline, s.WithItems)
			visitSequence(visit, s.WithSequence)
		}
	}
	if t.DAG != nil {
		for i := range t.DAG.Tasks {
			k := &t.DAG.Tasks[i]
			visitCall(visit, k.When, k.WithParam, k.Arguments, k.Hooks, k.Inline, k.WithItems)
			visitSequence(visit, k.WithSequence)
		}
	}
	for _, p := range t.Outputs.Parameters {
		visitParameter(visit, p)
	}
	for _, a := range t.Outputs.Artifacts {
		visit(a.From)
		visit(a.FromExpression)
	}
	return refs
}

func visitCall(visit func(string), when, withParam string, args v1alpha1.Arguments, hooks v1alpha1.LifecycleHooks,
	inline *v1alpha1.Template, items []v1alpha1.Item) {
	visit(when)
	visit(withParam)
	visitArguments(visit, args)
	for _, h := range hooks {
		visit(h.Expression)
		visitArguments(visit, h.Arguments)
	}
	if inline != nil {
		if data, err := json.Marshal(inline); err == nil {
			visit(string(data))
		}
	}
	for _, it := range items {
		visit(string(it.Value))
	}
}

func visitSequence(visit func(string), seq *v1alpha1.Sequence) {
	if seq == nil {
		return
	}
	for _, v := range []*intstr.IntOrString{seq.Start, seq.End, seq.Count} {
		if v != nil {
			visit(v.StrVal)
		}
	}
}

func visitArguments(visit func(string), args v1alpha1.Arguments) {
	for _, p := range args.Parameters {
		visitParameter(visit, p)
	}
	for _, a := range args.Artifacts {
		visit(a.From)
		visit(a.FromExpression)
	}
}

func visitParameter(visit func(string), p v1alpha1.Parameter) {
	if p.Value != nil {
		visit(string(*p.Value))
	}
	if p.Default != nil {
		visit(string(*p.Default))
	}
	if p.ValueFrom != nil {
		visit(p.ValueFrom.Parameter)
		visit(p.ValueFrom.Expression)
	}
}

// scanResultRefs adds the name before each ".outputs.result" in s that is
// written as <prefix>.<name> or <prefix>['<name>'].
func scanResultRefs(s, prefix string, refs map[string]bool) {
	const marker = ".outputs.result"
	for from := 0; ; {
		i := strings.Index(s[from:], marker)
		if i < 0 {
			return
		}
		end := from + i
		if name, ok := refBefore(s[:end], prefix); ok {
			refs[name] = true
		}
		from = end + len(marker)
	}
}

// refBefore reads the reference that ends text: <prefix>.<name> or
// <prefix>['<name>'] (single or double quotes).
func refBefore(text, prefix string) (string, bool) {
	if strings.HasSuffix(text, "']") || strings.HasSuffix(text, `"]`) {
		q := text[len(text)-2]
		body := text[:len(text)-2]
		open := strings.LastIndexByte(body, q)
		if open < 2 || body[open-1] != '[' {
			return "", false
		}
		name := body[open+1:]
		return name, strings.HasSuffix(body[:open-1], prefix) && name != ""
	}
	i := len(text)
	for i > 0 && isNameChar(text[i-1]) {
		i--
	}
	name := text[i:]
	if name == "" || i == 0 || text[i-1] != '.' {
		return "", false
	}
	return name, strings.HasSuffix(text[:i-1], prefix)
}

func isNameChar(c byte) bool {
	return c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
