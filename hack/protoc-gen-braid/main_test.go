package main

import (
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// testFile is a small service proto, built by hand (braid's module has no
// .proto parser): enum Kind, messages Req, Resp and Ev, service S.
func testFile(getPath string) *descriptorpb.FileDescriptorProto {
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum()}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	const (
		opt = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		rep = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
		str = descriptorpb.FieldDescriptorProto_TYPE_STRING
		i64 = descriptorpb.FieldDescriptorProto_TYPE_INT64
		i32 = descriptorpb.FieldDescriptorProto_TYPE_INT32
		bln = descriptorpb.FieldDescriptorProto_TYPE_BOOL
		msg = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
		enm = descriptorpb.FieldDescriptorProto_TYPE_ENUM
	)
	mapEntry := &descriptorpb.DescriptorProto{
		Name:    proto.String("FlagsEntry"),
		Field:   []*descriptorpb.FieldDescriptorProto{field("key", 1, str, opt, ""), field("value", 2, bln, opt, "")},
		Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
	}
	optional := field("opt", 7, i32, opt, "")
	optional.Proto3Optional, optional.OneofIndex = proto.Bool(true), proto.Int32(0)
	deprecated := field("old", 9, str, opt, "")
	deprecated.Options = &descriptorpb.FieldOptions{Deprecated: proto.Bool(true)}
	req := &descriptorpb.DescriptorProto{
		Name: proto.String("Req"),
		Field: []*descriptorpb.FieldDescriptorProto{
			field("name", 1, str, opt, ""), field("big", 2, i64, opt, ""), field("tags", 3, str, rep, ""),
			field("flags", 4, msg, rep, ".t.Req.FlagsEntry"), field("kind", 5, enm, opt, ".t.Kind"),
			field("ev", 6, msg, opt, ".t.Ev"), optional, field("nums", 8, i32, rep, ""), deprecated,
		},
		NestedType: []*descriptorpb.DescriptorProto{mapEntry},
		OneofDecl:  []*descriptorpb.OneofDescriptorProto{{Name: proto.String("_opt")}},
	}
	resp := &descriptorpb.DescriptorProto{
		Name:  proto.String("Resp"),
		Field: []*descriptorpb.FieldDescriptorProto{field("items", 1, str, rep, ""), field("total", 2, i64, opt, "")},
	}
	ev := &descriptorpb.DescriptorProto{Name: proto.String("Ev"), Field: []*descriptorpb.FieldDescriptorProto{field("n", 1, i64, opt, "")}}
	getOpts := &descriptorpb.MethodOptions{}
	proto.SetExtension(getOpts, annotations.E_Http, &annotations.HttpRule{
		Pattern:            &annotations.HttpRule_Get{Get: getPath},
		AdditionalBindings: []*annotations.HttpRule{{Pattern: &annotations.HttpRule_Post{Post: "/v1/x"}, Body: "*"}},
	})
	watchOpts := &descriptorpb.MethodOptions{}
	proto.SetExtension(watchOpts, annotations.E_Http, &annotations.HttpRule{
		Pattern: &annotations.HttpRule_Custom{Custom: &annotations.CustomHttpPattern{Kind: "head", Path: "/v1/w/{name}"}},
		Body:    "ev",
	})
	return &descriptorpb.FileDescriptorProto{
		Name:        proto.String("t/t.proto"),
		Package:     proto.String("t"),
		Syntax:      proto.String("proto3"),
		Dependency:  []string{"google/api/annotations.proto"},
		Options:     &descriptorpb.FileOptions{GoPackage: proto.String("example.com/t;t")},
		EnumType:    []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Kind"), Value: []*descriptorpb.EnumValueDescriptorProto{{Name: proto.String("A"), Number: proto.Int32(0)}, {Name: proto.String("B"), Number: proto.Int32(1)}}}},
		MessageType: []*descriptorpb.DescriptorProto{req, resp, ev},
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: proto.String("S"),
			Method: []*descriptorpb.MethodDescriptorProto{
				{Name: proto.String("Get"), InputType: proto.String(".t.Req"), OutputType: proto.String(".t.Resp"), Options: getOpts},
				{Name: proto.String("Watch"), InputType: proto.String(".t.Req"), OutputType: proto.String(".t.Ev"), ServerStreaming: proto.Bool(true), Options: watchOpts},
				{Name: proto.String("NoRule"), InputType: proto.String(".t.Req"), OutputType: proto.String(".t.Resp")},
			},
		}},
	}
}

