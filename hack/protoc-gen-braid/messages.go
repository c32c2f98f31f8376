package main

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

var (
	jsonPkg    = protogen.GoImportPath("encoding/json")
	strconvPkg = protogen.GoImportPath("strconv")
)

// jsonMode says how a message's REST JSON is written. braid's REST wrote
// these messages with protojson (UseProtoNames, and EmitUnpopulated for
// unary responses), so the tags reproduce that with encoding/json:
//   - requests: `json:"name,omitempty"`, as Argo's gogo types; the server
//     only decodes them, and clients write only what they set.
//   - unary responses (and the messages inside them): no omitempty, and a
//     MarshalJSON that writes a nil list as [] and a nil map as {}, as
//     EmitUnpopulated did.
//   - every response: `,string` on 64-bit integers, as protojson writes them.
type jsonMode struct {
	emitAll   bool // no omitempty; nil lists and maps written empty
	int64Text bool // `,string` on singular 64-bit integers
}

// generateMessages writes <svc>.msg.go: the file's enums and messages.
func generateMessages(gen *protogen.Plugin, f *protogen.File) error {
	modes, err := jsonModes(f)
	if err != nil {
		return err
	}
	g := gen.NewGeneratedFile(f.GeneratedFilenamePrefix+".msg.go", f.GoImportPath)
	header(g, f)
	for _, e := range f.Enums {
		genEnum(g, e)
	}
	for _, m := range f.Messages {
		if len(m.Enums) > 0 || hasNested(m) || !onlySynthetic(m) {
			return fmt.Errorf("%s: nested types and oneofs are not supported", m.Desc.FullName())
		}
		genMessage(g, f, m, modes[m])
	}
	return nil
}

// hasNested reports a nested message other than a map's entry.
func hasNested(m *protogen.Message) bool {
	for _, n := range m.Messages {
		if !n.Desc.IsMapEntry() {
			return true
		}
	}
	return false
}

func onlySynthetic(m *protogen.Message) bool {
	for _, o := range m.Oneofs {
		if !o.Desc.IsSynthetic() {
			return false
		}
	}
	return true
}

// jsonModes classifies the file's messages by the RPCs that use them.
func jsonModes(f *protogen.File) (map[*protogen.Message]jsonMode, error) {
	local := map[protoreflect.FullName]*protogen.Message{}
	for _, m := range f.Messages {
		local[m.Desc.FullName()] = m
	}
	modes := map[*protogen.Message]jsonMode{}
	var mark func(m *protogen.Message, mode jsonMode)
	mark = func(m *protogen.Message, mode jsonMode) {
		old := modes[m]
		next := jsonMode{emitAll: old.emitAll || mode.emitAll, int64Text: old.int64Text || mode.int64Text}
		if next == old {
			return
		}
		modes[m] = next
		for _, fd := range m.Fields {
			msg := fd.Message
			if fd.Desc.IsMap() {
				msg = fd.Message.Fields[1].Message
			}
			if msg != nil && local[msg.Desc.FullName()] == msg {
				mark(msg, mode)
			}
		}
	}
	for _, svc := range f.Services {
		for _, m := range svc.Methods {
			if local[m.Output.Desc.FullName()] != m.Output {
				continue // another package's type: its own JSON
			}
			mark(m.Output, jsonMode{emitAll: !m.Desc.IsStreamingServer(), int64Text: true})
		}
	}
	return modes, nil
}

func genMessage(g *protogen.GeneratedFile, f *protogen.File, m *protogen.Message, mode jsonMode) {
	g.P(m.Comments.Leading, "type ", m.GoIdent, " struct {")
	for _, fd := range m.Fields {
		tags := fmt.Sprintf("protobuf:%q", protoTag(fd, fd.Desc, f))
		if fd.Desc.IsMap() {
			tags += fmt.Sprintf(" protobuf_key:%q protobuf_val:%q",
				protoTag(fd.Message.Fields[0], fd.Desc.MapKey(), f), protoTag(fd.Message.Fields[1], fd.Desc.MapValue(), f))
		}
		tags += fmt.Sprintf(" json:%q", jsonTag(fd, mode))
		comment := fd.Comments.Leading.String()
		if isDeprecated(fd) {
			comment += "//\n// Deprecated: Do not use.\n"
		}
		g.P(comment, fd.GoName, " ", goType(g, fd), " `", tags, "`")
	}
	g.P("}")
	g.P()
	if mode.emitAll {
		genMarshalJSON(g, m)
	}
	for _, fd := range m.Fields {
		genGetter(g, m, fd)
	}
}

