package spec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// walkStrings calls fn with the JSON path and value of every string inside v,
// following JSON field names. Values with their own JSON form (IntOrString,
// Item, ...) are visited as their JSON text. The path is handed over
// unformatted: fn calls its String method only when it reports something.
// skip, when not nil, is asked about each field of v's own struct (by JSON
// name) and can prune it.
func walkStrings(v any, path string, skip func(field string) bool, fn func(path *fieldPath, s string)) {
	w := walkers.Get().(*stringWalker)
	w.skip, w.fn, w.path.base = skip, fn, path
	w.walk(reflect.ValueOf(v), 0)
	w.skip, w.fn, w.path = nil, nil, fieldPath{segs: w.path.segs[:0]}
	walkers.Put(w)
}

// walkers keeps walkers, and the room of their paths, from one walk to the
// next: a big spec has a walk for each of its templates.
var walkers = sync.Pool{New: func() any { return &stringWalker{} }}

type stringWalker struct {
	skip func(string) bool
	fn   func(*fieldPath, string)
	path fieldPath
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

func (w *stringWalker) walk(v reflect.Value, depth int) {
	if !v.IsValid() || depth > maxDepth {
		return
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.String && isCustomJSON(v.Type()) {
		if data, err := json.Marshal(v.Interface()); err == nil && strings.Contains(string(data), "{{") {
			w.fn(&w.path, string(data))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		w.fn(&w.path, v.String())
	case reflect.Struct:
		w.walkStruct(v, depth)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			w.path.pushIndex(i)
			w.walk(v.Index(i), depth+1)
			w.path.pop()
		}
	case reflect.Map:
		if v.Len() == 0 {
			return
		}
		type entry struct {
			name string
			key  reflect.Value
		}
		entries := make([]entry, 0, v.Len())
		for _, k := range v.MapKeys() {
			entries = append(entries, entry{fmt.Sprint(k.Interface()), k})
		}
		slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
		for _, e := range entries {
			w.path.push(e.name)
			w.walk(v.MapIndex(e.key), depth+1)
			w.path.pop()
		}
	}
}

func (w *stringWalker) walkStruct(v reflect.Value, depth int) {
	for _, f := range jsonFieldsOf(v.Type()) {
		if f.inline {
			w.walk(v.Field(f.index), depth+1)
			continue
		}
		if w.skip != nil && len(w.path.segs) == 0 && w.skip(f.name) {
			continue
		}
		w.path.push(f.name)
		w.walk(v.Field(f.index), depth+1)
		w.path.pop()
	}
}

// jsonField is an exported struct field as encoding/json sees it: by its
// JSON name, or inline (its fields are the struct's own).
type jsonField struct {
	index  int
	name   string
	inline bool
}

// jsonFields caches jsonFieldsOf: the walk visits the same few types
// thousands of times in a big spec.
var jsonFields sync.Map // reflect.Type -> []jsonField

func jsonFieldsOf(t reflect.Type) []jsonField {
	if fs, ok := jsonFields.Load(t); ok {
		return fs.([]jsonField)
	}
	var fs []jsonField
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
			fs = append(fs, jsonField{index: i, inline: true})
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fs = append(fs, jsonField{index: i, name: name})
	}
	jsonFields.Store(t, fs)
	return fs
}

// isCustomJSON reports whether values of t marshal themselves (IntOrString, Item, Time, ...).
func isCustomJSON(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler)
}
