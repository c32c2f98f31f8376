package wirecodec

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// encoder writes backwards: the output so far is buf[pos:], and each
// message's contents are written before its length and tag, so a length is
// known without a sizing pass or a temporary buffer per message.
type encoder struct {
	buf     []byte
	pos     int
	depth   int
	scratch map[*field]*mapScratch
}

// encoders recycles encoders and their buffers: the output is copied out
// at its exact size, so a large message costs one allocation, not one per
// doubling of the buffer.
var encoders = sync.Pool{New: func() any { return new(encoder) }}

// maxPooledBuffer bounds the buffer an encoder keeps when it goes back to
// the pool.
const maxPooledBuffer = 32 << 20

func getEncoder() *encoder {
	e := encoders.Get().(*encoder)
	e.pos = len(e.buf)
	return e
}

func putEncoder(e *encoder) {
	e.depth, e.scratch = 0, nil // scratch holds the caller's values: drop it
	if cap(e.buf) > maxPooledBuffer {
		e.buf = nil
	}
	encoders.Put(e)
}

func (e *encoder) written() int { return len(e.buf) - e.pos }

// reserve makes room for n more bytes in front of the output.
func (e *encoder) reserve(n int) {
	if e.pos >= n {
		return
	}
	w := e.written()
	size := 2 * len(e.buf)
	if size < w+n {
		size = w + n
	}
	if size < 256 {
		size = 256
	}
	nb := make([]byte, size)
	copy(nb[size-w:], e.buf[e.pos:])
	e.buf, e.pos = nb, size-w
}

func (e *encoder) byte1(b byte) {
	e.reserve(1)
	e.pos--
	e.buf[e.pos] = b
}

func (e *encoder) varint(v uint64) {
	if v < 0x80 {
		e.byte1(byte(v))
		return
	}
	n := protowire.SizeVarint(v)
	e.reserve(n)
	e.pos -= n
	protowire.AppendVarint(e.buf[e.pos:e.pos], v) // writes in place: cap >= n
}

func (e *encoder) raw(p []byte) {
	e.reserve(len(p))
	e.pos -= len(p)
	copy(e.buf[e.pos:], p)
}

func (e *encoder) str(s string) {
	e.reserve(len(s))
	e.pos -= len(s)
	copy(e.buf[e.pos:], s)
}

func (e *encoder) fixed32(v uint32) {
	e.reserve(4)
	e.pos -= 4
	binary.LittleEndian.PutUint32(e.buf[e.pos:], v)
}

func (e *encoder) fixed64(v uint64) {
	e.reserve(8)
	e.pos -= 8
	binary.LittleEndian.PutUint64(e.buf[e.pos:], v)
}

func tooDeep(name string) error {
	return fmt.Errorf("%w: %s: more than %d nested messages", ErrTooDeep, name, MaxDepth)
}

// message writes the fields of struct v, last field first.
func (e *encoder) message(sp *structPlan, v reflect.Value) error {
	if e.depth++; e.depth > MaxDepth {
		return tooDeep(sp.typ.String())
	}
	for i := len(sp.fields) - 1; i >= 0; i-- {
		f := &sp.fields[i]
		if err := e.field(f, v.Field(f.index)); err != nil {
			return err
		}
	}
	e.depth--
	return nil
}

func (e *encoder) field(f *field, v reflect.Value) error {
	switch f.card {
	case cardSingle:
		return e.single(f, v)
	case cardPtr:
		if v.IsNil() {
			return nil
		}
		if err := e.value(f, f.val, v.Elem()); err != nil {
			return err
		}
		e.raw(f.tag)
		return nil
	case cardRepeated:
		return e.repeated(f, v)
	default:
		return e.mapField(f, v)
	}
}

// single writes a non-pointer field unless it is zero (scalars) or its
// encoding is empty (messages).
func (e *encoder) single(f *field, v reflect.Value) error {
	c := f.val
	switch c.kind {
	case kindMessage, kindDelegate:
		start := e.written()
		if err := e.body(f, c, v); err != nil {
			return err
		}
		n := e.written() - start
		if n == 0 {
			return nil
		}
		e.varint(uint64(n))
	case kindIntOrString:
		x, err := intOrStringValue(f, v)
		if err != nil || x == 0 {
			return err
		}
		e.varint(uint64(x))
	default:
		if isZero(c, v) {
			return nil
		}
		if err := e.value(f, c, v); err != nil {
			return err
		}
	}
	e.raw(f.tag)
	return nil
}

