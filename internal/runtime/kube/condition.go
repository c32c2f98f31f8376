package kube

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A condition is a resource template's successCondition or failureCondition:
// requirements in the syntax of a Kubernetes label selector, separated by
// commas and all of which must hold, whose keys are paths into the object
// (dot-separated; a number indexes a list; `\.` is a literal dot):
//
//	status.phase == Succeeded        status.phase = Succeeded
//	status.phase != Failed           status.phase in (Failed,Error)
//	status.phase notin (Failed)      status.succeeded > 0
//	status.failed < 3                status.startTime      (the field exists)
//	!status.completionTime           (the field does not exist)
//
// A field's value is compared as text: a string as it is, a number or a
// boolean as JSON writes it, null as "", a map or a list as its JSON. `>`
// and `<` compare numbers and are false when the field is not one. `!=` and
// notin hold for a field that does not exist, as in a label selector.
type condition []requirement

type condOp int

const (
	opEq condOp = iota
	opNe
	opIn
	opNotIn
	opGt
	opLt
	opExists
	opNotExists
)

type requirement struct {
	key    string   // as written
	path   []string // key split at unescaped dots
	op     condOp
	values []string
	num    float64 // the value of > and <
}

// parseCondition parses s; "" is no condition (nil).
func parseCondition(s string) (condition, error) {
	toks, err := condTokens(s)
	if err != nil {
		return nil, fmt.Errorf("condition %q: %w", s, err)
	}
	p := &condParser{toks: toks}
	var c condition
	for p.more() {
		r, err := p.requirement()
		if err != nil {
			return nil, fmt.Errorf("condition %q: %w", s, err)
		}
		c = append(c, r)
		if !p.more() {
			break
		}
		if t := p.next(); t != "," {
			return nil, fmt.Errorf("condition %q: want \",\" between requirements, got %q", s, t)
		}
		if !p.more() {
			return nil, fmt.Errorf("condition %q: a requirement must follow \",\"", s)
		}
	}
	return c, nil
}

// condTokens splits s into words and the symbols ( ) , = == != ! > <.
func condTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == ',' || c == '>' || c == '<':
			if i+1 < len(s) && s[i+1] == '=' && (c == '>' || c == '<') {
				return nil, fmt.Errorf("%q is not an operator (use > or <)", s[i:i+2])
			}
			toks = append(toks, s[i:i+1])
			i++
		case c == '=' || c == '!':
			if i+1 < len(s) && s[i+1] == '=' {
				toks = append(toks, s[i:i+2])
				i += 2
			} else {
				toks = append(toks, s[i:i+1])
				i++
			}
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r(),=!<>", rune(s[j])) {
				if s[j] == '\\' && j+1 < len(s) && s[j+1] == '.' {
					j++ // an escaped dot stays in the word
				}
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

type condParser struct {
	toks []string
	pos  int
}

func (p *condParser) more() bool { return p.pos < len(p.toks) }

func (p *condParser) peek() string {
	if p.more() {
		return p.toks[p.pos]
	}
	return ""
}

func (p *condParser) next() string {
	t := p.peek()
	if p.more() {
		p.pos++
	}
	return t
}

func isSymbol(t string) bool {
	switch t {
	case "(", ")", ",", "=", "==", "!=", "!", ">", "<":
		return true
	}
	return false
}

func (p *condParser) key() (string, []string, error) {
	t := p.next()
	if t == "" || isSymbol(t) {
		return "", nil, fmt.Errorf("want a field path, got %q", t)
	}
	path, err := splitPath(t)
	return t, path, err
}

