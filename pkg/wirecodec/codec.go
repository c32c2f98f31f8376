package wirecodec

import (
	"fmt"
	"reflect"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// MaxDepth is the deepest nesting of messages that Marshal writes and
// Unmarshal reads; the top-level message is level 1, and each embedded
// message, map entry and slice-of-slices element adds one. Deeper input is
// rejected with ErrTooDeep rather than risking unbounded recursion. Types
// that marshal themselves (k8s.io types) nest within their own level.
const MaxDepth = 256

// Name is the gRPC content-subtype this package's codecs register under.
const Name = "proto"

// Marshal encodes v, a tagged struct or a pointer to one, in protobuf wire
// format. A nil pointer encodes as an empty message. A type whose pointer
// has its own Marshal/Unmarshal methods is encoded by those methods.
func Marshal(v any) ([]byte, error) {
	var out []byte
	err := encode(v, func(b []byte) { out = append([]byte{}, b...) })
	return out, err
}

// encode encodes v and hands the bytes to emit, which must copy them: they
// live in a pooled buffer that is reused once encode returns.
func encode(v any, emit func([]byte)) error {
	rv := reflect.ValueOf(v)
	switch {
	case !rv.IsValid():
		return fmt.Errorf("%w: Marshal(nil)", ErrUnsupported)
	case rv.Kind() == reflect.Pointer:
		if rv.IsNil() {
			emit(nil)
			return nil
		}
		rv = rv.Elem()
	default:
		nv := reflect.New(rv.Type()).Elem()
		nv.Set(rv)
		rv = nv
	}
	sp, err := planFor(rv.Type())
	if err != nil {
		return err
	}
	if sp.self {
		b, err := rv.Addr().Interface().(marshaler).Marshal()
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrValue, sp.typ, err)
		}
		emit(b)
		return nil
	}
	e := getEncoder()
	defer putEncoder(e)
	if err := e.message(sp, rv); err != nil {
		return err
	}
	emit(e.buf[e.pos:])
	return nil
}

// Unmarshal decodes protobuf wire data into v, a non-nil pointer to a tagged
// struct, merging as protobuf does: repeated fields and maps append to what
// v holds, embedded messages merge, scalars take the last value seen.
// Unknown fields are skipped. []byte values are copied, so b may be reused.
func Unmarshal(b []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("%w: Unmarshal needs a non-nil pointer, got %T", ErrUnsupported, v)
	}
	sp, err := planFor(rv.Type().Elem())
	if err != nil {
		return err
	}
	if sp.self {
		if err := rv.Interface().(unmarshaler).Unmarshal(b); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrMalformed, sp.typ, err)
		}
		return nil
	}
	return decodeMessage(sp, rv.Elem(), b, 1)
}

// Size returns the length of Marshal(v). It encodes v to find out: call
// Marshal instead when the bytes are needed too.
func Size(v any) (int, error) {
	b, err := Marshal(v)
	return len(b), err
}

// protoMessage returns v as a protobuf-go message when it is one (or a
// golang/protobuf v1 message without its own Marshal/Unmarshal methods).
func protoMessage(v any) proto.Message {
	switch m := v.(type) {
	case protoadapt.MessageV2:
		return m
	case marshaler:
		if _, ok := v.(unmarshaler); ok {
			return nil // gogo-generated (k8s.io): its own methods are faster and canonical
		}
	}
	if m, ok := v.(protoadapt.MessageV1); ok {
		return protoadapt.MessageV2Of(m)
	}
	return nil
}

// Codec is a gRPC encoding.Codec (the v1 interface) named "proto": protobuf-go
// messages go to google.golang.org/protobuf/proto, everything else to this
// package's Marshal and Unmarshal.
type Codec struct{}

var _ encoding.Codec = Codec{}

// Name returns "proto".
func (Codec) Name() string { return Name }

// Marshal encodes v.
func (Codec) Marshal(v any) ([]byte, error) {
	if m := protoMessage(v); m != nil {
		return proto.Marshal(m)
	}
	return Marshal(v)
}

// Unmarshal decodes data into v.
func (Codec) Unmarshal(data []byte, v any) error {
	if m := protoMessage(v); m != nil {
		return proto.Unmarshal(data, m)
	}
	return Unmarshal(data, v)
}

// CodecV2 is Codec for gRPC's encoding.CodecV2 interface. It saves a copy on
// receive: a message that arrived in several buffers is joined in a pooled
// buffer, decoded (every string and []byte is copied out), and the buffer is
// returned to the pool.
type CodecV2 struct{}

var _ encoding.CodecV2 = CodecV2{}

// Name returns "proto".
func (CodecV2) Name() string { return Name }

// Marshal encodes v into one buffer, taken from gRPC's buffer pool when the
// message is large enough for pooling (gRPC returns it after sending).
func (CodecV2) Marshal(v any) (mem.BufferSlice, error) {
	if m := protoMessage(v); m != nil {
		b, err := proto.Marshal(m)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	var out mem.BufferSlice
	err := encode(v, func(b []byte) {
		if mem.IsBelowBufferPoolingThreshold(len(b)) {
			out = mem.BufferSlice{mem.SliceBuffer(append([]byte{}, b...))}
			return
		}
		pool := mem.DefaultBufferPool()
		buf := pool.Get(len(b))
		copy(*buf, b)
		out = mem.BufferSlice{mem.NewBuffer(buf, pool)}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Unmarshal decodes data into v.
func (CodecV2) Unmarshal(data mem.BufferSlice, v any) error {
	if len(data) == 1 {
		return Codec{}.Unmarshal(data[0].ReadOnlyData(), v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return Codec{}.Unmarshal(buf.ReadOnlyData(), v)
}

// Register installs CodecV2 as gRPC's "proto" codec, replacing the default
// one for every client and server in the process. Like
// encoding.RegisterCodecV2 it is not safe to call concurrently with RPCs:
// call it from main or an init function.
func Register() {
	encoding.RegisterCodecV2(CodecV2{})
}