// generate runs the plugin on testFile and returns the generated files.
func generate(t *testing.T, getPath string) (map[string]string, error) {
	t.Helper()
	req := &pluginpb.CodeGeneratorRequest{FileToGenerate: []string{"t/t.proto"}}
	for _, f := range []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(descriptorpb.File_google_protobuf_descriptor_proto),
		protodesc.ToFileDescriptorProto(annotations.File_google_api_http_proto),
		protodesc.ToFileDescriptorProto(annotations.File_google_api_annotations_proto),
		testFile(getPath),
	} {
		req.ProtoFile = append(req.ProtoFile, f)
	}
	gen, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range gen.Files {
		if !f.Generate {
			continue
		}
		if err := generateMessages(gen, f); err != nil {
			return nil, err
		}
		if err := generateRoutes(gen, f); err != nil {
			return nil, err
		}
	}
	resp := gen.Response()
	if resp.Error != nil {
		t.Fatal(resp.GetError())
	}
	out := map[string]string{}
	for _, f := range resp.File {
		out[f.GetName()] = f.GetContent()
	}
	return out, nil
}

func TestMessagesAndRoutes(t *testing.T) {
	files, err := generate(t, "/v1/{name}")
	if err != nil {
		t.Fatal(err)
	}
	msgs, routes := files["example.com/t/t.msg.go"], files["example.com/t/routes.gen.go"]
	if msgs == "" || routes == "" {
		t.Fatalf("generated %v", keys(files))
	}
	flat := squash(msgs)
	for _, want := range []string{
		// A request: omitempty, numbers as numbers.
		"Name  string `protobuf:\"bytes,1,opt,name=name,proto3\" json:\"name,omitempty\"`",
		"Big   int64  `protobuf:\"varint,2,opt,name=big,proto3\" json:\"big,omitempty\"`",
		"`protobuf:\"bytes,4,rep,name=flags,proto3\" protobuf_key:\"bytes,1,opt,name=key,proto3\" protobuf_val:\"varint,2,opt,name=value,proto3\" json:\"flags,omitempty\"`",
		"Kind  Kind   `protobuf:\"varint,5,opt,name=kind,enum=t.Kind,proto3\" json:\"kind,omitempty\"`",
		"Ev    *Ev    `protobuf:\"bytes,6,opt,name=ev,proto3\" json:\"ev,omitempty\"`",
		"Opt   *int32 `protobuf:\"varint,7,opt,name=opt,proto3\" json:\"opt,omitempty\"`",
		"Nums  []int32 `protobuf:\"varint,8,rep,packed,name=nums,proto3\" json:\"nums,omitempty\"`",
		"// Deprecated: Do not use.\n\tOld string",
		// A unary response: every field, int64 as a string, [] for nil.
		"Items []string `protobuf:\"bytes,1,rep,name=items,proto3\" json:\"items\"`",
		"Total int64    `protobuf:\"varint,2,opt,name=total,proto3\" json:\"total,string\"`",
		"func (x Resp) MarshalJSON() ([]byte, error) {",
		// A streamed response: omitempty, int64 as a string.
		"N int64 `protobuf:\"varint,1,opt,name=n,proto3\" json:\"n,omitempty,string\"`",
		// Getters.
		"func (x *Req) GetOpt() int32 {\n\tif x != nil && x.Opt != nil {",
		"func (x *Req) GetKind() Kind {\n\tif x != nil {\n\t\treturn x.Kind\n\t}\n\treturn Kind_A\n}",
		"Kind_B Kind = 1",
	} {
		if !strings.Contains(flat, squash(want)) {
			t.Errorf("t.msg.go lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("t.msg.go:\n%s", msgs)
	}
	for _, want := range []string{
		`{Service: "t.S", Method: "Get", Verb: "GET", Pattern: "/v1/{name}"},`,
		`{Service: "t.S", Method: "Get", Verb: "POST", Pattern: "/v1/x", Body: "*"},`,
		`{Service: "t.S", Method: "Watch", Verb: "HEAD", Pattern: "/v1/w/{name}", Body: "ev", ServerStreaming: true},`,
	} {
		if !strings.Contains(routes, want) {
			t.Errorf("routes.gen.go lacks %s\n-- got:\n%s", want, routes)
		}
	}
	if strings.Contains(routes, "NoRule") {
		t.Error("an RPC without a rule got a route")
	}
	if strings.Contains(msgs, "func (x Ev) MarshalJSON") || strings.Contains(msgs, "func (x Req) MarshalJSON") {
		t.Error("MarshalJSON on a message that is not a unary response")
	}
}

func TestRouteVariableMustBeAField(t *testing.T) {
	if _, err := generate(t, "/v1/{nope}"); err == nil || !strings.Contains(err.Error(), "no field nope") {
		t.Fatalf("error %v, want one about {nope}", err)
	}
	if _, err := generate(t, "/v1/{tags}"); err == nil || !strings.Contains(err.Error(), "repeated") {
		t.Fatalf("error %v, want one about a repeated {tags}", err)
	}
}

// squash turns every run of white space into one space.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
