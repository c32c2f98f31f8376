package expr

import (
	"fmt"
	"reflect"
	"regexp/syntax"
	"time"
)

// sizeKind says what sizeOf measures.
type sizeKind uint8

const (
	// memorySize is the memory a value takes.
	memorySize sizeKind = iota
	// textSize is the length of fmt.Sprint(value).
	textSize
	// jsonSize is the length of json.Marshal(value).
	jsonSize
	// prettySize is the length of json.MarshalIndent(value, "", "  ").
	prettySize
)

// sizeOf returns an upper bound of the size of v as kind. It stops walking
// once the bound passes limit, so its cost is bounded by limit, and it fails
// when v nests lists and maps deeper than maxValueDepth (every encoder and
// printer recurses once per level).
func sizeOf(v any, kind sizeKind, limit int64) (int64, error) {
	w := sizer{kind: kind, limit: limit}
	w.walk(reflect.ValueOf(v), 0)
	return w.n, w.err
}

type sizer struct {
	kind  sizeKind
	limit int64
	n     int64
	err   error
}

var timeType = reflect.TypeFor[time.Time]()

func (w *sizer) add(n int64) { w.n = satAdd(w.n, n) }

func (w *sizer) walk(v reflect.Value, depth int) {
	if w.err != nil || w.n > w.limit {
		return
	}
	if depth > maxValueDepth {
		w.err = fmt.Errorf("nests lists and maps more than %d levels deep", maxValueDepth)
		return
	}
	if !v.IsValid() {
		w.add(8)
		return
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		w.add(16)
		if !v.IsNil() {
			w.walk(v.Elem(), depth+1)
		}
	case reflect.String:
		w.add(w.text(int64(v.Len())))
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			w.add(w.text(2 * int64(v.Len())))
			return
		}
		w.add(w.container())
		for i := range v.Len() {
			w.add(w.element(depth))
			w.walk(v.Index(i), depth+1)
		}
	case reflect.Map:
		w.add(w.container())
		for it := v.MapRange(); it.Next(); {
			w.add(w.element(depth) + 16)
			w.walk(it.Key(), depth+1)
			w.walk(it.Value(), depth+1)
		}
	case reflect.Struct:
		w.structure(v, depth)
	default: // numbers, bool, funcs, channels
		w.add(32)
	}
}

func (w *sizer) structure(v reflect.Value, depth int) {
	if v.Type() == timeType {
		w.add(80)
		return
	}
	w.add(w.container())
	for i := range v.NumField() {
		w.add(w.element(depth) + w.text(int64(len(v.Type().Field(i).Name))))
		w.walk(v.Field(i), depth+1)
	}
}

// text is the size of a string of n bytes: JSON may escape every byte as
// \u00XX.
func (w *sizer) text(n int64) int64 {
	switch w.kind {
	case memorySize:
		return 16 + n
	case jsonSize, prettySize:
		return 2 + satMul(6, n)
	}
	return n
}

// container is the size of an empty list or map.
func (w *sizer) container() int64 {
	if w.kind == memorySize {
		return 48
	}
	return 8
}

// element is the size each element adds besides its own: a slot in memory,
// a separator in text, a newline and indent in pretty JSON.
func (w *sizer) element(depth int) int64 {
	switch w.kind {
	case memorySize:
		return 16
	case prettySize:
		return 4 + 2*int64(depth+1)
	}
	return 2
}

// decodedSize bounds the memory json.Unmarshal makes from text: its
// strings, and at most 64 bytes for each value, of which there are at most
// one more than the commas, colons and brackets.
func decodedSize(text string) int64 {
	values := int64(1)
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case ',', ':', '[', '{':
			values++
		}
	}
	return satAdd(2*int64(len(text)), satMul(64, values))
}

// regexpSize bounds the memory that compiling pattern takes: about 160
// bytes for each instruction, where a repetition x{n} counts x n times (Go
// allows n, and the product of nested counts, up to 1000), and 4 bytes for
// each rune of its character classes, which repetitions share. Patterns that
// do not parse cost their length: compiling them fails early.
func regexpSize(pattern string) int64 {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return int64(len(pattern))
	}
	insts, runes := regexpInsts(re, 0)
	return satAdd(satMul(160, insts), satMul(4, runes))
}

func regexpInsts(re *syntax.Regexp, depth int) (insts, runes int64) {
	if depth > maxValueDepth {
		return 1 << 40, 0
	}
	insts, runes = 1, int64(len(re.Rune))
	for _, sub := range re.Sub {
		i, r := regexpInsts(sub, depth+1)
		insts, runes = satAdd(insts, i), satAdd(runes, r)
	}
	if re.Op == syntax.OpRepeat {
		insts = satMul(insts, max(int64(re.Min), int64(re.Max), 1))
	}
	return insts, runes
}
