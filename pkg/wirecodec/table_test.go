package wirecodec

import (
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type (
	pStr struct {
		V string `protobuf:"bytes,1,opt,name=v"`
	}
	pStrP struct {
		V *string `protobuf:"bytes,1,opt,name=v"`
	}
	pBool struct {
		V bool `protobuf:"varint,1,opt,name=v"`
	}
	pBoolP struct {
		V *bool `protobuf:"varint,1,opt,name=v"`
	}
	pI32 struct {
		V int32 `protobuf:"varint,1,opt,name=v"`
	}
	pI64 struct {
		V int64 `protobuf:"varint,1,opt,name=v"`
	}
	pZ32 struct {
		V int32 `protobuf:"zigzag32,1,opt,name=v"`
	}
	pZ64 struct {
		V int64 `protobuf:"zigzag64,1,opt,name=v"`
	}
	pU32 struct {
		V uint32 `protobuf:"varint,1,opt,name=v"`
	}
	pF64 struct {
		V float64 `protobuf:"fixed64,1,opt,name=v"`
	}
	pF32 struct {
		V float32 `protobuf:"fixed32,1,opt,name=v"`
	}
	pSF32 struct {
		V int32 `protobuf:"fixed32,1,opt,name=v"`
	}
	pBytes struct {
		V []byte `protobuf:"bytes,1,opt,name=v"`
	}
	pDur struct {
		V time.Duration `protobuf:"varint,1,opt,name=v"`
	}
	pMsg struct {
		V Inner `protobuf:"bytes,1,opt,name=v"`
	}
	pMsgP struct {
		V *Inner `protobuf:"bytes,1,opt,name=v"`
	}
	pEmptyP struct {
		V *Empty `protobuf:"bytes,1,opt,name=v"`
	}
	pTime struct {
		V metav1.Time `protobuf:"bytes,1,opt,name=v"`
	}
	pTimeP struct {
		V *metav1.Time `protobuf:"bytes,1,opt,name=v"`
	}
	pRS struct {
		V []string `protobuf:"bytes,1,rep,name=v"`
	}
	pRI struct {
		V []int64 `protobuf:"varint,1,rep,name=v"`
	}
	pRF struct {
		V []float32 `protobuf:"fixed32,1,rep,name=v"`
	}
	pRPMsg struct {
		V []*Inner `protobuf:"bytes,1,rep,name=v"`
	}
	pMap struct {
		V map[string]string `protobuf:"bytes,1,rep,name=v" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	}
	pMapI struct {
		V map[int64]int32 `protobuf:"bytes,1,rep,name=v" protobuf_key:"zigzag64,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
	}
	pMapP struct {
		V map[string]*Inner `protobuf:"bytes,1,rep,name=v" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	}
	pLists struct {
		V []InnerList `protobuf:"bytes,11,opt,name=v"`
	} // "opt" on a slice, as Argo's tag says
	pPar struct {
		V *intstr.IntOrString `protobuf:"varint,23,opt,name=parallelism"`
	}
	pParV struct {
		V intstr.IntOrString `protobuf:"varint,1,opt,name=v"`
	}
	// Fields declared out of number order are written in number order.
	pOrder struct {
		C string `protobuf:"bytes,3,opt,name=c"`
		A string `protobuf:"bytes,1,opt,name=a"`
		B string `protobuf:"bytes,2,opt,name=b"`
	}
	pEmbed struct {
		metav1.TypeMeta `json:",inline"`
		Embedded        `protobuf:"bytes,2,opt,name=embedded"`
	}
)

func TestMarshalTable(t *testing.T) {
	negZero := math.Copysign(0, -1)
	tests := []struct {
		name string
		in   any
		want string // hex
	}{
		{"string zero omitted", &pStr{}, ""},
		{"string", &pStr{"a"}, "0a0161"},
		{"*string empty written", &pStrP{ptr("")}, "0a00"},
		{"*string nil omitted", &pStrP{}, ""},
		{"bool false omitted", &pBool{}, ""},
		{"bool true", &pBool{true}, "0801"},
		{"*bool false written", &pBoolP{ptr(false)}, "0800"},
		{"int32 -1 is 10 bytes", &pI32{-1}, "08ffffffffffffffffff01"},
		{"int64 300", &pI64{300}, "08ac02"},
		{"sint32 -1", &pZ32{-1}, "0801"},
		{"sint64 -2", &pZ64{-2}, "0803"},
		{"uint32 max", &pU32{math.MaxUint32}, "08ffffffff0f"},
		{"double 1", &pF64{1}, "09000000000000f03f"},
		{"double -0 written", &pF64{negZero}, "090000000000000080"},
		{"float 1", &pF32{1}, "0d0000803f"},
		{"sfixed32 -2", &pSF32{-2}, "0dfeffffff"},
		{"bytes empty omitted", &pBytes{[]byte{}}, ""},
		{"bytes", &pBytes{[]byte{0}}, "0a0100"},
		{"named int (time.Duration)", &pDur{time.Second}, "088094ebdc03"},
		{"struct zero omitted", &pMsg{}, ""},
		{"struct", &pMsg{Inner{Name: "a"}}, "0a030a0161"},
		{"*struct empty written", &pMsgP{&Inner{}}, "0a00"},
		{"*struct{} written", &pEmptyP{&Empty{}}, "0a00"},
		{"metav1.Time zero omitted", &pTime{}, ""},
		{"*metav1.Time zero written empty", &pTimeP{&metav1.Time{}}, "0a00"},
		{"metav1.Time", &pTime{metav1.Unix(1, 0)}, "0a0408011000"},
		{"repeated string keeps empties", &pRS{[]string{"", "a"}}, "0a000a0161"},
		{"repeated int64 unpacked", &pRI{[]int64{0, 1}}, "08000801"},
		{"repeated empty omitted", &pRI{[]int64{}}, ""},
		{"repeated float", &pRF{[]float32{0}}, "0d00000000"},
		{"repeated nil *struct is empty message", &pRPMsg{[]*Inner{nil, {Count: 1}}}, "0a000a021001"},
		{"map sorted, key and value always", &pMap{map[string]string{"b": "", "": "x"}},
			"0a050a001201780a050a01621200"},
		{"map int keys sorted numerically", &pMapI{map[int64]int32{1: 0, -1: 0}},
			"0a04080110000a0408021000"},
		{"map nil *struct value", &pMapP{map[string]*Inner{"a": nil}}, "0a050a01611200"},
		{"slice of slices", &pLists{[]InnerList{{{Name: "a"}}, {}}}, "5a050a030a01615a00"},
		{"IntOrString varint int", &pPar{ptr(intstr.FromInt32(3))}, "b80103"},
		{"IntOrString varint zero behind pointer", &pPar{ptr(intstr.FromInt32(0))}, "b80100"},
		{"IntOrString varint string", &pPar{ptr(intstr.FromString("-2"))}, "b801feffffffffffffffff01"},
		{"IntOrString varint zero omitted", &pParV{}, ""},
		{"number order", &pOrder{C: "c", A: "a", B: "b"}, "0a01611201621a0163"},
		{"untagged embedded skipped, tagged embedded is a field",
			&pEmbed{TypeMeta: metav1.TypeMeta{Kind: "K"}, Embedded: Embedded{E: "e"}}, "12030a0165"},
		{"nil pointer is empty", (*pStr)(nil), ""},
		{"struct value", pStr{"a"}, "0a0161"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if h := hex.EncodeToString(got); h != tc.want {
				t.Errorf("got %s, want %s", h, tc.want)
			}
			n, err := Size(tc.in)
			if err != nil || n != len(got) {
				t.Errorf("Size = %d, %v; want %d", n, err, len(got))
			}
			if reflect.TypeOf(tc.in).Kind() != reflect.Pointer || reflect.ValueOf(tc.in).IsNil() {
				return
			}
			// Everything in the table round-trips to an equal value.
			back := reflect.New(reflect.TypeOf(tc.in).Elem())
			if err := Unmarshal(got, back.Interface()); err != nil {
				t.Fatal(err)
			}
			if !roundTripEqual(tc.in, back.Interface()) {
				t.Errorf("round trip: got %+v, want %+v", back.Elem(), reflect.ValueOf(tc.in).Elem())
			}
		})
	}
}

// roundTripEqual is DeepEqual after the documented normalisations: untagged
// fields are not on the wire, empty []byte and slices decode as absent, nil
// *T elements decode as empty messages, and IntOrString varints decode as Int.
func roundTripEqual(want, got any) bool {
	switch w := want.(type) {
	case *pEmbed:
		return got.(*pEmbed).Embedded == w.Embedded
	case *pBytes, *pRI:
		return reflect.ValueOf(got).Elem().Field(0).Len() == reflect.ValueOf(w).Elem().Field(0).Len()
	case *pRPMsg:
		g := got.(*pRPMsg)
		return len(g.V) == 2 && *g.V[0] == Inner{} && *g.V[1] == *w.V[1]
	case *pMapP:
		return *got.(*pMapP).V["a"] == Inner{}
	case *pPar:
		x, _ := intOrStringValue(&field{}, reflect.ValueOf(w.V).Elem())
		return *got.(*pPar).V == intstr.FromInt32(int32(x))
	case *pF64:
		return math.Float64bits(got.(*pF64).V) == math.Float64bits(w.V)
	}
	return reflect.DeepEqual(want, got)
}

func TestIntOrStringNotAnInteger(t *testing.T) {
	_, err := Marshal(&pPar{ptr(intstr.FromString("50%"))})
	if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "pPar.V") {
		t.Fatalf("err = %v, want ErrValue naming pPar.V", err)
	}
}

func TestUnmarshalMerge(t *testing.T) {
	tag := func(n protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, n, typ) }
	var b []byte
	b = append(b, tag(29, protowire.BytesType)...) // rs: "a"
	b = protowire.AppendString(b, "a")
	b = append(b, tag(1, protowire.BytesType)...) // s: "first"
	b = protowire.AppendString(b, "first")
	b = append(b, tag(27, protowire.BytesType)...) // pmsg {name: "n"}
	b = protowire.AppendBytes(b, protowire.AppendString(tag(1, protowire.BytesType), "n"))
	b = append(b, tag(29, protowire.BytesType)...) // rs: "b"
	b = protowire.AppendString(b, "b")
	b = append(b, tag(1, protowire.BytesType)...) // s: "last"
	b = protowire.AppendString(b, "last")
	b = append(b, tag(27, protowire.BytesType)...) // pmsg {count: 2}
	b = protowire.AppendBytes(b, protowire.AppendVarint(tag(2, protowire.VarintType), 2))
	packed := protowire.AppendVarint(protowire.AppendVarint(nil, 7), 1<<40)
	b = append(b, tag(30, protowire.BytesType)...) // ri packed [7, 1<<40]
	b = protowire.AppendBytes(b, packed)
	b = append(b, tag(30, protowire.VarintType)...) // ri unpacked 9
	b = protowire.AppendVarint(b, 9)
	entry := func(k, v string) []byte {
		e := protowire.AppendString(tag(1, protowire.BytesType), k)
		return protowire.AppendString(append(e, tag(2, protowire.BytesType)...), v)
	}
	b = append(b, tag(37, protowire.BytesType)...)
	b = protowire.AppendBytes(b, entry("k", "old"))
	b = append(b, tag(37, protowire.BytesType)...)
	b = protowire.AppendBytes(b, entry("k", "new"))
	// Unknown fields of every wire type, a group included, are skipped.
	b = protowire.AppendVarint(append(b, tag(900, protowire.VarintType)...), 1)
	b = protowire.AppendFixed32(append(b, tag(901, protowire.Fixed32Type)...), 1)
	b = protowire.AppendFixed64(append(b, tag(902, protowire.Fixed64Type)...), 1)
	b = protowire.AppendString(append(b, tag(903, protowire.BytesType)...), "x")
	grp := protowire.AppendVarint(tag(1, protowire.VarintType), 5)
	b = append(append(append(b, tag(904, protowire.StartGroupType)...), grp...), tag(904, protowire.EndGroupType)...)

	got := Kinds{RS: []string{"pre"}}
	if err := Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := Kinds{
		S: "last", RS: []string{"pre", "a", "b"},
		PMsg: &Inner{Name: "n", Count: 2},
		RI:   []int64{7, 1 << 40, 9},
		MSS:  map[string]string{"k": "new"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestPresenceDecode: a zero-length message still sets its pointer.
func TestPresenceDecode(t *testing.T) {
	var e pEmptyP
	if err := Unmarshal([]byte{0x0a, 0x00}, &e); err != nil || e.V == nil {
		t.Fatalf("*Empty not set by a zero-length message: %v %v", e.V, err)
	}
	var l pLists
	if err := Unmarshal([]byte{0x5a, 0x00}, &l); err != nil || len(l.V) != 1 || l.V[0] == nil {
		t.Fatalf("empty list element: %#v %v", l.V, err)
	}
}

type (
	badWire struct {
		V string `protobuf:"varint,1,opt,name=v"`
	}
	badKind struct {
		V int8 `protobuf:"varint,1,opt,name=v"`
	}
	badIface struct {
		V any `protobuf:"bytes,1,opt,name=v"`
	}
	badMapTags struct {
		V map[string]string `protobuf:"bytes,1,rep,name=v"`
	}
	badDup struct {
		A string `protobuf:"bytes,1,opt,name=a"`
		B string `protobuf:"bytes,1,opt,name=b"`
	}
	badUnexp struct {
		v string `protobuf:"bytes,1,opt,name=v"`
	}
	badPtrList struct {
		V *[]string `protobuf:"bytes,1,opt,name=v"`
	}
	badPtrElem struct {
		V []*string `protobuf:"bytes,1,rep,name=v"`
	}
	badTime struct {
		V time.Time `protobuf:"bytes,1,opt,name=v"`
	}
	badK8sWire struct {
		V metav1.Time `protobuf:"varint,1,opt,name=v"`
	}
	badNumber struct {
		V string `protobuf:"bytes,0,opt,name=v"`
	}
	badGroup struct {
		V Inner `protobuf:"group,1,opt,name=v"`
	}
	badFloat struct {
		V float64 `protobuf:"varint,1,opt,name=v"`
	}
	badNested struct {
		V *badKind `protobuf:"bytes,1,opt,name=v"`
	}
	badInList struct {
		V [][]int64 `protobuf:"bytes,1,rep,name=v"`
	}
	badMapKey struct {
		V map[string]string `protobuf:"bytes,1,rep,name=v" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,1,opt,name=value"`
	}
)

func TestUnsupportedTypes(t *testing.T) {
	tests := []struct {
		in   any
		want string // part of the message: the field, and why
	}{
		{&badWire{}, "badWire.V: Go type string cannot be written as varint"},
		{&badKind{}, "badKind.V: Go type int8 cannot be written as varint"},
		{&badIface{}, "badIface.V: Go type interface {} is not supported"},
		{&badMapTags{}, "badMapTags.V: map field needs protobuf_key and protobuf_val"},
		{&badDup{}, "badDup.B: field number 1 also used by"},
		{&badUnexp{}, "badUnexp.v: protobuf tag on an unexported field"},
		{&badPtrList{}, "badPtrList.V: pointer to []string"},
		{&badPtrElem{}, "badPtrElem.V: element type *string"},
		{&badTime{}, "time.Time: struct has fields but none with a protobuf tag"},
		{&badK8sWire{}, "badK8sWire.V: v1.Time marshals itself and needs wire type bytes"},
		{&badNumber{}, "badNumber.V: tag \"bytes,0,opt,name=v\": invalid field number"},
		{&badGroup{}, "wire type \"group\" not supported"},
		{&badFloat{}, "badFloat.V: Go type float64 cannot be written as varint"},
		{&badNested{}, "badKind.V: Go type int8"},
		{&badInList{}, "Go type int64 cannot be written as bytes"},
		{&badMapKey{}, "map key and value share number 1"},
		{ptr(42), "int: not a struct"},
	}
	for _, tc := range tests {
		for i := range 2 { // the second call answers from the cache
			_, err := Marshal(tc.in)
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%T Marshal (call %d): err = %v, want ErrUnsupported containing %q", tc.in, i, err, tc.want)
			}
			err = Unmarshal([]byte{}, tc.in)
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%T Unmarshal: err = %v, want ErrUnsupported", tc.in, err)
			}
		}
	}
	if _, err := Marshal(nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Marshal(nil): %v", err)
	}
	if err := Unmarshal(nil, pStr{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Unmarshal into a non-pointer: %v", err)
	}
	if err := Unmarshal(nil, (*pStr)(nil)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Unmarshal into a nil pointer: %v", err)
	}
}

// A k8s type at the top level uses its own methods, both ways.
func TestTopLevelDelegate(t *testing.T) {
	m := &metav1.ObjectMeta{Name: "x", Labels: map[string]string{"a": "b"}}
	got, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := k8sBytes(t, m); string(got) != string(want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	var back metav1.ObjectMeta
	if err := Unmarshal(got, &back); err != nil || !reflect.DeepEqual(&back, m) {
		t.Fatalf("got %+v, %v", back, err)
	}
	// corev1.Volume embeds VolumeSource (which marshals itself) and declares
	// its own Marshal: that one is used, not a promoted one.
	vol := &corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	if got, err := Marshal(vol); err != nil || string(got) != string(k8sBytes(t, vol)) {
		t.Fatalf("Volume: %x, %v; want %x", got, err, k8sBytes(t, vol))
	}
}
