package main

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const restPkg = protogen.GoImportPath("github.com/braidwf/braid/pkg/apiclient/rest")

// route is one google.api.http binding of an RPC.
type route struct {
	service, method, verb, pattern, body string
	streaming                            bool
}

// generateRoutes writes routes.gen.go: one rest.Route per binding, in the
// order of the RPCs and, within one, the main rule before its
// additional_bindings. An RPC without a rule has no route.
func generateRoutes(gen *protogen.Plugin, f *protogen.File) error {
	var routes []route
	for _, svc := range f.Services {
		for _, m := range svc.Methods {
			rs, err := methodRoutes(m)
			if err != nil {
				return fmt.Errorf("%s: %w", m.Desc.FullName(), err)
			}
			routes = append(routes, rs...)
		}
	}
	name := path.Join(path.Dir(f.GeneratedFilenamePrefix), "routes.gen.go")
	g := gen.NewGeneratedFile(name, f.GoImportPath)
	header(g, f)
	g.P("// Routes are the REST forms of the RPCs of ", f.Desc.Path(), ", from their")
	g.P("// google.api.http rules.")
	g.P("var Routes = []", restPkg.Ident("Route"), "{")
	for _, r := range routes {
		line := fmt.Sprintf("{Service: %q, Method: %q, Verb: %q, Pattern: %q", r.service, r.method, r.verb, r.pattern)
		if r.body != "" {
			line += fmt.Sprintf(", Body: %q", r.body)
		}
		if r.streaming {
			line += ", ServerStreaming: true"
		}
		g.P(line, "},")
	}
	g.P("}")
	return nil
}

func methodRoutes(m *protogen.Method) ([]route, error) {
	if m.Desc.IsStreamingClient() {
		return nil, nil // no REST form for client streams
	}
	rule, ok := proto.GetExtension(m.Desc.Options(), annotations.E_Http).(*annotations.HttpRule)
	if !ok || rule == nil {
		return nil, nil
	}
	rules := append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...)
	out := make([]route, 0, len(rules))
	for i, r := range rules {
		if i > 0 && len(r.GetAdditionalBindings()) > 0 {
			return nil, fmt.Errorf("additional_bindings may not nest")
		}
		rt, err := oneRoute(m, r)
		if err != nil {
			return nil, err
		}
		out = append(out, rt)
	}
	return out, nil
}

func oneRoute(m *protogen.Method, r *annotations.HttpRule) (route, error) {
	rt := route{
		service:   string(m.Parent.Desc.FullName()),
		method:    string(m.Desc.Name()),
		body:      r.GetBody(),
		streaming: m.Desc.IsStreamingServer(),
	}
	switch p := r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		rt.verb, rt.pattern = "GET", p.Get
	case *annotations.HttpRule_Post:
		rt.verb, rt.pattern = "POST", p.Post
	case *annotations.HttpRule_Put:
		rt.verb, rt.pattern = "PUT", p.Put
	case *annotations.HttpRule_Delete:
		rt.verb, rt.pattern = "DELETE", p.Delete
	case *annotations.HttpRule_Patch:
		rt.verb, rt.pattern = "PATCH", p.Patch
	case *annotations.HttpRule_Custom:
		rt.verb, rt.pattern = strings.ToUpper(p.Custom.GetKind()), p.Custom.GetPath()
	default:
		return route{}, fmt.Errorf("a google.api.http rule without a pattern")
	}
	if r.GetResponseBody() != "" {
		return route{}, fmt.Errorf("response_body is not supported")
	}
	if !strings.HasPrefix(rt.pattern, "/") {
		return route{}, fmt.Errorf("path %q does not start with /", rt.pattern)
	}
	in := m.Input.Desc
	for _, v := range pathVariables(rt.pattern) {
		if err := fieldPath(in, v); err != nil {
			return route{}, fmt.Errorf("path %s: {%s}: %w", rt.pattern, v, err)
		}
	}
	if rt.body != "" && rt.body != "*" {
		if err := fieldPath(in, rt.body); err != nil {
			return route{}, fmt.Errorf("body %q: %w", rt.body, err)
		}
	}
	return rt, nil
}

var variable = regexp.MustCompile(`\{([^}=]+)(=[^}]*)?\}`)

// pathVariables are the field paths of a pattern's {var} and {var=...}.
func pathVariables(pattern string) []string {
	var out []string
	for _, m := range variable.FindAllStringSubmatch(pattern, -1) {
		out = append(out, m[1])
	}
	return out
}

// fieldPath checks that a dotted path names a singular field of md (through
// message fields).
func fieldPath(md protoreflect.MessageDescriptor, p string) error {
	parts := strings.Split(p, ".")
	for i, name := range parts {
		fd := md.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			return fmt.Errorf("%s has no field %s", md.FullName(), name)
		}
		if fd.IsList() || fd.IsMap() {
			return fmt.Errorf("%s.%s is repeated", md.FullName(), name)
		}
		if i < len(parts)-1 {
			if fd.Message() == nil {
				return fmt.Errorf("%s.%s is not a message", md.FullName(), name)
			}
			md = fd.Message()
		}
	}
	return nil
}
