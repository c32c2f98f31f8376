package rest

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ParamError is a query or path parameter that cannot be set: a value that
// does not parse, or a name that reaches an object rather than a value. Its
// gRPC status is InvalidArgument.
type ParamError struct {
	Name string // the parameter, as the request named it
	Err  error
}

func (e *ParamError) Error() string { return fmt.Sprintf("parameter %.100q: %v", e.Name, e.Err) }

func (e *ParamError) Unwrap() error { return e.Err }

// GRPCStatus makes a ParamError a 400 (code 3) through the gateway's error
// handler, and InvalidArgument through status.Convert.
func (e *ParamError) GRPCStatus() *status.Status {
	return status.New(codes.InvalidArgument, e.Error())
}

// Bind sets the fields of in (a non-nil pointer to a struct) from a REST
// request's query parameters, then from its path parameters, which
// override them. Both name fields by dotted JSON paths
// ("listOptions.labelSelector"; a segment may also be the field's proto
// name), through nested structs and pointers (allocated only when a value is
// set). A query parameter that names no field is ignored; a path parameter
// that names none is an error. Path values are taken as they are: the
// grpc-gateway mux has already unescaped a single-segment variable. Errors
// in the request are *ParamError.
func Bind(in any, pathParams map[string]string, query url.Values) error {
	root, err := structRoot(in)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(query)) {
		if err := setParam(root, name, query[name], false); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pathParams)) {
		if err := setParam(root, name, []string{pathParams[name]}, true); err != nil {
			return err
		}
	}
	return nil
}

// structRoot is the struct in points to.
func structRoot(in any) (reflect.Value, error) {
	v := reflect.ValueOf(in)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, fmt.Errorf("gateway: want a non-nil pointer to a struct, got %T", in)
	}
	return v.Elem(), nil
}

func setParam(root reflect.Value, name string, vals []string, required bool) error {
	p, ok := lookup(root.Type(), name)
	if !ok {
		if required {
			return &ParamError{Name: name, Err: errors.New("the request has no such field")}
		}
		return nil
	}
	if !isLeaf(p.typ) {
		return &ParamError{Name: name, Err: fmt.Errorf("names an object (%s), not a value", p.typ)}
	}
	v, err := parseValue(p.typ, vals)
	if err != nil {
		return &ParamError{Name: name, Err: err}
	}
	f, ok := fieldAt(root, p, true)
	if !ok || !f.CanSet() {
		return &ParamError{Name: name, Err: errors.New("the field cannot be set")}
	}
	f.Set(v)
	return nil
}
