package rest

import (
	"encoding"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// queryUnmarshaler and queryMarshaler are the query-parameter forms some
// Kubernetes types define (metav1.Time, metav1.MicroTime: RFC 3339).
type queryUnmarshaler interface {
	UnmarshalQueryParameter(string) error
}

type queryMarshaler interface {
	MarshalQueryParameter() (string, error)
}

var (
	queryUnmarshalerType = reflect.TypeFor[queryUnmarshaler]()
	queryMarshalerType   = reflect.TypeFor[queryMarshaler]()
	textUnmarshalerType  = reflect.TypeFor[encoding.TextUnmarshaler]()
	textMarshalerType    = reflect.TypeFor[encoding.TextMarshaler]()
)

// custom reports whether t (or *t) parses itself from text.
func custom(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(queryUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// isLeaf reports whether a field of type t is one query parameter: a
// string, bool or number kind, a type that parses itself from text, a
// pointer to one of those, or a slice of them (the key repeated).
func isLeaf(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		return isLeaf(t.Elem())
	}
	if custom(t) || scalarKind(t.Kind()) {
		return true
	}
	if t.Kind() != reflect.Slice {
		return false
	}
	e := t.Elem()
	if e.Kind() == reflect.Pointer {
		e = e.Elem()
	}
	return custom(e) || scalarKind(e.Kind())
}

func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// isBytes is []byte (not a named type that parses itself): base64, as
// protobuf bytes are in a query.
func isBytes(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !custom(t)
}

// parseValue parses a leaf of type t from a query parameter's values.
func parseValue(t reflect.Type, vals []string) (reflect.Value, error) {
	switch {
	case t.Kind() == reflect.Pointer:
		e, err := parseValue(t.Elem(), vals)
		if err != nil {
			return reflect.Value{}, err
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(e)
		return p, nil
	case t.Kind() == reflect.Slice && !custom(t) && !isBytes(t):
		s := reflect.MakeSlice(t, 0, len(vals))
		for _, v := range vals {
			e, err := parseValue(t.Elem(), []string{v})
			if err != nil {
				return reflect.Value{}, err
			}
			s = reflect.Append(s, e)
		}
		return s, nil
	}
	if len(vals) != 1 {
		return reflect.Value{}, fmt.Errorf("given %d times; it takes one value", len(vals))
	}
	return parseScalar(t, vals[0])
}

// parseScalar parses one value of a non-pointer, non-slice leaf type (or
// []byte, or a slice type that parses itself).
func parseScalar(t reflect.Type, s string) (reflect.Value, error) {
	p := reflect.New(t)
	v := p.Elem()
	if custom(t) {
		if err := unmarshalCustom(p, s); err != nil {
			return reflect.Value{}, fmt.Errorf("%.100q: %w", s, err)
		}
		if err := writesBack(v); err != nil {
			return reflect.Value{}, fmt.Errorf("%.100q cannot be written back: %w", s, err)
		}
		return v, nil
	}
	var err error
	switch k := t.Kind(); {
	case k == reflect.String:
		v.SetString(s)
	case k == reflect.Bool:
		var b bool
		if b, err = strconv.ParseBool(s); err == nil {
			v.SetBool(b)
		}
	case v.CanInt():
		var n int64
		if n, err = strconv.ParseInt(s, 10, t.Bits()); err == nil {
			v.SetInt(n)
		}
	case isBytes(t):
		var b []byte
		if b, err = base64.StdEncoding.DecodeString(s); err != nil {
			b, err = base64.URLEncoding.DecodeString(s)
		}
		if err == nil {
			v.SetBytes(b)
		}
	case v.CanUint():
		var n uint64
		if n, err = strconv.ParseUint(s, 10, t.Bits()); err == nil {
			v.SetUint(n)
		}
	case v.CanFloat():
		var f float64
		if f, err = strconv.ParseFloat(s, t.Bits()); err == nil {
			v.SetFloat(f)
		}
	default:
		return reflect.Value{}, fmt.Errorf("a %s cannot be given as a query or path parameter", t)
	}
	if err != nil {
		return reflect.Value{}, valueError(t, s, err)
	}
	return v, nil
}

// unmarshalCustom parses s into *p with p's own method.
func unmarshalCustom(p reflect.Value, s string) error {
	if u, ok := p.Interface().(queryUnmarshaler); ok {
		return u.UnmarshalQueryParameter(s)
	}
	return p.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
}

// writesBack refuses a value its type parses but cannot format into
// something it parses again (metav1.Time accepts 0000-01-01T00:00:00+01:00,
// and writes it as the year -1 in UTC), so that what Bind sets, Encode sends.
func writesBack(v reflect.Value) error {
	pt := reflect.PointerTo(v.Type())
	if !pt.Implements(queryMarshalerType) && !pt.Implements(textMarshalerType) {
		return nil
	}
	s, err := formatScalar(v)
	if err != nil {
		return err
	}
	return unmarshalCustom(reflect.New(v.Type()), s)
}

// valueError says what a value should have been.
func valueError(t reflect.Type, s string, err error) error {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%.100q is out of range for %s", s, t.Kind())
	}
	want := "a number"
	switch {
	case t.Kind() == reflect.Bool:
		want = "true or false"
	case isBytes(t):
		want = "base64"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		want = "an integer"
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		want = "a non-negative integer"
	}
	return fmt.Errorf("%.100q is not %s", s, want)
}

// formatValue is parseValue's inverse: a leaf's query values, and whether
// it is set (a non-nil pointer, or a non-zero value).
func formatValue(v reflect.Value) ([]string, bool, error) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, false, nil
		}
		vals, err := formatSet(v.Elem())
		return vals, true, err
	}
	if v.IsZero() {
		return nil, false, nil
	}
	vals, err := formatSet(v)
	return vals, true, err
}

// formatSet formats a leaf that is set, even when it is its zero value.
func formatSet(v reflect.Value) ([]string, error) {
	t := v.Type()
	if t.Kind() != reflect.Slice || custom(t) || isBytes(t) {
		s, err := formatScalar(v)
		return []string{s}, err
	}
	out := make([]string, 0, v.Len())
	for i := range v.Len() {
		e := v.Index(i)
		if e.Kind() == reflect.Pointer {
			if e.IsNil() {
				return nil, fmt.Errorf("element %d is nil", i)
			}
			e = e.Elem()
		}
		s, err := formatScalar(e)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// formatScalar formats one non-pointer, non-slice leaf (or []byte, or a
// slice type that formats itself).
func formatScalar(v reflect.Value) (string, error) {
	t := v.Type()
	if reflect.PointerTo(t).Implements(queryMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		p := reflect.New(t) // addressable, for pointer-receiver methods
		p.Elem().Set(v)
		if m, ok := p.Interface().(queryMarshaler); ok {
			return m.MarshalQueryParameter()
		}
		b, err := p.Interface().(encoding.TextMarshaler).MarshalText()
		return string(b), err
	}
	switch {
	case t.Kind() == reflect.String:
		return v.String(), nil
	case t.Kind() == reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case v.CanInt():
		return strconv.FormatInt(v.Int(), 10), nil
	case isBytes(t):
		return base64.StdEncoding.EncodeToString(v.Bytes()), nil
	case v.CanUint():
		return strconv.FormatUint(v.Uint(), 10), nil
	case v.CanFloat():
		return strconv.FormatFloat(v.Float(), 'g', -1, t.Bits()), nil
	}
	return "", fmt.Errorf("a %s cannot be given as a query or path parameter", t)
}