// genMarshalJSON writes a MarshalJSON that writes nil lists as [] and nil
// maps as {}; only for messages that have any.
func genMarshalJSON(g *protogen.GeneratedFile, m *protogen.Message) {
	var fill []*protogen.Field
	for _, fd := range m.Fields {
		if fd.Desc.IsList() || fd.Desc.IsMap() {
			fill = append(fill, fd)
		}
	}
	if len(fill) == 0 {
		return
	}
	g.P("// MarshalJSON writes every field, a nil list as [] and a nil map as {}.")
	g.P("func (x ", m.GoIdent, ") MarshalJSON() ([]byte, error) {")
	g.P("type plain ", m.GoIdent)
	g.P("p := plain(x)")
	for _, fd := range fill {
		g.P("if p.", fd.GoName, " == nil {")
		g.P("p.", fd.GoName, " = ", goType(g, fd), "{}")
		g.P("}")
	}
	g.P("return ", jsonPkg.Ident("Marshal"), "(p)")
	g.P("}")
	g.P()
}

func genGetter(g *protogen.GeneratedFile, m *protogen.Message, fd *protogen.Field) {
	typ := goType(g, fd)
	if isDeprecated(fd) {
		g.P("// Deprecated: Do not use.")
	}
	if fd.Desc.HasPresence() && fd.Message == nil { // proto3 optional scalar
		elem := strings.TrimPrefix(typ, "*")
		g.P("func (x *", m.GoIdent, ") Get", fd.GoName, "() ", elem, " {")
		g.P("if x != nil && x.", fd.GoName, " != nil {")
		g.P("return *x.", fd.GoName)
		g.P("}")
		g.P("return ", zeroValue(g, fd))
		g.P("}")
		g.P()
		return
	}
	g.P("func (x *", m.GoIdent, ") Get", fd.GoName, "() ", typ, " {")
	g.P("if x != nil {")
	g.P("return x.", fd.GoName)
	g.P("}")
	g.P("return ", zeroValue(g, fd))
	g.P("}")
	g.P()
}

func zeroValue(g *protogen.GeneratedFile, fd *protogen.Field) string {
	switch {
	case fd.Desc.IsList() || fd.Desc.IsMap() || fd.Message != nil:
		return "nil"
	case fd.Enum != nil:
		return g.QualifiedGoIdent(fd.Enum.Values[0].GoIdent)
	}
	switch fd.Desc.Kind() {
	case protoreflect.BoolKind:
		return "false"
	case protoreflect.StringKind:
		return `""`
	case protoreflect.BytesKind:
		return "nil"
	default:
		return "0"
	}
}

// goType is the field's Go type: []T for a list, map[K]V for a map, *T for
// a message or a proto3 optional scalar.
func goType(g *protogen.GeneratedFile, fd *protogen.Field) string {
	if fd.Desc.IsMap() {
		return "map[" + elemType(g, fd.Message.Fields[0]) + "]" + elemType(g, fd.Message.Fields[1])
	}
	t := elemType(g, fd)
	switch {
	case fd.Desc.IsList():
		return "[]" + t
	case fd.Desc.HasPresence() && fd.Message == nil:
		return "*" + t
	}
	return t
}

func elemType(g *protogen.GeneratedFile, fd *protogen.Field) string {
	switch {
	case fd.Message != nil:
		return "*" + g.QualifiedGoIdent(fd.Message.GoIdent)
	case fd.Enum != nil:
		return g.QualifiedGoIdent(fd.Enum.GoIdent)
	}
	switch fd.Desc.Kind() {
	case protoreflect.BoolKind:
		return "bool"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "int32"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "uint32"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return "int64"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "uint64"
	case protoreflect.FloatKind:
		return "float32"
	case protoreflect.DoubleKind:
		return "float64"
	case protoreflect.StringKind:
		return "string"
	case protoreflect.BytesKind:
		return "[]byte"
	}
	panic(fmt.Sprintf("%s: unsupported kind %s", fd.Desc.FullName(), fd.Desc.Kind()))
}

