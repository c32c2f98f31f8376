package wirecodec

import (
	"errors"
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Node is recursive, for the depth limit.
type Node struct {
	Name  string          `protobuf:"bytes,1,opt,name=name"`
	Child *Node           `protobuf:"bytes,2,opt,name=child"`
	Kids  []Node          `protobuf:"bytes,3,rep,name=kids"`
	Steps []Nodes         `protobuf:"bytes,4,rep,name=steps"`
	ByKey map[string]Node `protobuf:"bytes,5,rep,name=byKey" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
}

type Nodes []Node

func tagOf(n protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, n, typ) }

func TestMalformed(t *testing.T) {
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	bt := protowire.BytesType
	tests := []struct {
		name string
		in   []byte
	}{
		{"truncated tag", []byte{0x80}},
		{"truncated varint", []byte{0x08}},
		{"truncated varint continuation", []byte{0x08, 0xff}},
		{"varint overflow (11 bytes)", cat([]byte{0x08}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})},
		{"varint overflow (10th byte > 1)", cat([]byte{0x08}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02})},
		{"length beyond input", []byte{0x0a, 0x05, 'a'}},
		{"huge length", cat([]byte{0x0a}, protowire.AppendVarint(nil, 1<<62))},
		{"truncated fixed64", cat(tagOf(14, protowire.Fixed64Type), []byte{1, 2, 3})},
		{"truncated fixed32", cat(tagOf(13, protowire.Fixed32Type), []byte{1})},
		{"field number 0", []byte{0x00, 0x01}},
		{"reserved wire type 6", []byte{0x0e}},
		{"end group at top level", tagOf(5, protowire.EndGroupType)},
		{"unterminated unknown group", cat(tagOf(99, protowire.StartGroupType), []byte{0x08, 0x01})},
		{"mismatched end group", cat(tagOf(99, protowire.StartGroupType), tagOf(98, protowire.EndGroupType))},
		{"wrong wire type for bytes field", cat(tagOf(1, protowire.VarintType), []byte{1})},
		{"wrong wire type for message field", cat(tagOf(26, protowire.VarintType), []byte{1})},
		{"wrong wire type for varint field", cat(tagOf(2, protowire.Fixed64Type), make([]byte, 8))},
		{"group for a known field", cat(tagOf(26, protowire.StartGroupType), tagOf(26, protowire.EndGroupType))},
		{"wrong wire type for map", cat(tagOf(37, protowire.VarintType), []byte{1})},
		{"wrong wire type in map entry", cat(tagOf(37, bt), []byte{2, 0x08, 0x01})},
		{"truncated map entry", cat(tagOf(37, bt), []byte{3, 0x0a, 0x05, 'a'})},
		{"truncated packed", cat(tagOf(30, bt), []byte{2, 0xff, 0xff})},
		{"truncated packed fixed", cat(tagOf(32, bt), []byte{3, 0, 0, 0})},
		{"huge packed length", cat(tagOf(30, bt), protowire.AppendVarint(nil, 1<<40))},
		{"error inside nested message", cat(tagOf(26, bt), []byte{2, 0x0a, 0x05})},
		{"error inside list element", cat(tagOf(43, bt), []byte{2, 0x0a, 0x05})},
		{"IntOrString beyond int32", cat(tagOf(44, protowire.VarintType), protowire.AppendVarint(nil, 1<<40))},
		{"k8s type rejects its bytes", cat(tagOf(47, bt), []byte{2, 0x0a, 0x05})},
		{"k8s Quantity rejects its string", cat(tagOf(52, bt), []byte{5, 0x0a, 0x03, 'x', 'y', 'z'})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var k Kinds
			err := Unmarshal(tc.in, &k)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

// nested returns n levels of Node.Child around an empty message, written
// outside in (wrapping inside out would copy O(n²) bytes).
func nested(n int) []byte {
	lens := make([]int, n+1) // lens[i]: length of the message i levels deep from the bottom
	for i := 1; i <= n; i++ {
		lens[i] = 1 + protowire.SizeVarint(uint64(lens[i-1])) + lens[i-1]
	}
	b := make([]byte, 0, lens[n])
	for i := n; i >= 1; i-- {
		b = protowire.AppendVarint(append(b, tagOf(2, protowire.BytesType)...), uint64(lens[i-1]))
	}
	return b
}

func TestDepthLimit(t *testing.T) {
	// The top-level message is level 1: MaxDepth-1 nested children fit.
	if err := Unmarshal(nested(MaxDepth-1), &Node{}); err != nil {
		t.Fatalf("depth %d: %v", MaxDepth, err)
	}
	for _, n := range []int{MaxDepth, 10000, 100000} {
		if err := Unmarshal(nested(n), &Node{}); !errors.Is(err, ErrTooDeep) {
			t.Errorf("%d levels: err = %v, want ErrTooDeep", n+1, err)
		}
	}
	// The same limit through slices of slices and map values.
	var viaLists, viaMaps []byte
	for range MaxDepth {
		viaLists = protowire.AppendBytes(tagOf(4, protowire.BytesType),
			protowire.AppendBytes(tagOf(1, protowire.BytesType), viaLists))
		viaMaps = protowire.AppendBytes(tagOf(5, protowire.BytesType),
			protowire.AppendBytes(tagOf(2, protowire.BytesType), viaMaps))
	}
	for name, b := range map[string][]byte{"lists": viaLists, "maps": viaMaps} {
		if err := Unmarshal(b, &Node{}); !errors.Is(err, ErrTooDeep) {
			t.Errorf("%s: err = %v, want ErrTooDeep", name, err)
		}
	}

	// What Marshal writes, Unmarshal reads: the encoder has the same limit.
	deep := &Node{}
	for range MaxDepth - 1 {
		deep = &Node{Child: deep}
	}
	b, err := Marshal(deep)
	if err != nil {
		t.Fatal(err)
	}
	if err := Unmarshal(b, &Node{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Marshal(&Node{Child: deep}); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("Marshal one level deeper: err = %v, want ErrTooDeep", err)
	}
}

// A pointer cycle is an error, not a stack overflow.
func TestMarshalCycle(t *testing.T) {
	n := &Node{Name: "loop"}
	n.Child = n
	if _, err := Marshal(n); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("err = %v, want ErrTooDeep", err)
	}
}

// Decoding allocates in proportion to the input, never from a length prefix.
func TestNoAllocationFromLengthPrefix(t *testing.T) {
	inputs := [][]byte{
		append(tagOf(29, protowire.BytesType), protowire.AppendVarint(nil, 1<<31)...), // repeated string
		append(tagOf(30, protowire.BytesType), protowire.AppendVarint(nil, 1<<31)...), // packed int64
		append(tagOf(34, protowire.BytesType), protowire.AppendVarint(nil, 1<<31)...), // repeated message
		append(tagOf(37, protowire.BytesType), protowire.AppendVarint(nil, 1<<31)...), // map
		append(tagOf(15, protowire.BytesType), protowire.AppendVarint(nil, 1<<31)...), // bytes
	}
	for _, in := range inputs {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var k Kinds
		if err := Unmarshal(in, &k); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: err = %v", in, err)
		}
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("%x: allocated %d bytes", in, d)
		}
	}
	// 100,000 packed varints of one byte each: memory follows the input.
	packed := make([]byte, 100000)
	in := protowire.AppendBytes(tagOf(30, protowire.BytesType), packed)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var k Kinds
	if err := Unmarshal(in, &k); err != nil || len(k.RI) != len(packed) {
		t.Fatalf("len %d, err %v", len(k.RI), err)
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 2*8*uint64(len(packed)) {
		t.Errorf("100,000 int64s took %d bytes", d)
	}
}