func (p *condParser) requirement() (requirement, error) {
	if p.peek() == "!" {
		p.next()
		key, path, err := p.key()
		return requirement{key: key, path: path, op: opNotExists}, err
	}
	key, path, err := p.key()
	if err != nil {
		return requirement{}, err
	}
	r := requirement{key: key, path: path}
	switch op := p.peek(); op {
	case "", ",":
		r.op = opExists
		return r, nil
	case "=", "==", "!=":
		p.next()
		r.op = map[string]condOp{"=": opEq, "==": opEq, "!=": opNe}[op]
		v := p.peek()
		if v == "," || v == "" {
			r.values = []string{""}
			return r, nil
		}
		if isSymbol(v) {
			return r, fmt.Errorf("want a value after %s %s, got %q", key, op, v)
		}
		r.values = []string{p.next()}
		return r, nil
	case ">", "<":
		p.next()
		v := p.next()
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || isSymbol(v) {
			return r, fmt.Errorf("want a number after %s %s, got %q", key, op, v)
		}
		r.op, r.num, r.values = opGt, n, []string{v}
		if op == "<" {
			r.op = opLt
		}
		return r, nil
	case "in", "notin":
		p.next()
		r.op = opIn
		if op == "notin" {
			r.op = opNotIn
		}
		r.values, err = p.valueSet(key, op)
		return r, err
	default:
		return r, fmt.Errorf("want an operator (==, =, !=, >, <, in, notin) after %s, got %q", key, op)
	}
}

// valueSet parses "(a, b, ...)".
func (p *condParser) valueSet(key, op string) ([]string, error) {
	if t := p.next(); t != "(" {
		return nil, fmt.Errorf("want \"(\" after %s %s, got %q", key, op, t)
	}
	var vals []string
	for {
		v := p.next()
		switch {
		case v == "":
			return nil, fmt.Errorf("the values of %s %s miss \")\"", key, op)
		case v == ")" && len(vals) == 0:
			return nil, fmt.Errorf("%s %s () lists no value", key, op)
		case isSymbol(v):
			return nil, fmt.Errorf("want a value in %s %s (...), got %q", key, op, v)
		}
		vals = append(vals, v)
		switch t := p.next(); t {
		case ")":
			return vals, nil
		case ",":
		default:
			return nil, fmt.Errorf("want \",\" or \")\" in %s %s (...), got %q", key, op, t)
		}
	}
}

// splitPath splits a key at dots not escaped by a backslash.
func splitPath(key string) ([]string, error) {
	var parts []string
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c == '\\' && i+1 < len(key):
			i++
			b.WriteByte(key[i])
		case c == '.':
			parts = append(parts, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	parts = append(parts, b.String())
	if slices.Contains(parts, "") {
		return nil, fmt.Errorf("field path %q has an empty part", key)
	}
	return parts, nil
}

// matches reports whether every requirement holds for obj; with one that
// does not, it says which.
func (c condition) matches(obj map[string]any) (bool, string) {
	for _, r := range c {
		if !r.matches(obj) {
			return false, r.String()
		}
	}
	return true, ""
}

func (r requirement) matches(obj map[string]any) bool {
	v, ok := lookupPath(obj, r.path)
	switch r.op {
	case opExists:
		return ok
	case opNotExists:
		return !ok
	case opEq, opIn:
		return ok && slices.Contains(r.values, valueText(v))
	case opNe, opNotIn:
		return !ok || !slices.Contains(r.values, valueText(v))
	case opGt, opLt:
		if !ok {
			return false
		}
		n, err := strconv.ParseFloat(valueText(v), 64)
		if err != nil {
			return false
		}
		if r.op == opGt {
			return n > r.num
		}
		return n < r.num
	}
	return false
}

// String is the requirement as a label selector writes it.
func (r requirement) String() string {
	switch r.op {
	case opExists:
		return r.key
	case opNotExists:
		return "!" + r.key
	case opEq:
		return r.key + " == " + r.values[0]
	case opNe:
		return r.key + " != " + r.values[0]
	case opGt:
		return r.key + " > " + r.values[0]
	case opLt:
		return r.key + " < " + r.values[0]
	case opIn:
		return r.key + " in (" + strings.Join(r.values, ",") + ")"
	default:
		return r.key + " notin (" + strings.Join(r.values, ",") + ")"
	}
}

// String is the condition as a label selector writes it.
func (c condition) String() string {
	parts := make([]string, len(c))
	for i, r := range c {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// lookupPath walks maps by key and lists by index.
func lookupPath(obj any, path []string) (any, bool) {
	cur := obj
	for _, part := range path {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[part]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// valueText is a field's value as compared.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}