// protoTag is the `protobuf:"..."` tag: <wire>,<number>,<opt|rep>[,packed],
// name=<proto name>[,enum=<full name>][,proto3], as protoc-gen-go writes it.
func protoTag(fd *protogen.Field, d protoreflect.FieldDescriptor, f *protogen.File) string {
	label := "opt"
	if d.Cardinality() == protoreflect.Repeated {
		label = "rep"
	}
	parts := []string{wireType(d.Kind()), strconv.Itoa(int(d.Number())), label}
	if d.IsPacked() {
		parts = append(parts, "packed")
	}
	parts = append(parts, "name="+string(d.Name()))
	if d.Kind() == protoreflect.EnumKind {
		parts = append(parts, "enum="+string(d.Enum().FullName()))
	}
	if f.Desc.Syntax() == protoreflect.Proto3 {
		parts = append(parts, "proto3")
	}
	return strings.Join(parts, ",")
}

func wireType(k protoreflect.Kind) string {
	switch k {
	case protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Int64Kind,
		protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		return "varint"
	case protoreflect.Sint32Kind:
		return "zigzag32"
	case protoreflect.Sint64Kind:
		return "zigzag64"
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return "fixed32"
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return "fixed64"
	case protoreflect.GroupKind:
		return "group"
	default: // string, bytes, message
		return "bytes"
	}
}

func jsonTag(fd *protogen.Field, mode jsonMode) string {
	tag := string(fd.Desc.Name())
	if !mode.emitAll {
		tag += ",omitempty"
	}
	if mode.int64Text && !fd.Desc.IsList() && !fd.Desc.IsMap() {
		switch fd.Desc.Kind() {
		case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
			protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			tag += ",string"
		}
	}
	return tag
}

func isDeprecated(fd *protogen.Field) bool {
	o, ok := fd.Desc.Options().(*descriptorpb.FieldOptions)
	return ok && o.GetDeprecated()
}

// genEnum writes an enum as protoc-gen-go names it (a named int32 and one
// constant per value). Its JSON is the number, as Argo's REST writes it; a
// number or a value's name is accepted in JSON and in a query parameter.
func genEnum(g *protogen.GeneratedFile, e *protogen.Enum) {
	name := e.GoIdent.GoName
	g.P(e.Comments.Leading, "type ", name, " int32")
	g.P()
	g.P("const (")
	for _, v := range e.Values {
		g.P(v.Comments.Leading, v.GoIdent.GoName, " ", name, " = ", v.Desc.Number())
	}
	g.P(")")
	g.P()
	g.P("var ", name, "_name = map[int32]string{")
	for _, v := range e.Values {
		g.P(v.Desc.Number(), ": ", strconv.Quote(string(v.Desc.Name())), ",")
	}
	g.P("}")
	g.P()
	g.P("var ", name, "_value = map[string]int32{")
	for _, v := range e.Values {
		g.P(strconv.Quote(string(v.Desc.Name())), ": ", v.Desc.Number(), ",")
	}
	g.P("}")
	g.P()
	g.P("// String is the value's name, or its number when it has none.")
	g.P("func (x ", name, ") String() string {")
	g.P("if n, ok := ", name, "_name[int32(x)]; ok {")
	g.P("return n")
	g.P("}")
	g.P("return ", strconvPkg.Ident("Itoa"), "(int(x))")
	g.P("}")
	g.P()
	g.P("// UnmarshalText accepts a value's name or a number.")
	g.P("func (x *", name, ") UnmarshalText(b []byte) error {")
	g.P("if v, ok := ", name, "_value[string(b)]; ok {")
	g.P("*x = ", name, "(v)")
	g.P("return nil")
	g.P("}")
	g.P("n, err := ", strconvPkg.Ident("ParseInt"), "(string(b), 10, 32)")
	g.P("if err != nil {")
	g.P("return ", protogen.GoImportPath("fmt").Ident("Errorf"), `("invalid `, e.Desc.FullName(), ` %q", b)`)
	g.P("}")
	g.P("*x = ", name, "(n)")
	g.P("return nil")
	g.P("}")
	g.P()
	g.P("// UnmarshalJSON accepts a number or a value's name; null leaves x as is.")
	g.P("func (x *", name, ") UnmarshalJSON(b []byte) error {")
	g.P(`if string(b) == "null" {`)
	g.P("return nil")
	g.P("}")
	g.P("if len(b) > 0 && b[0] == '\"' {")
	g.P("var s string")
	g.P("if err := ", jsonPkg.Ident("Unmarshal"), "(b, &s); err != nil {")
	g.P("return err")
	g.P("}")
	g.P("b = []byte(s)")
	g.P("}")
	g.P("return x.UnmarshalText(b)")
	g.P("}")
	g.P()
}
