package main

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// roots are the types the API carries; every struct they reach becomes a
// message. A type a service proto names must be here or reachable from here.
func roots() []reflect.Type {
	return []reflect.Type{
		reflect.TypeFor[v1alpha1.Workflow](),
		reflect.TypeFor[v1alpha1.WorkflowList](),
		reflect.TypeFor[v1alpha1.WorkflowTemplate](),
		reflect.TypeFor[v1alpha1.WorkflowTemplateList](),
		reflect.TypeFor[v1alpha1.ClusterWorkflowTemplate](),
		reflect.TypeFor[v1alpha1.ClusterWorkflowTemplateList](),
		reflect.TypeFor[v1alpha1.CronWorkflow](),
		reflect.TypeFor[v1alpha1.CronWorkflowList](),
		reflect.TypeFor[v1alpha1.WorkflowEventBinding](),
		reflect.TypeFor[v1alpha1.WorkflowEventBindingList](),
		reflect.TypeFor[v1alpha1.Item](),
		// Named by the service protos only.
		reflect.TypeFor[v1alpha1.SubmitOpts](),
		reflect.TypeFor[v1alpha1.LabelKeys](),
		reflect.TypeFor[v1alpha1.LabelValues](),
		reflect.TypeFor[v1alpha1.Link](),
		reflect.TypeFor[v1alpha1.Column](),
		reflect.TypeFor[v1alpha1.Version](),
	}
}

// wrapperFields names the one field of the message that carries a named
// slice type used as an element (repeated ParallelSteps steps = ...): the
// message holds the slice as `repeated <elem> <name> = 1`.
var wrapperFields = map[string]string{
	"ParallelSteps": "steps",
}

var intOrStrTy = reflect.TypeFor[intstr.IntOrString]()

type schema struct {
	pkg      string // the Go package whose structs become messages
	messages map[string]*message
	imports  map[string]bool // .proto files of the k8s messages used
	warnings []string
}

type message struct {
	goType string
	fields []field
}

type field struct {
	label  string // optional, repeated, or "" for a map
	typ    string
	name   string
	number int
}

// tag is a parsed `protobuf:"<wire>,<number>,<opt|rep>,name=<name>,..."`.
type tag struct {
	wire   string
	number int
	label  string
	name   string
}

func parseTag(s string) (tag, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 3 {
		return tag{}, fmt.Errorf("tag %q: want <wire>,<number>,<opt|rep>,name=<name>", s)
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n <= 0 {
		return tag{}, fmt.Errorf("tag %q: bad field number", s)
	}
	t := tag{wire: parts[0], number: n, label: parts[2]}
	for _, p := range parts[3:] {
		if v, ok := strings.CutPrefix(p, "name="); ok {
			t.name = v
		}
	}
	if t.name == "" {
		return tag{}, fmt.Errorf("tag %q: no name=", s)
	}
	return t, nil
}

// build walks the roots and returns one message per struct of the roots'
// package (the first root's) that they reach.
func build(rs []reflect.Type) (*schema, error) {
	s := &schema{pkg: rs[0].PkgPath(), messages: map[string]*message{}, imports: map[string]bool{}}
	var errs []error
	for _, t := range rs {
		if _, err := s.addStruct(t); err != nil {
			errs = append(errs, err)
		}
	}
	return s, errors.Join(errs...)
}

func (s *schema) addStruct(t reflect.Type) (string, error) {
	name := t.Name()
	if m, ok := s.messages[name]; ok {
		if m.goType != t.String() {
			return "", fmt.Errorf("message %s: both %s and %s", name, m.goType, t)
		}
		return name, nil
	}
	m := &message{goType: t.String()}
	s.messages[name] = m // before the fields: types may refer to themselves
	var errs []error
	for i := range t.NumField() {
		sf := t.Field(i)
		f, ok, err := s.structField(t, sf)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.%s: %w", t.Name(), sf.Name, err))
		} else if ok {
			m.fields = append(m.fields, f)
		}
	}
	slices.SortFunc(m.fields, func(a, b field) int { return cmp.Compare(a.number, b.number) })
	for i := 1; i < len(m.fields); i++ {
		if m.fields[i].number == m.fields[i-1].number {
			errs = append(errs, fmt.Errorf("%s: fields %s and %s share number %d",
				t.Name(), m.fields[i-1].name, m.fields[i].name, m.fields[i].number))
		}
	}
	seen := map[string]bool{}
	for _, f := range m.fields {
		if seen[f.name] {
			errs = append(errs, fmt.Errorf("%s: two fields named %s", t.Name(), f.name))
		}
		seen[f.name] = true
	}
	return name, errors.Join(errs...)
}

