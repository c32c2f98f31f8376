package wirecodec

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// FuzzMsg nests every kind (Kinds, with its maps, repeated fields and k8s
// types) inside recursive messages, maps and slices of slices.
type FuzzMsg struct {
	K      Kinds               `protobuf:"bytes,1,opt,name=k"`
	Child  *FuzzMsg            `protobuf:"bytes,2,opt,name=child"`
	Kids   []FuzzMsg           `protobuf:"bytes,3,rep,name=kids"`
	ByName map[string]*FuzzMsg `protobuf:"bytes,4,rep,name=byName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Steps  []FuzzList          `protobuf:"bytes,5,rep,name=steps"`
	Tree   Node                `protobuf:"bytes,6,opt,name=tree"`
}

type FuzzList []FuzzMsg

// FuzzUnmarshal: no input makes Unmarshal panic; whatever it accepts,
// Marshal writes and Unmarshal reads again, and a second round trip is
// byte-stable.
func FuzzUnmarshal(f *testing.F) {
	seed, err := Marshal(&FuzzMsg{
		K:      *sampleKinds(),
		Child:  &FuzzMsg{Kids: []FuzzMsg{{}}},
		ByName: map[string]*FuzzMsg{"a": {Steps: []FuzzList{{{}}}}},
		Steps:  []FuzzList{{{K: Kinds{S: "x"}}}, {}},
		Tree:   Node{Name: "n", Child: &Node{}, Steps: []Nodes{{{}}}},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add(nested(300))
	f.Add(protowire.AppendTag(nil, 99, protowire.StartGroupType))
	f.Fuzz(func(t *testing.T, in []byte) {
		var m FuzzMsg
		if err := Unmarshal(in, &m); err != nil {
			return
		}
		b1, err := Marshal(&m)
		if err != nil {
			t.Fatalf("accepted input does not marshal: %v", err)
		}
		var m2 FuzzMsg
		if err := Unmarshal(b1, &m2); err != nil {
			t.Fatalf("own output does not unmarshal: %v", err)
		}
		b2, err := Marshal(&m2)
		if err != nil {
			t.Fatal(err)
		}
		var m3 FuzzMsg
		if err := Unmarshal(b2, &m3); err != nil {
			t.Fatal(err)
		}
		b3, err := Marshal(&m3)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b2, b3) {
			t.Fatalf("second round trip changed the bytes:\n%x\n%x", b2, b3)
		}
	})
}