func isZero(c *coder, v reflect.Value) bool {
	switch c.kind {
	case kindBool:
		return !v.Bool()
	case kindInt32, kindInt64:
		return v.Int() == 0
	case kindUint32, kindUint64:
		return v.Uint() == 0
	case kindFloat32, kindFloat64:
		return math.Float64bits(v.Float()) == 0 // -0 is written, as protobuf does
	case kindString, kindBytes:
		return v.Len() == 0
	}
	return false
}

// value writes one value (with its length prefix when it has one) and no tag.
func (e *encoder) value(f *field, c *coder, v reflect.Value) error {
	switch c.kind {
	case kindBool:
		if v.Bool() {
			e.byte1(1)
		} else {
			e.byte1(0)
		}
	case kindInt32, kindInt64:
		e.signed(c.enc, v.Int())
	case kindUint32, kindUint64:
		switch x := v.Uint(); c.enc {
		case encFixed32:
			e.fixed32(uint32(x))
		case encFixed64:
			e.fixed64(x)
		default:
			e.varint(x)
		}
	case kindFloat32:
		e.fixed32(math.Float32bits(float32(v.Float())))
	case kindFloat64:
		e.fixed64(math.Float64bits(v.Float()))
	case kindString:
		s := v.String()
		e.str(s)
		e.varint(uint64(len(s)))
	case kindBytes:
		p := v.Bytes()
		e.raw(p)
		e.varint(uint64(len(p)))
	case kindIntOrString:
		x, err := intOrStringValue(f, v)
		if err != nil {
			return err
		}
		e.varint(uint64(x))
	default:
		start := e.written()
		if err := e.body(f, c, v); err != nil {
			return err
		}
		e.varint(uint64(e.written() - start))
	}
	return nil
}

func (e *encoder) signed(enc wireEnc, x int64) {
	switch enc {
	case encZigzag32, encZigzag64:
		e.varint(protowire.EncodeZigZag(x))
	case encFixed32:
		e.fixed32(uint32(x))
	case encFixed64:
		e.fixed64(uint64(x))
	default:
		e.varint(uint64(x)) // negative: 10 bytes, as protobuf writes int32 and int64
	}
}

// body writes the contents of a message-like value, without length or tag.
func (e *encoder) body(f *field, c *coder, v reflect.Value) error {
	switch c.kind {
	case kindMessage:
		return e.message(c.msg, v)
	case kindList:
		if e.depth++; e.depth > MaxDepth {
			return tooDeep(f.name)
		}
		err := e.repeated(c.list, v)
		e.depth--
		return err
	default:
		return e.delegate(f, v)
	}
}

// delegate lets a type that marshals itself write its own bytes.
func (e *encoder) delegate(f *field, v reflect.Value) error {
	if !v.CanAddr() {
		nv := reflect.New(v.Type()).Elem()
		nv.Set(v)
		v = nv
	}
	p := v.Addr().Interface()
	if m, ok := p.(sizedMarshaler); ok {
		e.reserve(m.Size())
		n, err := m.MarshalToSizedBuffer(e.buf[:e.pos])
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrValue, f.name, err)
		}
		e.pos -= n
		return nil
	}
	b, err := p.(marshaler).Marshal()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrValue, f.name, err)
	}
	e.raw(b)
	return nil
}

// repeated writes one record per element, last element first. A nil
// element of a []*T is written as an empty message.
func (e *encoder) repeated(f *field, v reflect.Value) error {
	c := f.val
	for j := v.Len() - 1; j >= 0; j-- {
		ev := v.Index(j)
		if f.elemPtr {
			if ev.IsNil() {
				e.byte1(0)
				e.raw(f.tag)
				continue
			}
			ev = ev.Elem()
		}
		if err := e.value(f, c, ev); err != nil {
			return err
		}
		e.raw(f.tag)
	}
	return nil
}

