package rest

import (
	"reflect"
	"strings"
	"sync"
)

// fieldInfo is one named field of a struct as encoding/json sees it: its
// JSON name, the protobuf tag's name when that differs, and the field
// indexes that reach it (more than one through flattened embedded structs).
type fieldInfo struct {
	json  string
	proto string
	index []int
	typ   reflect.Type
}

// structInfo is a struct type's named fields, in declaration order, and
// their index by JSON name and by proto name.
type structInfo struct {
	fields []fieldInfo
	byName map[string]int
}

var structCache sync.Map // reflect.Type -> *structInfo

// structOf returns t's named fields (t is a struct type). Embedded structs
// with no JSON name (`json:",inline"` or no tag) are flattened, as
// encoding/json does; a shallower field shadows a deeper one of the same
// name, and at the same depth the first declared wins.
func structOf(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{byName: map[string]int{}}
	type level struct {
		t     reflect.Type
		index []int
	}
	seen := map[reflect.Type]bool{t: true}
	for cur := []level{{t: t}}; len(cur) > 0; {
		var next []level
		var found []fieldInfo
		for _, l := range cur {
			for i := range l.t.NumField() {
				sf := l.t.Field(i)
				index := append(append([]int(nil), l.index...), i)
				if et, ok := flattened(sf); ok {
					if !seen[et] {
						seen[et] = true
						next = append(next, level{t: et, index: index})
					}
					continue
				}
				if f, ok := named(sf, index); ok {
					found = append(found, f)
				}
			}
		}
		for _, f := range found {
			if _, taken := si.byName[f.json]; taken {
				continue
			}
			si.fields = append(si.fields, f)
			n := len(si.fields) - 1
			si.byName[f.json] = n
			if _, taken := si.byName[f.proto]; f.proto != "" && !taken {
				si.byName[f.proto] = n
			}
		}
		cur = next
	}
	v, _ := structCache.LoadOrStore(t, si)
	return v.(*structInfo)
}

// flattened reports whether sf is an embedded struct whose fields
// encoding/json promotes, and returns that struct type.
func flattened(sf reflect.StructField) (reflect.Type, bool) {
	if !sf.Anonymous || jsonName(sf) != "" || sf.Tag.Get("json") == "-" {
		return nil, false
	}
	t := sf.Type
	if t.Kind() == reflect.Pointer {
		if !sf.IsExported() { // cannot be allocated through reflect
			return nil, false
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || isLeaf(t) {
		return nil, false
	}
	return t, true
}

// named returns sf as a named field, or false when encoding/json skips it.
func named(sf reflect.StructField, index []int) (fieldInfo, bool) {
	tag := sf.Tag.Get("json")
	if !sf.IsExported() || tag == "-" {
		return fieldInfo{}, false
	}
	f := fieldInfo{json: jsonName(sf), index: index, typ: sf.Type}
	if f.json == "" {
		f.json = sf.Name
	}
	if p := protoName(sf); p != f.json {
		f.proto = p
	}
	return f, true
}

func jsonName(sf reflect.StructField) string {
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	return name
}

// protoName is the name= part of a protobuf struct tag
// (`protobuf:"bytes,2,opt,name=list_options,json=listOptions,proto3"`).
func protoName(sf reflect.StructField) string {
	for part := range strings.SplitSeq(sf.Tag.Get("protobuf"), ",") {
		if name, ok := strings.CutPrefix(part, "name="); ok {
			return name
		}
	}
	return ""
}

// fieldPath is a dotted name resolved against a struct type: the field
// indexes of each segment, the field's type, and its canonical name (JSON
// names joined with dots).
type fieldPath struct {
	steps [][]int
	typ   reflect.Type
	name  string
}

// lookup resolves a dotted name ("listOptions.labelSelector") in struct type
// t, each segment by JSON name or proto name, through pointers and nested
// structs. It fails for a name no field has, or one that reaches inside a
// leaf value (a metav1.Time's fields).
func lookup(t reflect.Type, dotted string) (fieldPath, bool) {
	var p fieldPath
	var names []string
	cur := t
	for seg := range strings.SplitSeq(dotted, ".") {
		for cur.Kind() == reflect.Pointer {
			cur = cur.Elem()
		}
		if cur.Kind() != reflect.Struct || isLeaf(cur) {
			return fieldPath{}, false
		}
		si := structOf(cur)
		i, ok := si.byName[seg]
		if !ok {
			return fieldPath{}, false
		}
		f := si.fields[i]
		p.steps = append(p.steps, f.index)
		names = append(names, f.json)
		cur = f.typ
	}
	p.typ, p.name = cur, strings.Join(names, ".")
	return p, true
}

// fieldAt returns the field p names in root (an addressable struct). With
// alloc it allocates the nil pointers on the way; without, a nil pointer on
// the way returns false.
func fieldAt(root reflect.Value, p fieldPath, alloc bool) (reflect.Value, bool) {
	v := root
	for _, index := range p.steps {
		for j, i := range index {
			if j > 0 || v.Kind() == reflect.Pointer {
				var ok bool
				if v, ok = deref(v, alloc); !ok {
					return reflect.Value{}, false
				}
			}
			v = v.Field(i)
		}
	}
	return v, true
}

// deref follows pointers from v to a non-pointer value, allocating nil
// ones when alloc (and when they can be set).
func deref(v reflect.Value, alloc bool) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			if !alloc || !v.CanSet() {
				return reflect.Value{}, false
			}
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	return v, true
}
