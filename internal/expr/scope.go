package expr

import "strings"

// Scope is a flat variable scope: keys such as "inputs.parameters.x",
// "steps.a.outputs.result", "item" or "item.k".
//
// Values are strings, except:
//   - nil means an absent optional (rule 6.6): the output of a skipped or
//     omitted producer that declares no default. A simple tag that resolves to
//     it is an error (ErrAbsentOptional); an expression sees nil, so "??"
//     works.
//   - other types (for example an artifact struct) may be present for
//     expressions. A simple tag never inserts them.
type Scope map[string]any

// Expand turns a flat scope into the nested maps an expression sees (rule 0.2,
// 6.8a): "a.b.c" becomes {"a": {"b": {"c": v}}}. A key that is the parent of
// another key is dropped, so with both "item" (JSON text) and "item.k",
// item is the map {"k": ...}. The maps that Expand builds are new; the leaf
// values are the scope's own (not deep-copied).
func Expand(scope Scope) map[string]any {
	parents := make(map[string]bool)
	for k := range scope {
		for i := 0; i < len(k); i++ {
			if k[i] == '.' {
				parents[k[:i]] = true
			}
		}
	}
	out := make(map[string]any, len(scope))
	for k, v := range scope {
		if !parents[k] {
			insertPath(out, strings.Split(k, "."), v)
		}
	}
	return out
}

// insertPath sets v at the nested path segs of m, creating maps on the way.
// Expand never calls it with a path under an existing leaf, because such a
// leaf is a parent and was dropped.
func insertPath(m map[string]any, segs []string, v any) {
	for _, seg := range segs[:len(segs)-1] {
		child, ok := m[seg].(map[string]any)
		if !ok {
			child = make(map[string]any)
			m[seg] = child
		}
		m = child
	}
	m[segs[len(segs)-1]] = v
}

// lookupPath reports whether the nested path segs exists in env. A value that
// is not a map[string]any (a string, nil, a struct) ends the walk and counts
// as present: what lies under it is for the expression to decide.
func lookupPath(env map[string]any, segs []string) bool {
	var cur any = env
	for _, seg := range segs {
		m, ok := cur.(map[string]any)
		if !ok {
			return true
		}
		if cur, ok = m[seg]; !ok {
			return false
		}
	}
	return true
}
