package rest

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
)

// Encode is Bind's inverse, for a client calling a route with no body: the
// path of pattern with each {variable} filled from in's field of that name
// (escaped, so a "/" in a name stays in its segment), and every other set
// field of in as query parameters named by dotted JSON paths
// ("listOptions.labelSelector"; url.Values.Encode sorts them). A field is
// set when it is a non-nil pointer or a non-zero value; a pointer to a
// struct whose fields are all unset sends nothing, so Bind leaves it nil. A
// set field that no query parameter can carry (a map, an interface, a slice
// of objects) is an error.
func Encode(in any, pattern string) (path string, query url.Values, err error) {
	root, err := structRoot(in)
	if err != nil {
		return "", nil, err
	}
	path, inPath, err := fillPath(root, pattern)
	if err != nil {
		return "", nil, err
	}
	query = url.Values{}
	if err := encodeStruct(root, "", inPath, query); err != nil {
		return "", nil, err
	}
	return path, query, nil
}

// Path fills pattern's variables from in, as Encode does, for a route whose
// other fields travel in the body.
func Path(in any, pattern string) (string, error) {
	root, err := structRoot(in)
	if err != nil {
		return "", err
	}
	path, _, err := fillPath(root, pattern)
	return path, err
}

// patternVar is one {variable} of a path template: its field path and,
// after "=", the segments it matches ("{name=**}").
type patternVar struct {
	name, template string
	start, end     int // the braces' offsets in the pattern
}

// patternVars returns pattern's variables in order.
func patternVars(pattern string) ([]patternVar, error) {
	var out []patternVar
	for i := 0; i < len(pattern); {
		open := strings.IndexByte(pattern[i:], '{')
		if open < 0 {
			break
		}
		open += i
		end := strings.IndexByte(pattern[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("gateway: pattern %q: unclosed {", pattern)
		}
		end += open
		name, tmpl, _ := strings.Cut(pattern[open+1:end], "=")
		out = append(out, patternVar{name: name, template: tmpl, start: open, end: end + 1})
		i = end + 1
	}
	return out, nil
}

// resolveVar is the leaf field a pattern variable names in struct type t.
func resolveVar(t reflect.Type, v patternVar) (fieldPath, error) {
	p, ok := lookup(t, v.name)
	if !ok {
		return fieldPath{}, fmt.Errorf("gateway: path variable {%s}: %s has no such field", v.name, t)
	}
	if !isLeaf(p.typ) || (p.typ.Kind() == reflect.Slice && !custom(p.typ) && !isBytes(p.typ)) {
		return fieldPath{}, fmt.Errorf("gateway: path variable {%s}: a %s is not one value", v.name, p.typ)
	}
	return p, nil
}

// fillPath substitutes pattern's variables, and returns the canonical names
// of the fields it used.
func fillPath(root reflect.Value, pattern string) (string, map[string]bool, error) {
	vars, err := patternVars(pattern)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	used := map[string]bool{}
	last := 0
	for _, v := range vars {
		p, err := resolveVar(root.Type(), v)
		if err != nil {
			return "", nil, err
		}
		used[p.name] = true
		s := "" // a nil pointer on the way, or a nil pointer field
		if f, ok := fieldAt(root, p, false); ok {
			if f, ok = deref(f, false); ok {
				vals, err := formatSet(f) // even a zero value: {code} of 0 is "0"
				if err != nil {
					return "", nil, fmt.Errorf("gateway: path variable {%s}: %w", v.name, err)
				}
				s = vals[0]
			}
		}
		b.WriteString(pattern[last:v.start])
		b.WriteString(escapeSegment(s, v.template))
		last = v.end
	}
	b.WriteString(pattern[last:])
	return b.String(), used, nil
}

// escapeSegment escapes a path variable's value: all of it for a
// single-segment variable ("/" becomes %2F), each "/"-separated part for
// one that spans segments ("{name=**}").
func escapeSegment(s, template string) string {
	if !strings.Contains(template, "/") && !strings.Contains(template, "**") {
		return url.PathEscape(s)
	}
	parts := strings.Split(s, "/")
	for i, part := range parts {
		parts[i] = url.PathEscape(part)
	}
	return strings.Join(parts, "/")
}

// encodeStruct adds v's set fields (v is a struct) to q under prefix,
// except those in skip (the path's).
func encodeStruct(v reflect.Value, prefix string, skip map[string]bool, q url.Values) error {
	for _, f := range structOf(v.Type()).fields {
		fv, ok := fieldAt(v, fieldPath{steps: [][]int{f.index}}, false)
		if !ok {
			continue // inside a nil embedded pointer
		}
		name := prefix + f.json
		if skip[name] {
			continue
		}
		if err := encodeField(fv, name, skip, q); err != nil {
			return err
		}
	}
	return nil
}

func encodeField(fv reflect.Value, name string, skip map[string]bool, q url.Values) error {
	t := fv.Type()
	if isLeaf(t) {
		vals, set, err := formatValue(fv)
		if err != nil {
			return fmt.Errorf("gateway: field %q: %w", name, err)
		}
		if set {
			q[name] = append(q[name], vals...)
		}
		return nil
	}
	st := t
	for st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() == reflect.Struct {
		sv, ok := deref(fv, false)
		if !ok {
			return nil // a nil pointer
		}
		return encodeStruct(sv, name+".", skip, q)
	}
	if fv.IsZero() || ((fv.Kind() == reflect.Map || fv.Kind() == reflect.Slice) && fv.Len() == 0) {
		return nil
	}
	return fmt.Errorf("gateway: field %q: a %s cannot be sent as query parameters", name, t)
}