// structField is the proto field of one Go field; ok is false for a field
// that is not on the wire (no protobuf tag).
func (s *schema) structField(owner reflect.Type, sf reflect.StructField) (field, bool, error) {
	raw, tagged := sf.Tag.Lookup("protobuf")
	if !sf.IsExported() {
		if tagged {
			return field{}, false, errors.New("unexported field has a protobuf tag")
		}
		return field{}, false, nil
	}
	if !tagged {
		if j := sf.Tag.Get("json"); j != "-" && !(sf.Anonymous && strings.HasPrefix(j, ",")) {
			s.warnings = append(s.warnings, fmt.Sprintf("%s.%s has no protobuf tag: not on the wire", owner.Name(), sf.Name))
		}
		return field{}, false, nil
	}
	tg, err := parseTag(raw)
	if err != nil {
		return field{}, false, err
	}
	f := field{name: tg.name, number: tg.number}
	ft := sf.Type
	switch {
	case ft.Kind() == reflect.Map:
		f.typ, err = s.mapType(sf, tg)
	case isList(deref(ft)):
		if tg.label != "rep" {
			return field{}, false, fmt.Errorf("a list needs label rep, not %q", tg.label)
		}
		f.label = "repeated"
		f.typ, err = s.elemType(deref(ft).Elem(), tg.wire)
	default:
		if tg.label != "opt" {
			return field{}, false, fmt.Errorf("a single value needs label opt, not %q", tg.label)
		}
		f.label = "optional"
		f.typ, err = s.valueType(ft, tg.wire)
	}
	return f, err == nil, err
}

func (s *schema) mapType(sf reflect.StructField, tg tag) (string, error) {
	if tg.label != "rep" || tg.wire != "bytes" {
		return "", fmt.Errorf("a map needs bytes,<n>,rep, not %s,%s", tg.wire, tg.label)
	}
	kt, vt := sf.Type.Key(), sf.Type.Elem()
	if kt.Kind() != reflect.String {
		return "", fmt.Errorf("map key %s: only string keys are supported", kt)
	}
	valWire := "bytes"
	if raw, ok := sf.Tag.Lookup("protobuf_val"); ok {
		vtag, err := parseTag(raw)
		if err != nil {
			return "", fmt.Errorf("protobuf_val: %w", err)
		}
		valWire = vtag.wire
	}
	if isList(deref(vt)) || deref(vt).Kind() == reflect.Map {
		return "", fmt.Errorf("map value %s: a list or map cannot be a map value", vt)
	}
	v, err := s.valueType(vt, valWire)
	if err != nil {
		return "", fmt.Errorf("map value: %w", err)
	}
	return fmt.Sprintf("map<string, %s>", v), nil
}

// elemType is the type of a repeated field's element. A named slice
// element (ParallelSteps) becomes a message holding the slice.
func (s *schema) elemType(t reflect.Type, wire string) (string, error) {
	t = deref(t)
	if !isList(t) {
		return s.valueType(t, wire)
	}
	fieldName, ok := wrapperFields[t.Name()]
	if t.PkgPath() != s.pkg || !ok {
		return "", fmt.Errorf("a list of %s: only the named slices in wrapperFields can be elements", t)
	}
	if m, ok := s.messages[t.Name()]; ok {
		if m.goType != t.String() {
			return "", fmt.Errorf("message %s: both %s and %s", t.Name(), m.goType, t)
		}
		return t.Name(), nil
	}
	m := &message{goType: t.String()}
	s.messages[t.Name()] = m
	inner, err := s.elemType(t.Elem(), "bytes")
	if err != nil {
		return "", err
	}
	m.fields = []field{{label: "repeated", typ: inner, name: fieldName, number: 1}}
	return t.Name(), nil
}

// valueType is the proto type of a single value of Go type t carried with
// the given wire type.
func (s *schema) valueType(t reflect.Type, wire string) (string, error) {
	t = deref(t)
	want, typ := "", ""
	switch {
	case t == intOrStrTy && wire == "varint":
		return "int64", nil // Argo carries some IntOrStrings as plain integers
	case t.Kind() == reflect.Struct:
		want = "bytes"
		if wire != want {
			break
		}
		return s.messageType(t)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		want, typ = "bytes", "bytes"
	case t.Kind() == reflect.String:
		want, typ = "bytes", "string"
	case t.Kind() == reflect.Bool:
		want, typ = "varint", "bool"
	case t.Kind() == reflect.Int32:
		want, typ = "varint", "int32"
	case t.Kind() == reflect.Int64 || t.Kind() == reflect.Int:
		want, typ = "varint", "int64"
	case t.Kind() == reflect.Uint32:
		want, typ = "varint", "uint32"
	case t.Kind() == reflect.Uint64 || t.Kind() == reflect.Uint:
		want, typ = "varint", "uint64"
	case t.Kind() == reflect.Float64:
		want, typ = "fixed64", "double"
	case t.Kind() == reflect.Float32:
		want, typ = "fixed32", "float"
	default:
		return "", fmt.Errorf("type %s has no proto form", t)
	}
	if wire != want {
		return "", fmt.Errorf("type %s needs wire type %s, the tag says %s", t, want, wire)
	}
	return typ, nil
}

// messageType names the message of a struct: ours, or a Kubernetes one
// (its proto package is its Go import path with dots).
func (s *schema) messageType(t reflect.Type) (string, error) {
	switch pkg := t.PkgPath(); {
	case pkg == s.pkg:
		return s.addStruct(t)
	case strings.HasPrefix(pkg, "k8s.io/"):
		s.imports[pkg+"/generated.proto"] = true
		return strings.ReplaceAll(pkg, "/", ".") + "." + t.Name(), nil
	default:
		return "", fmt.Errorf("struct %s is neither in %s nor a Kubernetes type", t, s.pkg)
	}
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// isList reports a slice other than []byte.
func isList(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8
}
