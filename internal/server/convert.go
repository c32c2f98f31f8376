package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/runtime"
)

// withFields is obj with Argo's `fields` applied: only the JSON paths in
// fields kept, or with a leading "-", dropped. An empty fields is obj.
func withFields[T any](obj *T, fields string) (*T, error) {
	fields = strings.TrimSpace(fields)
	if fields == "" {
		return obj, nil
	}
	drop := strings.HasPrefix(fields, "-")
	return shaped(obj, parseFields(strings.TrimPrefix(fields, "-")), drop)
}

// restJSON encodes a REST response. An object (a Workflow, a list, ...)
// is written as before the typed messages, when objects travelled as
// Structs: keys sorted, protojson's escaping and numbers
// (appendItemJSON); a message is its encoding/json form, whose fields
// are in the proto's order, as protojson wrote them.
func restJSON(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(runtime.Object); !ok {
		return data, nil
	}
	return appendItemJSON(make([]byte, 0, len(data)), data, nil, false)
}

// fieldTree is a set of dotted JSON paths.
type fieldTree map[string]fieldTree

func parseFields(list string) fieldTree {
	t := fieldTree{}
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n := t
		parts := strings.Split(p, ".")
		for i, k := range parts {
			c, ok := n[k]
			if ok && c == nil { // a shorter path already keeps all of it
				break
			}
			if i == len(parts)-1 {
				n[k] = nil
				break
			}
			if !ok {
				c = fieldTree{}
				n[k] = c
			}
			n = c
		}
	}
	return t
}

func keepFields(v any, t fieldTree) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range t {
			val, ok := x[k]
			if !ok {
				continue
			}
			if sub == nil {
				out[k] = val
			} else {
				out[k] = keepFields(val, sub)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = keepFields(e, t)
		}
		return out
	default:
		return v
	}
}

func dropFields(v any, t fieldTree) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range t {
			if sub == nil {
				delete(x, k)
			} else if val, ok := x[k]; ok {
				dropFields(val, sub)
			}
		}
	case []any:
		for _, e := range x {
			dropFields(e, t)
		}
	}
}

// fieldsKeep says whether Argo's `fields` parameter keeps any part of the
// dotted JSON path: an empty list keeps everything.
func fieldsKeep(fields, path string) bool {
	fields = strings.TrimSpace(fields)
	if fields == "" {
		return true
	}
	drop := strings.HasPrefix(fields, "-")
	t := parseFields(strings.TrimPrefix(fields, "-"))
	for _, k := range strings.Split(path, ".") {
		sub, ok := t[k]
		switch {
		case !ok: // the list does not name it
			return drop
		case sub == nil: // the list names it whole
			return !drop
		}
		t = sub
	}
	// The list names parts of it: some of it is kept either way.
	return true
}

// appendItemJSON appends the JSON of one list item (src, the item's
// encoding/json form) as the gateway writes that item of the list's
// Struct: t applied as Argo's `fields` apply it (keep, or with drop, drop;
// nil: all), object keys sorted, no spaces, strings escaped as protojson
// escapes them (only quotes, backslashes and control characters) and
// numbers as float64. It does so in one pass over src, without building
// the Struct, whose garbage (some 30 KB an item) would otherwise grow the
// heap with the list.
func appendItemJSON(dst, src []byte, t fieldTree, drop bool) ([]byte, error) {
	out, rest, err := appendShaped(dst, skipSpace(src), t, drop)
	if err == nil && len(skipSpace(rest)) != 0 {
		err = errors.New("text after the value")
	}
	if err != nil {
		return dst, status.Errorf(codes.Internal, "encode a list item: %v", err)
	}
	return out, nil
}

// appendShaped appends the value at the start of src; it returns the rest
// of src.
func appendShaped(dst, src []byte, t fieldTree, drop bool) ([]byte, []byte, error) {
	if len(src) == 0 {
		return dst, src, errors.New("unexpected end of JSON")
	}
	switch c := src[0]; {
	case c == '{':
		return appendObject(dst, src, t, drop)
	case c == '[':
		dst = append(dst, '[')
		src = skipSpace(src[1:])
		for i := 0; len(src) > 0 && src[0] != ']'; i++ {
			if i > 0 {
				if src[0] != ',' {
					return dst, src, errors.New("want , in an array")
				}
				dst, src = append(dst, ','), skipSpace(src[1:])
			}
			var err error
			if dst, src, err = appendShaped(dst, src, t, drop); err != nil {
				return dst, src, err
			}
			src = skipSpace(src)
		}
		if len(src) == 0 {
			return dst, src, errors.New("unterminated array")
		}
		return append(dst, ']'), src[1:], nil
	case c == '"':
		str, rest, err := readString(src)
		if err != nil {
			return dst, src, err
		}
		dst, err = appendProtoString(dst, str)
		return dst, rest, err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(src) >= len(lit) && string(src[:len(lit)]) == lit {
				return append(dst, lit...), src[len(lit):], nil
			}
		}
		return dst, src, fmt.Errorf("bad literal at %q", truncate(src))
	default:
		end := 0
		for end < len(src) && strings.IndexByte("+-.0123456789eE", src[end]) >= 0 {
			end++
		}
		f, err := strconv.ParseFloat(string(src[:end]), 64)
		if err != nil {
			return dst, src, fmt.Errorf("bad number at %q", truncate(src))
		}
		return appendProtoFloat(dst, f), src[end:], nil
	}
}

