package spec

import (
	"fmt"
	"maps"
	"strings"

	"github.com/braidwf/braid/internal/expr"
)

// knownPrefixes are the variable roots that lint checks; any other tag
// ({{custom.x}}, {{retries}}, {{status}}) is left for run time, as Argo does.
var knownPrefixes = []string{"item", "steps.", "inputs.", "outputs.", "pod.", "workflow.", "tasks."}

// scope is the set of variables a piece of a spec may refer to.
type scope struct {
	keys map[string]bool
	// prefixes under which any key resolves (workflow.creationTimestamp., item. for withParam, ...).
	prefixes []string
	// hints explain why a key under a prefix does not resolve.
	hints map[string]string
	// view resolves steps.* or tasks.* keys, when the scope is inside a
	// steps or dag template.
	view *view
}

func newScope() *scope {
	return &scope{keys: map[string]bool{}, hints: map[string]string{}}
}

func (s *scope) clone() *scope {
	return &scope{keys: maps.Clone(s.keys), prefixes: append([]string(nil), s.prefixes...), hints: maps.Clone(s.hints), view: s.view}
}

func (s *scope) add(keys ...string) {
	for _, k := range keys {
		s.keys[k] = true
	}
}

func (s *scope) addPrefix(p string) { s.prefixes = append(s.prefixes, p) }

func (s *scope) has(key string) bool {
	if s.keys[key] {
		return true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	if s.view != nil {
		ok, _, _ := s.view.resolve(key)
		return ok
	}
	return false
}

func isKnownVariable(key string) bool {
	if key == "item" || strings.HasPrefix(key, "item.") {
		return true
	}
	for _, p := range knownPrefixes[1:] {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// check reports every tag in text that cannot resolve in s. Expression tags
// are compiled for syntax only, since their variables are known at run time.
func (s *scope) check(r *reporter, path, text string) {
	if !strings.Contains(text, "{{") {
		return
	}
	for _, t := range expr.Tags(text) {
		if t.Expr {
			if err := expr.Check(t.Body); err != nil {
				r.add(path, "%s", firstLine(err))
			}
			continue
		}
		key := t.Body
		if !isKnownVariable(key) || s.has(key) {
			continue
		}
		r.add(path, "failed to resolve {{%s}}%s", key, s.hint(key))
	}
}

// hint explains an unresolved key by the longest matching hint prefix.
func (s *scope) hint(key string) string {
	if s.view != nil {
		if _, handled, why := s.view.resolve(key); handled {
			if why == "" {
				return ""
			}
			return ": " + strings.TrimPrefix(why, ": ")
		}
	}
	best := ""
	for p := range s.hints {
		if (key == p || strings.HasPrefix(key, p+".")) && len(p) > len(best) {
			best = p
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(": %s", s.hints[best])
}

// checkValue walks v and checks the tags of every string in it.
func (s *scope) checkValue(r *reporter, v any, path string, skip func(string) bool) {
	walkStrings(v, path, skip, func(p, text string) { s.check(r, p, text) })
}

// firstLine keeps an error to one line (expr-lang adds a source excerpt).
func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
