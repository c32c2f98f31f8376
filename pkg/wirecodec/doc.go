// Package wirecodec encodes and decodes plain Go structs that carry
// golang/protobuf-style struct tags in protobuf wire format, by reflection,
// so that types written by hand (braid's pkg/apis/v1alpha1) travel over gRPC
// in exactly the bytes that protoc-generated code for the same .proto
// (Argo's gogo-generated types) writes and reads.
//
// # What this package owns
//
// The wire format of tagged Go types: how each Go kind maps to a wire type,
// which fields are written, in what order, and how input is merged into a
// value. It also owns the gRPC codec (Codec, CodecV2, Register) that puts
// this format on the "proto" content-subtype.
//
// It is generic: it must not import braid's internal packages or pkg/apis.
// It depends only on the standard library, google.golang.org/protobuf,
// google.golang.org/grpc and k8s.io/apimachinery (for IntOrString).
//
// # Tags
//
// A field is on the wire if and only if it has a `protobuf:"..."` tag (and
// the tag is not "-"). The tag's first element is the wire encoding and the
// second the field number: `protobuf:"bytes,1,opt,name=metadata"`. The
// rest (opt/rep/req, name=, casttype=, ...) is ignored: repetition follows
// the Go type. A field without a tag is not encoded, even an embedded one
// (metav1.TypeMeta `json:",inline"` in a Workflow is not on the wire, as in
// Argo and Kubernetes); an embedded struct with a tag is an ordinary message
// field. Tags on unexported fields are an error.
//
//	Go type                                   encodings allowed
//	bool                                      varint
//	int32                                     varint, zigzag32 (sint32), fixed32 (sfixed32)
//	int, int64                                varint, zigzag64 (sint64), fixed64 (sfixed64)
//	uint32                                    varint, fixed32
//	uint, uint64                              varint, fixed64
//	float32 / float64                         fixed32 / fixed64
//	string (any named string, json.Number)    bytes
//	[]byte (json.RawMessage)                  bytes
//	struct, *struct                           bytes (embedded message)
//	T whose *T has Marshal and Unmarshal      bytes (the type's own methods)
//	[]T, []*T (T a message)                   repeated T
//	[]S where S is a slice (not []byte)       repeated message {repeated elem = 1}
//	map[K]V                                   repeated entry {key, value}
//	intstr.IntOrString, *intstr.IntOrString   varint (special case 1) or bytes
//
// Named types follow their underlying kind. Negative int32 and int64 varints
// are 10 bytes, as protobuf writes them. A map field needs protobuf_key and
// protobuf_val tags (`protobuf_key:"bytes,1,opt,name=key"
// protobuf_val:"bytes,2,opt,name=value"`). Anything else (int8, interfaces,
// pointers to slices, pointers to scalars in slices, a struct with fields but
// no tags such as time.Time, duplicate numbers) is rejected with
// ErrUnsupported naming the type and field. A type's plan is built and
// checked once, on first use, and cached.
//
// # Presence
//
//   - A non-pointer scalar, string or []byte is written only when non-zero
//     (non-empty), like proto3 and unlike gogo's non-nullable fields; both
//     decode to the same Go value. Float -0 counts as non-zero.
//   - A non-nil pointer is always written, even to a zero value: *bool
//     false is written, and a non-nil *struct is written as an empty message
//     (zero length) when it has nothing in it, so presence survives
//     (`suspend: {}`). Decoding a message field sets its pointer, allocating
//     an empty struct even for zero length.
//   - A non-pointer struct (or self-marshalling type) is written only when
//     its encoding is not empty. metav1.Time's zero value encodes to nothing
//     and so is omitted; metav1.ObjectMeta always encodes its fields.
//   - Every element of a slice is written, zero or not, unpacked (as proto2
//     and gogo write). Decoding accepts packed and unpacked scalars. A nil
//     element of a []*T is written as an empty message.
//   - Map entries are written in ascending key order, so output is
//     deterministic; each entry always holds both key and value.
//   - Fields are written in ascending field-number order.
//
// # Special cases
//
//  1. An intstr.IntOrString (or pointer to one) whose tag says varint (Argo's
//     `optional int64 parallelism`) is written as the varint of its integer;
//     a string value that parses as a base-10 integer is written as that
//     integer, any other string is an ErrValue naming the field. Decoding
//     gives an Int IntOrString; a value outside int32 is ErrMalformed.
//  2. A repeated field whose element is itself a slice (Template.Steps is a
//     []ParallelSteps, ParallelSteps a []WorkflowStep) writes each element as
//     a message whose field 1 holds the inner elements, as Argo's
//     `message ParallelSteps { repeated WorkflowStep steps = 1; }`.
//
// # Types that marshal themselves
//
// A type T whose *T has Marshal() ([]byte, error) and Unmarshal([]byte)
// error (k8s.io/api and apimachinery: ObjectMeta, Time, Container,
// Quantity, IntOrString, ...) is delegated to those methods. When *T also
// has Size() and MarshalToSizedBuffer, the encoder reserves Size() bytes and
// lets it write in place, without a copy. Methods promoted from an embedded
// field do not count: a struct that embeds metav1.TypeMeta alone (and so
// gains TypeMeta's Marshal) is still encoded field by field.
//
// # Decoding hostile input
//
// Unmarshal returns an error, never panics, on any input: malformed varints,
// lengths beyond the input, invalid field numbers, a wire type that differs
// from a known field's (ErrMalformed), and nesting beyond MaxDepth (256)
// levels (ErrTooDeep). Unknown fields, groups included, are skipped.
// Nothing is allocated from a length prefix: slices grow as elements
// arrive, so memory is proportional to the input (times the size of an
// empty element).
//
// # gRPC
//
// Register installs CodecV2 as gRPC's "proto" codec. Values that are
// protobuf-go messages (or golang/protobuf v1 messages without their own
// Marshal/Unmarshal) still go to google.golang.org/protobuf/proto, with its
// reset-then-decode semantics; k8s.io types go to their own methods;
// everything else to Marshal and Unmarshal, which merge into the target.
//
// # Performance
//
// The encoder writes backwards into one buffer, so each message's length is
// known when its contents are done: there is no sizing pass and no
// temporary buffer per nested message. Encoders and their buffers are
// pooled and the result is copied out at its exact size (CodecV2 copies it
// into gRPC's buffer pool instead). A map's entries are sorted in scratch
// slices kept per map field for the length of one call, so 10,000 small
// maps cost no allocations. BenchmarkMarshal and BenchmarkUnmarshal compare
// a workflow-shaped value with 10,000 status nodes against encoding/json.
package wirecodec
