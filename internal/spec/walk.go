package spec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// walkStrings calls fn with the JSON path and value of every string inside v,
// following JSON field names. Values with their own JSON form (IntOrString,
// Item, ...) are visited as their JSON text. skip, when not nil, is asked
// about each struct field path and can prune it.
func walkStrings(v any, path string, skip func(path string) bool, fn func(path, s string)) {
	w := &stringWalker{skip: skip, fn: fn}
	w.walk(reflect.ValueOf(v), path, 0)
}

type stringWalker struct {
	skip func(string) bool
	fn   func(path, s string)
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

func (w *stringWalker) walk(v reflect.Value, path string, depth int) {
	if !v.IsValid() || depth > maxDepth {
		return
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.String && isCustomJSON(v) {
		if data, err := json.Marshal(v.Interface()); err == nil && strings.Contains(string(data), "{{") {
			w.fn(path, string(data))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		w.fn(path, v.String())
	case reflect.Struct:
		w.walkStruct(v, path, depth)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			w.walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1)
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			w.walk(v.MapIndex(k), joinPath(path, fmt.Sprint(k.Interface())), depth+1)
		}
	}
}

func (w *stringWalker) walkStruct(v reflect.Value, path string, depth int) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") || (sf.Anonymous && name == "") {
			w.walk(v.Field(i), path, depth+1)
			continue
		}
		if name == "" {
			name = sf.Name
		}
		sub := joinPath(path, name)
		if w.skip != nil && w.skip(sub) {
			continue
		}
		w.walk(v.Field(i), sub, depth+1)
	}
}

// isCustomJSON reports whether v marshals itself (IntOrString, Item, Time, ...).
func isCustomJSON(v reflect.Value) bool {
	t := v.Type()
	return t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler)
}
