package wirecodec

import (
	"fmt"
	"math"
	"reflect"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func malformed(name string, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrMalformed, name, fmt.Sprintf(format, args...))
}

func wrongType(f *field, got protowire.Type, want protowire.Type) error {
	return malformed(f.name, "field %d has wire type %d, want %d", f.num, got, want)
}

// decodeMessage merges the fields in b into struct v. depth is the nesting
// level of v (the top-level message is 1).
func decodeMessage(sp *structPlan, v reflect.Value, b []byte, depth int) error {
	if depth > MaxDepth {
		return tooDeep(sp.typ.String())
	}
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return malformed(sp.typ.String(), "tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		f := sp.lookup(num)
		if f == nil {
			if n = protowire.ConsumeFieldValue(num, wt, b); n < 0 {
				return malformed(sp.typ.String(), "unknown field %d: %v", num, protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		n, err := decodeField(f, v.Field(f.index), wt, b, depth)
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// decodeField decodes one record of field f (its tag already consumed) into
// v and returns the number of bytes used.
func decodeField(f *field, v reflect.Value, wt protowire.Type, b []byte, depth int) (int, error) {
	c := f.val
	switch f.card {
	case cardSingle:
		if wt != c.wt {
			return 0, wrongType(f, wt, c.wt)
		}
		return decodeValue(f, c, v, b, depth)
	case cardPtr:
		if wt != c.wt {
			return 0, wrongType(f, wt, c.wt)
		}
		if v.IsNil() {
			v.Set(reflect.New(c.typ))
		}
		return decodeValue(f, c, v.Elem(), b, depth)
	case cardRepeated:
		if wt == protowire.BytesType && c.kind.packable() {
			return decodePacked(f, v, b)
		}
		if wt != c.wt {
			return 0, wrongType(f, wt, c.wt)
		}
		ev := appendZero(v)
		if f.elemPtr {
			p := reflect.New(c.typ)
			ev.Set(p)
			ev = p.Elem()
		}
		return decodeValue(f, c, ev, b, depth)
	default:
		if wt != protowire.BytesType {
			return 0, wrongType(f, wt, protowire.BytesType)
		}
		return decodeEntry(f, v, b, depth)
	}
}

// appendZero grows slice s by one zero element and returns that element.
// Growth is amortised (append's), never sized from a length prefix.
func appendZero(s reflect.Value) reflect.Value {
	n := s.Len()
	if n == s.Cap() {
		s.Grow(1)
	}
	s.SetLen(n + 1)
	e := s.Index(n)
	e.SetZero()
	return e
}

func decodePacked(f *field, s reflect.Value, b []byte) (int, error) {
	p, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, malformed(f.name, "packed field %d: %v", f.num, protowire.ParseError(n))
	}
	// Each element is at least one byte, so the count is bounded by the input.
	var count int
	switch f.val.wt {
	case protowire.Fixed32Type:
		count = len(p) / 4
	case protowire.Fixed64Type:
		count = len(p) / 8
	default:
		for _, c := range p {
			if c < 0x80 {
				count++
			}
		}
	}
	if free := s.Cap() - s.Len(); count > free {
		s.Grow(count)
	}
	for len(p) > 0 {
		m, err := decodeScalar(f, f.val, appendZero(s), p)
		if err != nil {
			return 0, err
		}
		p = p[m:]
	}
	return n, nil
}

// decodeValue decodes one value of coder c (no tag) into settable v.
func decodeValue(f *field, c *coder, v reflect.Value, b []byte, depth int) (int, error) {
	if c.wt != protowire.BytesType {
		return decodeScalar(f, c, v, b)
	}
	p, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, malformed(f.name, "field %d: %v", f.num, protowire.ParseError(n))
	}
	var err error
	switch c.kind {
	case kindString:
		v.SetString(string(p))
	case kindBytes:
		v.SetBytes(append([]byte{}, p...)) // the input may be a reused buffer
	case kindMessage:
		err = decodeMessage(c.msg, v, p, depth+1)
	case kindList:
		err = decodeList(c.list, v, p, depth+1)
	default:
		if err = v.Addr().Interface().(unmarshaler).Unmarshal(p); err != nil {
			err = malformed(f.name, "%s: %v", c.typ, err)
		}
	}
	return n, err
}

func decodeScalar(f *field, c *coder, v reflect.Value, b []byte) (int, error) {
	var x uint64
	var n int
	switch c.wt {
	case protowire.Fixed32Type:
		var x32 uint32
		x32, n = protowire.ConsumeFixed32(b)
		x = uint64(x32)
	case protowire.Fixed64Type:
		x, n = protowire.ConsumeFixed64(b)
	default:
		x, n = protowire.ConsumeVarint(b)
	}
	if n < 0 {
		return 0, malformed(f.name, "field %d: %v", f.num, protowire.ParseError(n))
	}
	switch c.kind {
	case kindBool:
		v.SetBool(x != 0)
	case kindInt32:
		if c.enc == encZigzag32 {
			x = uint64(protowire.DecodeZigZag(x & math.MaxUint32))
		}
		v.SetInt(int64(int32(x)))
	case kindInt64:
		if c.enc == encZigzag64 {
			x = uint64(protowire.DecodeZigZag(x))
		}
		v.SetInt(int64(x))
	case kindUint32:
		v.SetUint(uint64(uint32(x)))
	case kindUint64:
		v.SetUint(x)
	case kindFloat32:
		v.SetFloat(float64(math.Float32frombits(uint32(x))))
	case kindFloat64:
		v.SetFloat(math.Float64frombits(x))
	case kindIntOrString:
		i := int64(x)
		if i < math.MinInt32 || i > math.MaxInt32 {
			return 0, malformed(f.name, "%d does not fit an IntOrString (int32)", i)
		}
		*v.Addr().Interface().(*intstr.IntOrString) = intstr.FromInt32(int32(i))
	}
	return n, nil
}

// decodeList decodes the message {repeated T = 1} that carries one element
// of a slice-of-slices field. A present element is a non-nil slice.
func decodeList(lf *field, v reflect.Value, b []byte, depth int) error {
	if depth > MaxDepth {
		return tooDeep(lf.name)
	}
	if v.IsNil() {
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	}
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return malformed(lf.name, "tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		if num == lf.num {
			n, err := decodeField(lf, v, wt, b, depth)
			if err != nil {
				return err
			}
			b = b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, wt, b); n < 0 {
			return malformed(lf.name, "unknown field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return nil
}

// decodeEntry decodes one map entry message and stores it in map m. A
// repeated key replaces the earlier entry; a missing key or value is zero
// (an empty message for *T values).
func decodeEntry(f *field, m reflect.Value, b []byte, depth int) (int, error) {
	p, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, malformed(f.name, "map entry: %v", protowire.ParseError(n))
	}
	if depth+1 > MaxDepth {
		return 0, tooDeep(f.name)
	}
	if m.IsNil() {
		m.Set(reflect.MakeMap(m.Type()))
	}
	kv := reflect.New(m.Type().Key()).Elem()
	vv := reflect.New(m.Type().Elem()).Elem()
	target := vv
	if f.elemPtr {
		vv.Set(reflect.New(f.val.typ))
		target = vv.Elem()
	}
	for len(p) > 0 {
		num, wt, k := protowire.ConsumeTag(p)
		if k < 0 {
			return 0, malformed(f.name, "map entry tag: %v", protowire.ParseError(k))
		}
		p = p[k:]
		c, dst := f.key, kv
		switch num {
		case f.keyNum:
		case f.valNum:
			c, dst = f.val, target
		default:
			if k = protowire.ConsumeFieldValue(num, wt, p); k < 0 {
				return 0, malformed(f.name, "map entry field %d: %v", num, protowire.ParseError(k))
			}
			p = p[k:]
			continue
		}
		if wt != c.wt {
			return 0, malformed(f.name, "map entry field %d has wire type %d, want %d", num, wt, c.wt)
		}
		k, err := decodeValue(f, c, dst, p, depth+1)
		if err != nil {
			return 0, err
		}
		p = p[k:]
	}
	m.SetMapIndex(kv, vv)
	return n, nil
}