// member is one key of an object (decoded) and its value's text.
type member struct {
	key, raw []byte
}

// appendObject writes the object at the start of src with its keys sorted
// and shaped by t (memberShape).
func appendObject(dst, src []byte, t fieldTree, drop bool) ([]byte, []byte, error) {
	var buf [24]member
	members, rest, err := objectMembers(buf[:0], src)
	if err != nil {
		return dst, src, err
	}
	dst = append(dst, '{')
	n := 0
	for i, m := range members {
		if i+1 < len(members) && bytes.Equal(members[i+1].key, m.key) {
			continue // a repeated key: the last one counts, as in a map
		}
		keep, sub, subDrop := memberShape(t, drop, m.key)
		if !keep {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		if dst, err = appendProtoString(dst, m.key); err != nil {
			return dst, src, err
		}
		dst = append(dst, ':')
		if dst, _, err = appendShaped(dst, m.raw, sub, subDrop); err != nil {
			return dst, src, err
		}
	}
	return append(dst, '}'), rest, nil
}

// objectMembers appends to members the keys of the object at the start of
// src, sorted (stably: of a repeated key, the last one counts); it returns
// the rest of src.
func objectMembers(members []member, src []byte) ([]member, []byte, error) {
	src = skipSpace(src[1:])
	first := len(members)
	for len(src) > 0 && src[0] != '}' {
		if len(members) > first {
			if src[0] != ',' {
				return members, src, errors.New("want , in an object")
			}
			src = skipSpace(src[1:])
		}
		key, rest, err := readString(src)
		if err != nil {
			return members, src, err
		}
		rest = skipSpace(rest)
		if len(rest) == 0 || rest[0] != ':' {
			return members, src, errors.New("want : in an object")
		}
		rest = skipSpace(rest[1:])
		end, err := valueEnd(rest)
		if err != nil {
			return members, src, err
		}
		members = append(members, member{key, rest[:end]})
		src = skipSpace(rest[end:])
	}
	if len(src) == 0 {
		return members, src, errors.New("unterminated object")
	}
	slices.SortStableFunc(members[first:], func(a, b member) int { return bytes.Compare(a.key, b.key) })
	return members, src[1:], nil
}

// memberShape says whether t (Argo's `fields`: paths to keep, or with
// drop, to drop; nil: all) keeps the member key of an object, and the
// tree to shape its value by: kept (with drop, dropped) whole where t
// names the key with nothing under it, shaped by the sub-tree where t
// names paths under it.
func memberShape(t fieldTree, drop bool, key []byte) (keep bool, sub fieldTree, subDrop bool) {
	if t == nil {
		return true, nil, false
	}
	sub, named := t[string(key)]
	switch {
	case !drop && !named, drop && named && sub == nil:
		return false, nil, false
	case drop && !named:
		return true, nil, false
	}
	return true, sub, drop && sub != nil
}

// valueEnd is the length of the JSON value at the start of src.
func valueEnd(src []byte) (int, error) {
	depth, i := 0, 0
	for i < len(src) {
		switch src[i] {
		case '"':
			j, err := stringEnd(src[i:])
			if err != nil {
				return 0, err
			}
			i += j
			if depth == 0 {
				return i, nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of the object or array around a scalar
				return i, nil
			}
			if depth--; depth == 0 {
				return i + 1, nil
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, nil
			}
		}
		i++
	}
	if depth != 0 {
		return 0, errors.New("unterminated value")
	}
	return i, nil
}

// stringEnd is the length of the JSON string at the start of src, quotes
// included.
func stringEnd(src []byte) (int, error) {
	for i := 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errors.New("unterminated string")
}

// readString decodes the JSON string at the start of src; without
// escapes, the result shares src.
func readString(src []byte) ([]byte, []byte, error) {
	if len(src) == 0 || src[0] != '"' {
		return nil, src, fmt.Errorf("want a string at %q", truncate(src))
	}
	end, err := stringEnd(src)
	if err != nil {
		return nil, src, err
	}
	if raw := src[1 : end-1]; bytes.IndexByte(raw, '\\') < 0 {
		return raw, src[end:], nil
	}
	var s string
	if err := json.Unmarshal(src[:end], &s); err != nil {
		return nil, src, err
	}
	return []byte(s), src[end:], nil
}

// appendProtoString writes s as protojson writes a string: only quotes,
// backslashes and control characters are escaped.
func appendProtoString(dst, s []byte) ([]byte, error) {
	if !utf8.Valid(s) {
		return dst, errors.New("invalid UTF-8 in a string")
	}
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < ' ':
			dst = append(dst, '\\')
			switch c {
			case '\b':
				dst = append(dst, 'b')
			case '\f':
				dst = append(dst, 'f')
			case '\n':
				dst = append(dst, 'n')
			case '\r':
				dst = append(dst, 'r')
			case '\t':
				dst = append(dst, 't')
			default:
				dst = append(dst, 'u')
				dst = append(dst, "0000"[1+(bits.Len32(uint32(c))-1)/4:]...)
				dst = strconv.AppendUint(dst, uint64(c), 16)
			}
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"'), nil
}

// appendProtoFloat writes a number as protojson writes a double (as
// encoding/json does: exponent form below 1e-6 and from 1e21).
func appendProtoFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-07 -> e-7
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

func truncate(b []byte) string {
	if len(b) > 20 {
		return string(b[:20]) + "..."
	}
	return string(b)
}