// mapField writes one entry message {key, value} per key, in ascending key
// order. Key and value are always written, even when zero.
func (e *encoder) mapField(f *field, m reflect.Value) error {
	n := m.Len()
	if n == 0 {
		return nil
	}
	if e.depth++; e.depth > MaxDepth {
		return tooDeep(f.name)
	}
	ms := e.takeScratch(f, m.Type(), n)
	defer e.putScratch(f, ms)
	ms.sort(f, m)
	for j := n - 1; j >= 0; j-- {
		i := ms.order[j]
		start := e.written()
		vv := ms.vals.Index(i)
		switch {
		case !f.elemPtr:
			if err := e.value(f, f.val, vv); err != nil {
				return err
			}
		case vv.IsNil():
			e.byte1(0)
		default:
			if err := e.value(f, f.val, vv.Elem()); err != nil {
				return err
			}
		}
		e.raw(f.valTag)
		if err := e.value(f, f.key, ms.keys.Index(i)); err != nil {
			return err
		}
		e.raw(f.keyTag)
		e.varint(uint64(e.written() - start))
		e.raw(f.tag)
	}
	e.depth--
	return nil
}

// mapScratch holds a map's entries while they are sorted and written. One
// is kept per map field for the length of a Marshal call, so the 10,000
// small maps inside 10,000 map values cost one allocation, not 40,000.
type mapScratch struct {
	keys, vals reflect.Value // slices of the map's key and value types; len(order) used
	order      []int
	strs       []string
}

func (e *encoder) takeScratch(f *field, t reflect.Type, n int) *mapScratch {
	ms := e.scratch[f]
	if ms == nil || ms.keys.Len() < n {
		c := max(n, 8)
		ms = &mapScratch{
			keys:  reflect.MakeSlice(reflect.SliceOf(t.Key()), c, c),
			vals:  reflect.MakeSlice(reflect.SliceOf(t.Elem()), c, c),
			order: make([]int, c),
		}
	}
	delete(e.scratch, f) // a recursive type may need another one meanwhile
	ms.order = ms.order[:n]
	return ms
}

func (e *encoder) putScratch(f *field, ms *mapScratch) {
	if e.scratch == nil {
		e.scratch = map[*field]*mapScratch{}
	}
	e.scratch[f] = ms
}

// sort copies m's entries into the scratch slices (SetIterKey/Value copy
// in place, without allocating) and orders them by ascending key.
func (ms *mapScratch) sort(f *field, m reflect.Value) {
	it := m.MapRange()
	for i := 0; it.Next(); i++ {
		ms.keys.Index(i).SetIterKey(it)
		ms.vals.Index(i).SetIterValue(it)
	}
	for i := range ms.order {
		ms.order[i] = i
	}
	keys, order := ms.keys, ms.order
	switch f.key.kind {
	case kindString:
		ms.strs = ms.strs[:0]
		for i := range order {
			ms.strs = append(ms.strs, keys.Index(i).String())
		}
		strs := ms.strs
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(strs[a], strs[b]) })
	case kindBool:
		slices.SortFunc(order, func(a, b int) int {
			x, y := keys.Index(a).Bool(), keys.Index(b).Bool()
			switch {
			case x == y:
				return 0
			case y:
				return -1
			}
			return 1
		})
	case kindInt32, kindInt64:
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(keys.Index(a).Int(), keys.Index(b).Int()) })
	default:
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(keys.Index(a).Uint(), keys.Index(b).Uint()) })
	}
}

// intOrStringValue is the integer an IntOrString stands for in a varint
// field (special case 1).
func intOrStringValue(f *field, v reflect.Value) (int64, error) {
	var ios *intstr.IntOrString
	if v.CanAddr() {
		ios = v.Addr().Interface().(*intstr.IntOrString)
	} else {
		x := v.Interface().(intstr.IntOrString)
		ios = &x
	}
	switch ios.Type {
	case intstr.Int:
		return int64(ios.IntVal), nil
	case intstr.String:
		x, err := strconv.ParseInt(ios.StrVal, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %s: %q is not an integer", ErrValue, f.name, ios.StrVal)
		}
		return x, nil
	}
	return 0, fmt.Errorf("%w: %s: IntOrString has invalid type %d", ErrValue, f.name, ios.Type)
}
