package spec

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits that keep a hostile document from exhausting memory or the stack.
const (
	maxNodes        = 2_000_000 // scalar, list and map values visited, aliases counted each time
	maxAliasedNodes = 200_000   // values reached through aliases: stops "billion laughs" early
	maxDepth        = 2_000
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// converter turns a YAML node tree into JSON-compatible Go values
// (map[string]any, []any, string, float64/int64, bool, nil). Guided by the
// Go type the value will be decoded into, it reports unknown fields, duplicate
// keys and scalars of the wrong kind, each with its path and line.
type converter struct {
	strict     bool
	nodes      int
	aliased    int // values visited under an alias
	aliasDepth int
	fields     map[reflect.Type]map[string]reflect.Type
	issues     []fieldIssue
	path       fieldPath // of the value being converted
}

type fieldIssue struct {
	path    string
	line    int
	msg     string
	warning bool
}

func newConverter(strict bool) *converter {
	return &converter{strict: strict, fields: map[reflect.Type]map[string]reflect.Type{}}
}

func (c *converter) report(n *yaml.Node, format string, args ...any) {
	c.issues = append(c.issues, fieldIssue{path: c.path.String(), line: n.Line, msg: fmt.Sprintf(format, args...)})
}

// convert converts n, expected to decode into a value of type t. A nil t means
// the shape is free (an interface, or a type that parses JSON itself).
// Issues are reported at c.path, the path of n.
func (c *converter) convert(n *yaml.Node, t reflect.Type, depth int) (any, error) {
	c.nodes++
	if c.nodes > maxNodes {
		return nil, fmt.Errorf("line %d: document too large: more than %d values (check for alias expansion)", n.Line, maxNodes)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: document nested deeper than %d levels", n.Line, maxDepth)
	}
	if c.aliasDepth > 0 {
		c.aliased++
		if c.aliased > maxAliasedNodes {
			return nil, fmt.Errorf("line %d: aliases expand to more than %d values", n.Line, maxAliasedNodes)
		}
	}
	t = shape(t)
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.convert(n.Content[0], t, depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: unknown alias", n.Line)
		}
		c.aliasDepth++
		defer func() { c.aliasDepth-- }()
		return c.convert(n.Alias, t, depth+1)
	case yaml.MappingNode:
		return c.mapping(n, t, depth)
	case yaml.SequenceNode:
		return c.sequence(n, t, depth)
	case yaml.ScalarNode:
		return c.scalar(n, t)
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

func (c *converter) mapping(n *yaml.Node, t reflect.Type, depth int) (any, error) {
	var fields map[string]reflect.Type
	var elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fields = c.structFields(t)
	case t.Kind() == reflect.Map:
		elem = t.Elem()
	default:
		c.report(n, "expected %s, got a map", describe(t))
		t = nil
	}
	var buf [8]pair
	pairs, err := mergedPairs(n, depth, buf[:0])
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(pairs))
	var seenBuf [8]keyLine
	seen := keyLines{list: seenBuf[:0]}
	for _, p := range pairs {
		key, err := c.key(p.key)
		if err != nil {
			return nil, err
		}
		line, dup := seen.get(key)
		if dup && p.merged {
			continue // keys written in the mapping win over merged ones
		}
		c.path.push(key)
		if dup {
			// Argo's own loader keeps the last value, so this only warns.
			c.issues = append(c.issues, fieldIssue{path: c.path.String(), line: p.key.Line, warning: true,
				msg: fmt.Sprintf("duplicate key %q (first at line %d): the last value is used", key, line)})
		}
		seen.set(key, p.key.Line)
		var ft reflect.Type
		switch {
		case fields != nil:
			f, ok := fields[key]
			if !ok && c.strict {
				c.report(p.key, "unknown field %q", key)
			}
			ft = f
		case elem != nil:
			ft = elem
		}
		v, err := c.convert(p.value, ft, depth+1)
		c.path.pop()
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

// keyLines remembers the line of each key seen in a mapping: in a list for
// the handful of keys most mappings have, in a map past that.
type keyLines struct {
	list []keyLine
	m    map[string]int
}

type keyLine struct {
	key  string
	line int
}

const keyLinesListMax = 16

func (s *keyLines) get(key string) (int, bool) {
	if s.m != nil {
		line, ok := s.m[key]
		return line, ok
	}
	for _, kl := range s.list {
		if kl.key == key {
			return kl.line, true
		}
	}
	return 0, false
}

func (s *keyLines) set(key string, line int) {
	if s.m != nil {
		s.m[key] = line
		return
	}
	for i := range s.list {
		if s.list[i].key == key {
			s.list[i].line = line
			return
		}
	}
	if len(s.list) < keyLinesListMax {
		s.list = append(s.list, keyLine{key, line})
		return
	}
	s.m = make(map[string]int, 2*keyLinesListMax)
	for _, kl := range s.list {
		s.m[kl.key] = kl.line
	}
	s.m[key] = line
}

type pair struct {
	key, value *yaml.Node
	merged     bool
}

// mergedPairs lists the key/value pairs of a mapping, expanding YAML merge
// keys (<<) so that explicit keys come first and merged ones after. It
// appends them to buf, so that a caller can keep the list on its stack.
func mergedPairs(n *yaml.Node, depth int, buf []pair) ([]pair, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: merge keys nested deeper than %d levels", n.Line, maxDepth)
	}
	own := buf
	var merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			ps, err := mergeSource(v, depth)
			if err != nil {
				return nil, err
			}
			merged = append(merged, ps...)
			continue
		}
		own = append(own, pair{key: k, value: v})
	}
	return append(own, merged...), nil
}

