package client

import (
	"encoding/json"
	"reflect"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/pkg/apiclient"
	"github.com/braidwf/braid/pkg/apiclient/rest"
)

// routeTable is every service's REST routes (apiclient.Routes, from the
// generated tables) by gRPC method path
// ("/workflow.WorkflowService/GetWorkflow"), built once.
var routeTable = sync.OnceValue(func() map[string]rest.Route {
	m := map[string]rest.Route{}
	for _, r := range apiclient.Routes() {
		m[r.FullMethod()] = r
	}
	return m
})

// route is the HTTP form of one call.
type route struct {
	verb string
	path string // with the query, if any
	body []byte // nil: no body
}

// restRequest maps a call ("/pkg.Service/Method" and its request, a
// pointer to a generated request struct) to its REST request, as the
// method's route says: path variables are taken from the request; the rest
// of a request without a body goes in the query (rest.Encode: dotted JSON
// names, sorted); body "*" sends the whole request as JSON, body "x" the
// field x.
func restRequest(fullMethod string, in any) (route, error) {
	rt, ok := routeTable()[fullMethod]
	if !ok {
		return route{}, status.Errorf(codes.Unimplemented, "%s has no REST route", fullMethod)
	}
	r := route{verb: rt.Verb}
	if rt.Body == "" {
		path, q, err := rest.Encode(in, rt.Pattern)
		if err != nil {
			return route{}, status.Errorf(codes.InvalidArgument, "%s: %v", fullMethod, err)
		}
		r.path = path
		if len(q) > 0 {
			r.path += "?" + q.Encode()
		}
		return r, nil
	}
	path, err := rest.Path(in, rt.Pattern)
	if err != nil {
		return route{}, status.Errorf(codes.InvalidArgument, "%s: %v", fullMethod, err)
	}
	r.path = path
	target, err := rest.BodyTarget(shallowCopy(in), rt.Body)
	if err != nil {
		return route{}, status.Errorf(codes.Internal, "%s: %v", fullMethod, err)
	}
	if r.body, err = json.Marshal(target); err != nil {
		return route{}, status.Errorf(codes.InvalidArgument, "%s: encode the request: %v", fullMethod, err)
	}
	return r, nil
}

// shallowCopy is a pointer to a copy of the struct in points to (in itself
// when it is not a non-nil pointer to a struct), so that rest.BodyTarget,
// which allocates a nil body field, does not change the caller's request.
func shallowCopy(in any) any {
	v := reflect.ValueOf(in)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return in
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return c.Interface()
}
