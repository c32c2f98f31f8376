package sqlite

import (
	"sort"
	"strings"
)

// projection is what a list selects of each row: SQL expressions for the
// body and the spec columns that decode reads, the arguments of body, and
// whether the spec table is joined.
type projection struct {
	body, spec string
	args       []any
	joinSpec   bool
}

// wholeRows selects whole rows: the body and the spec as stored.
var wholeRows = projection{body: "o.body", spec: "s.spec", joinSpec: true}

// projectFields is the projection of the dotted JSON paths of
// store.ListOptions.Fields. SQLite builds one JSON object per row that
// holds those paths only (json_object of the paths' values, read with ->
// from the body, or from the spec for paths under "spec"), and decode
// reads it as the body, with a nil spec. The spec table is joined only
// when a path is under "spec", and no other part of a row is decoded: a
// list that asks for metadata.name and status.phase pays for those two.
// A path that is absent from a row comes out null, which decodes as the
// zero value it would have had. No paths, or a path that cannot be named
// in a JSON path (an empty segment, a quote or a backslash), select whole
// rows.
func projectFields(paths []string) projection {
	if len(paths) == 0 {
		return wholeRows
	}
	root := pathTree{}
	for _, p := range paths {
		parts := strings.Split(p, ".")
		for _, part := range parts {
			if part == "" || strings.ContainsAny(part, "\"\\") {
				return wholeRows
			}
		}
		root.add(parts)
	}
	var p projection
	p.body = root.sql(nil, &p)
	p.spec = "NULL"
	return p
}

// pathTree is a set of paths: a key maps to its sub-paths, or to nil when
// the whole value under it is wanted.
type pathTree map[string]pathTree

func (t pathTree) add(parts []string) {
	sub, ok := t[parts[0]]
	switch {
	case ok && sub == nil: // already wanted whole
	case len(parts) == 1:
		t[parts[0]] = nil
	default:
		if !ok {
			sub = pathTree{}
			t[parts[0]] = sub
		}
		sub.add(parts[1:])
	}
}

// sql is the json_object expression of the tree under prefix; it appends
// its arguments to p in the order they appear in the text.
func (t pathTree) sql(prefix []string, p *projection) string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable statement text, for the statement cache
	var b strings.Builder
	b.WriteString("json_object(")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("?, ")
		p.args = append(p.args, k)
		path := append(append([]string(nil), prefix...), k)
		if sub := t[k]; sub != nil {
			b.WriteString(sub.sql(path, p))
			continue
		}
		b.WriteString(leafSQL(path, p))
	}
	b.WriteString(")")
	return b.String()
}

// leafSQL reads one whole value: from the spec column for paths under
// "spec" (which the body does not hold), else from the body.
func leafSQL(path []string, p *projection) string {
	if path[0] == "spec" {
		p.joinSpec = true
		if len(path) == 1 {
			return "json(CAST(s.spec AS TEXT))"
		}
		p.args = append(p.args, jsonPath(path[1:]))
		return "(CAST(s.spec AS TEXT) -> ?)"
	}
	p.args = append(p.args, jsonPath(path))
	return "(CAST(o.body AS TEXT) -> ?)"
}

// jsonPath is SQLite's JSON path of the keys, each quoted: $."a"."b".
func jsonPath(keys []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, k := range keys {
		b.WriteString(`."` + k + `"`)
	}
	return b.String()
}
