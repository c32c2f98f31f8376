package wirecodec

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// wireEnc is the encoding a tag names: the first element of a protobuf tag.
type wireEnc uint8

const (
	encVarint wireEnc = iota + 1
	encZigzag32
	encZigzag64
	encFixed32
	encFixed64
	encBytes
)

func (w wireEnc) String() string {
	switch w {
	case encVarint:
		return "varint"
	case encZigzag32:
		return "zigzag32"
	case encZigzag64:
		return "zigzag64"
	case encFixed32:
		return "fixed32"
	case encFixed64:
		return "fixed64"
	case encBytes:
		return "bytes"
	}
	return "invalid"
}

// wireType is the protowire.Type a value of this encoding travels as.
func (w wireEnc) wireType() protowire.Type {
	switch w {
	case encFixed32:
		return protowire.Fixed32Type
	case encFixed64:
		return protowire.Fixed64Type
	case encBytes:
		return protowire.BytesType
	}
	return protowire.VarintType
}

// tagInfo is a parsed `protobuf:"..."` (or protobuf_key / protobuf_val) tag.
type tagInfo struct {
	enc wireEnc
	num protowire.Number
}

// parseTag parses "bytes,1,opt,name=metadata,casttype=..." style tags. Only
// the wire encoding and the number matter on the wire: opt/rep/req and the
// options after them are informational (repetition follows the Go type, as
// some upstream tags say "opt" on slices).
func parseTag(s string) (tagInfo, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 {
		return tagInfo{}, fmt.Errorf("tag %q: want \"<wire>,<number>,...\"", s)
	}
	var ti tagInfo
	switch parts[0] {
	case "varint":
		ti.enc = encVarint
	case "zigzag32":
		ti.enc = encZigzag32
	case "zigzag64":
		ti.enc = encZigzag64
	case "fixed32":
		ti.enc = encFixed32
	case "fixed64":
		ti.enc = encFixed64
	case "bytes":
		ti.enc = encBytes
	default:
		return tagInfo{}, fmt.Errorf("tag %q: wire type %q not supported", s, parts[0])
	}
	n, err := strconv.ParseInt(parts[1], 10, 32)
	if err != nil || !protowire.Number(n).IsValid() {
		return tagInfo{}, fmt.Errorf("tag %q: invalid field number %q", s, parts[1])
	}
	ti.num = protowire.Number(n)
	return ti, nil
}
