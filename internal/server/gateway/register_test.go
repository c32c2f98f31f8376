package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"github.com/braidwf/braid/pkg/apiclient/rest"
	. "github.com/braidwf/braid/pkg/apiclient/rest/resttest"
)

func TestRegisterRefusesRoutesItCannotServe(t *testing.T) {
	noDecode := grpc.ServiceDesc{ServiceName: "test.Bad", HandlerType: (*any)(nil), Methods: []grpc.MethodDesc{
		{MethodName: "Skips", Handler: func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
			return nil, nil
		}},
		{MethodName: "Scalar", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var s string
			return nil, dec(&s)
		}},
		{MethodName: "Panics", Handler: func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
			panic("boom")
		}},
	}}
	bad := func(method, verb, pattern, body string) rest.Route {
		return rest.Route{Service: "test.Bad", Method: method, Verb: verb, Pattern: pattern, Body: body}
	}
	for _, c := range []struct {
		desc  *grpc.ServiceDesc
		route rest.Route
		want  string
	}{
		{&thingDesc, route("Missing", "GET", "/x", ""), "service test.ThingService has no unary method Missing"},
		{&thingDesc, route("WatchThings", "GET", "/x", ""), "has no unary method WatchThings"}, // a stream, not flagged
		{&thingDesc, route("GetThing", "GET", "/x/{nope}", ""), "path variable {nope}: resttest.GetThingRequest has no such field"},
		{&thingDesc, route("GetThing", "GET", "/x/{getOptions}", ""), "path variable {getOptions}: a *v1.GetOptions is not one value"},
		{&thingDesc, route("ListThings", "GET", "/x/{tags}", ""), "path variable {tags}: a []string is not one value"},
		{&thingDesc, route("GetThing", "GET", "/x/{name}", "*"), "a GET has no body"},
		{&thingDesc, route("GetThing", "HEAD", "/x/{name}", ""), `HTTP method "HEAD"`},
		{&thingDesc, route("UpdateThing", "PUT", "/x/{name", "thing"), "unclosed {"},
		{&thingDesc, route("UpdateThing", "PUT", "/x", "nothing"), `body "nothing": resttest.UpdateThingRequest has no such field`},
		{&thingDesc, route("GetThing", "GET", "x/{name}", ""), "parsing path pattern"},
		{&noDecode, bad("Skips", "GET", "/x", ""), "the handler of Skips did not decode a request"},
		{&noDecode, bad("Scalar", "GET", "/x", ""), "the request of Scalar is a *string, not a pointer to a struct"},
		{&noDecode, bad("Panics", "GET", "/x", ""), "the handler of Panics panicked while decoding its request: boom"},
	} {
		err := Register(runtime.NewServeMux(), c.desc, echoServer{}, []rest.Route{c.route}, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("route %+v: error %v, want %q", c.route, err, c.want)
		}
	}
}

func TestRegisterProtoNames(t *testing.T) {
	// A path variable and a body may name a field by its proto name.
	mux := runtime.NewServeMux()
	err := Register(mux, &thingDesc, echoServer{}, []rest.Route{
		route("UpdateThing", "PUT", "/x/{namespace}/{the_thing.metadata.name}", "the_thing"),
		route("ListThings", "GET", "/y/{list_options.labelSelector}", ""),
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, mux)
	r := call(t, "PUT", base+"/x/ns/n", `{"spec":"s"}`)
	var got UpdateThingRequest
	echoed(t, r, &got)
	if got.Thing == nil || got.Thing.Metadata.Name != "n" || got.Thing.Spec != "s" || got.Namespace != "ns" {
		t.Errorf("got %+v", got)
	}
	r = call(t, "GET", base+"/y/a=b", "")
	var list ListThingsRequest
	echoed(t, r, &list)
	if list.ListOptions == nil || list.ListOptions.LabelSelector != "a=b" {
		t.Errorf("got %+v", list)
	}
}
