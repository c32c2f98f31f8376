package spec

import (
	"fmt"
	"strings"

	"github.com/braidwf/braid/internal/expr"
)

// knownPrefixes are the variable roots that lint checks; any other tag
// ({{custom.x}}, {{retries}}, {{status}}) is left for run time, as Argo does.
var knownPrefixes = []string{"item", "steps.", "inputs.", "outputs.", "pod.", "workflow.", "tasks."}

// scope is the set of variables a piece of a spec may refer to. A scope
// made by clone sees its parent's variables and hints and adds its own, so
// that thousands of templates share the workflow's scope without a copy.
type scope struct {
	parent *scope // read, never written, through a child
	keys   map[string]bool
	// prefixes under which any key resolves (workflow.creationTimestamp., item. for withParam, ...).
	prefixes []string
	// hints explain why a key under a prefix does not resolve; a child's
	// hint for a prefix replaces its parent's.
	hints map[string]string
	// view resolves steps.* or tasks.* keys, when the scope is inside a
	// steps or dag template.
	view *view
}

func newScope() *scope {
	return &scope{keys: map[string]bool{}, hints: map[string]string{}}
}

// clone returns a scope that sees everything s does and can be added to
// without changing s.
func (s *scope) clone() *scope {
	return &scope{parent: s, view: s.view}
}

func (s *scope) add(keys ...string) {
	if s.keys == nil {
		s.keys = make(map[string]bool, len(keys))
	}
	for _, k := range keys {
		s.keys[k] = true
	}
}

func (s *scope) addPrefix(p string) { s.prefixes = append(s.prefixes, p) }

// setHint explains keys under prefix that do not resolve.
func (s *scope) setHint(prefix, hint string) {
	if s.hints == nil {
		s.hints = map[string]string{}
	}
	s.hints[prefix] = hint
}

func (s *scope) has(key string) bool {
	for l := s; l != nil; l = l.parent {
		if l.keys[key] {
			return true
		}
		for _, p := range l.prefixes {
			if strings.HasPrefix(key, p) {
				return true
			}
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
	best, text := "", ""
	for l := s; l != nil; l = l.parent {
		for p, h := range l.hints {
			if (key == p || strings.HasPrefix(key, p+".")) && len(p) > len(best) && s.hintLayer(p) == l {
				best, text = p, h
			}
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(": %s", text)
}

// hintLayer is the nearest scope, from s up, that has a hint for prefix.
func (s *scope) hintLayer(prefix string) *scope {
	for l := s; l != nil; l = l.parent {
		if _, ok := l.hints[prefix]; ok {
			return l
		}
	}
	return nil
}

// checkValue walks v and checks the tags of every string in it. skip, when
// not nil, prunes fields of v's own struct by JSON name.
func (s *scope) checkValue(r *reporter, v any, path string, skip func(field string) bool) {
	walkStrings(v, path, skip, func(p *fieldPath, text string) {
		if strings.Contains(text, "{{") {
			s.check(r, p.String(), text)
		}
	})
}

// firstLine keeps an error to one line (expr-lang adds a source excerpt).
func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
