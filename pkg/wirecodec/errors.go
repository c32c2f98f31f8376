package wirecodec

import "errors"

// Sentinel errors. Every error this package returns wraps exactly one of
// them (test with errors.Is) and adds the Go type and field it concerns.
var (
	// ErrUnsupported is returned by Marshal and Unmarshal when a type's plan
	// cannot be built: a malformed protobuf tag, a duplicate field number, a
	// Go type that does not fit the tag's wire type, a map without
	// protobuf_key/protobuf_val tags, or a top-level value that is not a
	// struct (or a pointer to one).
	ErrUnsupported = errors.New("wirecodec: unsupported type")

	// ErrMalformed is returned by Unmarshal when the input is not valid
	// protobuf wire data for the target type: a truncated or overlong
	// varint, a length beyond the input, an invalid field number, a wire
	// type that differs from a known field's, or a value out of range for
	// its Go field (an IntOrString varint beyond int32).
	ErrMalformed = errors.New("wirecodec: malformed input")

	// ErrTooDeep is returned when messages nest more than MaxDepth levels,
	// by Unmarshal on hostile input and by Marshal on a value with a pointer
	// cycle.
	ErrTooDeep = errors.New("wirecodec: nesting too deep")

	// ErrValue is returned by Marshal when a Go value cannot be written with
	// its field's wire type: an IntOrString string that is not an integer in
	// a varint field, or an error from a type's own Marshal method.
	ErrValue = errors.New("wirecodec: value cannot be encoded")
)
