package rest

import (
	"fmt"
	"reflect"
)

// Check says whether req (a pointer to a request struct) can serve the
// route: every path variable and the body field name one of its fields.
func Check(req reflect.Type, pattern, body string) error {
	if req.Kind() != reflect.Pointer || req.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%s is not a pointer to a struct", req)
	}
	vars, err := patternVars(pattern)
	if err != nil {
		return err
	}
	for _, v := range vars {
		if _, err := resolveVar(req.Elem(), v); err != nil {
			return err
		}
	}
	if body != "" && body != "*" {
		if _, ok := lookup(req.Elem(), body); !ok {
			return fmt.Errorf("body %q: %s has no such field", body, req.Elem())
		}
	}
	return nil
}

// BodyTarget is where a route's JSON body decodes to in the request in (a
// pointer to a struct): in itself for "*", or a pointer to the field named
// body, allocated if need be.
func BodyTarget(in any, body string) (any, error) {
	if body == "*" || body == "" {
		return in, nil
	}
	v := reflect.ValueOf(in)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, fmt.Errorf("%T is not a pointer to a struct", in)
	}
	p, ok := lookup(v.Elem().Type(), body)
	if !ok {
		return nil, fmt.Errorf("body %q: %s has no such field", body, v.Elem().Type())
	}
	f, ok := fieldAt(v.Elem(), p, true)
	if !ok || !f.CanAddr() {
		return nil, fmt.Errorf("body %q: cannot set the field", body)
	}
	return f.Addr().Interface(), nil
}