func mergeSource(v *yaml.Node, depth int) ([]pair, error) {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	switch v.Kind {
	case yaml.MappingNode:
		ps, err := mergedPairs(v, depth+1, nil)
		for i := range ps {
			ps[i].merged = true
		}
		return ps, err
	case yaml.SequenceNode:
		var out []pair
		for _, item := range v.Content {
			ps, err := mergeSource(item, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, ps...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: a merge key (<<) needs a map or a list of maps", v.Line)
}

func (c *converter) key(k *yaml.Node) (string, error) {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: a map key must be a scalar", k.Line)
	}
	return k.Value, nil
}

func (c *converter) sequence(n *yaml.Node, t reflect.Type, depth int) (any, error) {
	var elem reflect.Type
	if t != nil {
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			elem = t.Elem()
		} else {
			c.report(n, "expected %s, got a list", describe(t))
		}
	}
	out := make([]any, 0, len(n.Content))
	for i, item := range n.Content {
		c.path.pushIndex(i)
		v, err := c.convert(item, elem, depth+1)
		c.path.pop()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (c *converter) scalar(n *yaml.Node, t reflect.Type) (any, error) {
	v, err := scalarValue(n)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return v, nil
	}
	return c.fitScalar(n, v, t), nil
}

// fitScalar checks a scalar against a plain Go kind. A number or bool where a
// string belongs is an error in strict mode and turned into text otherwise.
func (c *converter) fitScalar(n *yaml.Node, v any, t reflect.Type) any {
	if v == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			if c.strict {
				c.report(n, "expected a string, got %s %q (quote it)", kindOf(v), n.Value)
				return v
			}
			return n.Value
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			c.report(n, "expected true or false, got %q", n.Value)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch x := v.(type) {
		case int64, uint64:
		case float64:
			if x != math.Trunc(x) {
				c.report(n, "expected an integer, got %q", n.Value)
			}
		default:
			c.report(n, "expected an integer, got %q", n.Value)
		}
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int64, uint64, float64:
		default:
			c.report(n, "expected a number, got %q", n.Value)
		}
	case reflect.Struct, reflect.Map:
		c.report(n, "expected %s, got %s %q", describe(t), kindOf(v), n.Value)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() != reflect.Uint8 { // []byte is base64 text
			c.report(n, "expected %s, got %s %q", describe(t), kindOf(v), n.Value)
		}
	}
	return v
}

// scalarValue resolves a YAML scalar into a JSON-compatible value.
func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return n.Value, nil
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			return u, nil
		}
		var f float64
		if err := n.Decode(&f); err == nil && !math.IsInf(f, 0) {
			return f, nil
		}
		return nil, fmt.Errorf("line %d: integer %s is out of range", n.Line, n.Value)
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return n.Value, nil
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("line %d: %s cannot be represented in JSON", n.Line, n.Value)
		}
		return f, nil
	}
	return n.Value, nil
}

// structFields maps the JSON names of t's fields (with inlined and embedded
// structs flattened) to their types. Results are cached per converter.
func (c *converter) structFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := c.fields[t]; ok {
		return f
	}
	f := map[string]reflect.Type{}
	c.fields[t] = f
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		inline := strings.Contains(","+opts+",", ",inline,") || (sf.Anonymous && name == "")
		if inline {
			if st := shape(sf.Type); st != nil && st.Kind() == reflect.Struct {
				for k, v := range c.structFields(st) {
					f[k] = v
				}
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f[name] = sf.Type
	}
	return f
}

// shape removes pointers and returns nil for types whose JSON form is not
// described by their Go structure (interfaces and custom unmarshalers).
func shape(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface {
		return nil
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler) {
		return nil
	}
	return t
}

func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a map"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	default:
		return "a number"
	}
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "the string"
	case bool:
		return "the boolean"
	default:
		return "the number"
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	if isPlainKey(key) {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
