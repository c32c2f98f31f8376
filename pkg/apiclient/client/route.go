package client

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"
)

// route is the HTTP form of one call.
type route struct {
	verb string
	path string // with the query, if any
	body []byte // nil: no body
}

// restRequest maps a call ("/pkg.Service/Method" and its request) to its
// REST request, following the method's google.api.http rule: path
// parameters are taken from the request; the rest of a GET or DELETE
// request goes in the query (dotted camelCase names, sorted); body "*"
// sends the whole request as JSON, body "x" the field x.
func restRequest(fullMethod string, in proto.Message) (route, error) {
	md, err := findMethod(fullMethod)
	if err != nil {
		return route{}, err
	}
	rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	if rule == nil {
		return route{}, status.Errorf(codes.Unimplemented, "%s has no REST route", fullMethod)
	}
	verb, tmpl := ruleVerb(rule)
	if tmpl == "" {
		return route{}, status.Errorf(codes.Unimplemented, "%s has no REST route", fullMethod)
	}
	msg := in.ProtoReflect()
	path, used, err := expandPath(tmpl, msg)
	if err != nil {
		return route{}, status.Errorf(codes.InvalidArgument, "%s: %v", fullMethod, err)
	}
	r := route{verb: verb, path: path}
	switch rule.GetBody() {
	case "":
		q := url.Values{}
		encodeQuery(q, "", msg, used)
		r.path += "?" + q.Encode()
	case "*":
		if r.body, err = protojson.Marshal(in); err != nil {
			return route{}, status.Errorf(codes.InvalidArgument, "%s: encode the request: %v", fullMethod, err)
		}
	default:
		fd := msg.Descriptor().Fields().ByName(protoreflect.Name(rule.GetBody()))
		if fd == nil || fd.Kind() != protoreflect.MessageKind {
			return route{}, status.Errorf(codes.Internal, "%s: body field %q is not a message", fullMethod, rule.GetBody())
		}
		if r.body, err = protojson.Marshal(msg.Get(fd).Message().Interface()); err != nil {
			return route{}, status.Errorf(codes.InvalidArgument, "%s: encode the request: %v", fullMethod, err)
		}
	}
	return r, nil
}

func findMethod(fullMethod string) (protoreflect.MethodDescriptor, error) {
	name := strings.ReplaceAll(strings.TrimPrefix(fullMethod, "/"), "/", ".")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, status.Errorf(codes.Unimplemented, "unknown method %s: %v", fullMethod, err)
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "%s is not a method", fullMethod)
	}
	return md, nil
}

func ruleVerb(r *annotations.HttpRule) (verb, path string) {
	switch {
	case r.GetGet() != "":
		return http.MethodGet, r.GetGet()
	case r.GetPost() != "":
		return http.MethodPost, r.GetPost()
	case r.GetPut() != "":
		return http.MethodPut, r.GetPut()
	case r.GetDelete() != "":
		return http.MethodDelete, r.GetDelete()
	case r.GetPatch() != "":
		return http.MethodPatch, r.GetPatch()
	case r.GetCustom() != nil:
		return r.GetCustom().GetKind(), r.GetCustom().GetPath()
	}
	return "", ""
}

// expandPath fills the {field} (or {field=pattern}) variables of tmpl from
// msg and returns the path and the field paths it used.
func expandPath(tmpl string, msg protoreflect.Message) (string, map[string]bool, error) {
	used := map[string]bool{}
	var b strings.Builder
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			b.WriteString(tmpl)
			return b.String(), used, nil
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			return "", nil, status.Errorf(codes.Internal, "bad path template %q", tmpl)
		}
		b.WriteString(tmpl[:open])
		field, _, _ := strings.Cut(tmpl[open+1:open+end], "=")
		used[field] = true
		b.WriteString(escapePath(fieldString(msg, field)))
		tmpl = tmpl[open+end+1:]
	}
}

// escapePath escapes a path value but keeps "/" for {x=**} variables.
func escapePath(v string) string {
	parts := strings.Split(v, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// fieldString reads a dotted field path of msg as a string; it walks into
// google.protobuf.Struct values too (template.metadata.name). A missing
// value is "".
func fieldString(msg protoreflect.Message, path string) string {
	name, rest, nested := strings.Cut(path, ".")
	fd := msg.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		fd = msg.Descriptor().Fields().ByJSONName(name)
	}
	if fd == nil || fd.IsList() || fd.IsMap() {
		return ""
	}
	v := msg.Get(fd)
	if fd.Kind() != protoreflect.MessageKind {
		return scalarString(fd, v)
	}
	if !nested || !msg.Has(fd) {
		return ""
	}
	if s, ok := v.Message().Interface().(*structpb.Struct); ok {
		return structString(s, rest)
	}
	return fieldString(v.Message(), rest)
}

func structString(s *structpb.Struct, path string) string {
	var v any = s.AsMap()
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	str, _ := v.(string)
	return str
}

// encodeQuery adds the populated fields of msg not in skip to q, nested
// messages as dotted names (listOptions.labelSelector).
func encodeQuery(q url.Values, prefix string, msg protoreflect.Message, skip map[string]bool) {
	msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		protoPath := prefix + string(fd.Name())
		if skip[protoPath] || fd.IsMap() {
			return true
		}
		key := prefix + fd.JSONName()
		switch {
		case fd.IsList():
			if fd.Kind() == protoreflect.MessageKind {
				return true
			}
			l := v.List()
			for i := range l.Len() {
				q.Add(key, scalarString(fd, l.Get(i)))
			}
		case fd.Kind() == protoreflect.MessageKind:
			switch fd.Message().FullName() {
			case "google.protobuf.Timestamp", "google.protobuf.Duration":
				if b, err := protojson.Marshal(v.Message().Interface()); err == nil {
					q.Set(key, strings.Trim(string(b), `"`))
				}
				return true
			}
			if fd.Message().FullName().Parent() == "google.protobuf" {
				return true // Struct, Value, ...: not expressible in a query
			}
			encodeQuery(q, key+".", v.Message(), skip)
		default:
			q.Set(key, scalarString(fd, v))
		}
		return true
	})
}

func scalarString(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return strconv.FormatBool(v.Bool())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(v.Enum()))
	case protoreflect.BytesKind:
		return string(v.Bytes())
	default:
		return v.String()
	}
}
