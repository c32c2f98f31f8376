package wirecodec

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Test types: one field per supported kind, with the .proto they stand for
// built in dynamic_test.go (kindsDescriptor).

type NamedStr string

type NamedInt int64

type Inner struct {
	Name  string `protobuf:"bytes,1,opt,name=name"`
	Count int64  `protobuf:"varint,2,opt,name=count"`
	Flag  *bool  `protobuf:"varint,3,opt,name=flag"`
}

type InnerList []Inner

type Empty struct{}

type Embedded struct {
	E string `protobuf:"bytes,1,opt,name=e"`
}

type Kinds struct {
	metav1.TypeMeta `json:",inline"` // untagged: not on the wire
	Untagged        string

	S      string          `protobuf:"bytes,1,opt,name=s"`
	B      bool            `protobuf:"varint,2,opt,name=b"`
	I64    int64           `protobuf:"varint,3,opt,name=i64"`
	I32    int32           `protobuf:"varint,4,opt,name=i32"`
	U32    uint32          `protobuf:"varint,5,opt,name=u32"`
	U64    uint64          `protobuf:"varint,6,opt,name=u64"`
	Z32    int32           `protobuf:"zigzag32,7,opt,name=z32"`
	Z64    int64           `protobuf:"zigzag64,8,opt,name=z64"`
	FU32   uint32          `protobuf:"fixed32,9,opt,name=fu32"`
	FU64   uint64          `protobuf:"fixed64,10,opt,name=fu64"`
	SF32   int32           `protobuf:"fixed32,11,opt,name=sf32"`
	SF64   int64           `protobuf:"fixed64,12,opt,name=sf64"`
	F32    float32         `protobuf:"fixed32,13,opt,name=f32"`
	F64    float64         `protobuf:"fixed64,14,opt,name=f64"`
	By     []byte          `protobuf:"bytes,15,opt,name=by"`
	Raw    json.RawMessage `protobuf:"bytes,16,opt,name=raw"`
	Num    json.Number     `protobuf:"bytes,17,opt,name=num"`
	Named  NamedStr        `protobuf:"bytes,18,opt,name=named"`
	Dur    NamedInt        `protobuf:"varint,19,opt,name=dur"`
	Int    int             `protobuf:"varint,20,opt,name=int"`
	PS     *string         `protobuf:"bytes,21,opt,name=ps"`
	PB     *bool           `protobuf:"varint,22,opt,name=pb"`
	PI32   *int32          `protobuf:"varint,23,opt,name=pi32"`
	PI64   *int64          `protobuf:"varint,24,opt,name=pi64"`
	PF64   *float64        `protobuf:"fixed64,25,opt,name=pf64"`
	Msg    Inner           `protobuf:"bytes,26,opt,name=msg"`
	PMsg   *Inner          `protobuf:"bytes,27,opt,name=pmsg"`
	PEmpty *Empty          `protobuf:"bytes,28,opt,name=pempty"`
	RS     []string        `protobuf:"bytes,29,rep,name=rs"`
	RI     []int64         `protobuf:"varint,30,rep,name=ri"`
	RB     []bool          `protobuf:"varint,31,rep,name=rb"`
	RF     []float64       `protobuf:"fixed64,32,rep,name=rf"`
	RZ     []int32         `protobuf:"zigzag32,33,rep,name=rz"`
	RMsg   []Inner         `protobuf:"bytes,34,rep,name=rmsg"`
	RPMsg  []*Inner        `protobuf:"bytes,35,rep,name=rpmsg"`
	RBy    [][]byte        `protobuf:"bytes,36,rep,name=rby"`

	MSS map[string]string     `protobuf:"bytes,37,rep,name=mss" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	MSM map[string]Inner      `protobuf:"bytes,38,rep,name=msm" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	MSP map[string]*Inner     `protobuf:"bytes,39,rep,name=msp" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	MSI map[NamedStr]NamedInt `protobuf:"bytes,40,rep,name=msi" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`
	MIS map[int32]string      `protobuf:"bytes,41,rep,name=mis" protobuf_key:"varint,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	MBB map[bool]bool         `protobuf:"bytes,42,rep,name=mbb" protobuf_key:"varint,1,opt,name=key" protobuf_val:"varint,2,opt,name=value"`

	Lists    []InnerList         `protobuf:"bytes,43,rep,name=lists"`
	Par      *intstr.IntOrString `protobuf:"varint,44,opt,name=par"`
	ParV     intstr.IntOrString  `protobuf:"varint,45,opt,name=parv"`
	IOS      *intstr.IntOrString `protobuf:"bytes,46,opt,name=ios"`
	Meta     metav1.ObjectMeta   `protobuf:"bytes,47,opt,name=meta"`
	Time     metav1.Time         `protobuf:"bytes,48,opt,name=time"`
	PTime    *metav1.Time        `protobuf:"bytes,49,opt,name=ptime"`
	Ctr      *corev1.Container   `protobuf:"bytes,50,opt,name=ctr"`
	Ctrs     []corev1.Container  `protobuf:"bytes,51,rep,name=ctrs"`
	Q        *resource.Quantity  `protobuf:"bytes,52,opt,name=q"`
	RL       corev1.ResourceList `protobuf:"bytes,54,rep,name=rl" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Dura     *metav1.Duration    `protobuf:"bytes,55,opt,name=dura"`
	Embedded `protobuf:"bytes,53,opt,name=embedded"`

	Sparse string `protobuf:"bytes,100000,opt,name=sparse"` // forces the sparse field lookup
}

func ptr[T any](v T) *T { return &v }

// sampleKinds sets every field, with zero values behind pointers and in
// slices and maps, where they must still be written.
func sampleKinds() *Kinds {
	return &Kinds{
		S: "hello", B: true, I64: -5, I32: -7, U32: 1 << 31, U64: 1<<63 + 5,
		Z32: -3, Z64: -1 << 40, FU32: 0xdeadbeef, FU64: 0x0102030405060708,
		SF32: -9, SF64: -11, F32: 1.5, F64: -2.25,
		By: []byte{0, 1, 2}, Raw: json.RawMessage(`{"a":1}`), Num: "3.14",
		Named: "named", Dur: 42, Int: -1,
		PS: ptr(""), PB: ptr(false), PI32: ptr(int32(0)), PI64: ptr(int64(-1)), PF64: ptr(0.0),
		Msg: Inner{Name: "m", Count: 1}, PMsg: &Inner{}, PEmpty: &Empty{},
		RS: []string{"a", "", "c"}, RI: []int64{0, -1, 300}, RB: []bool{true, false},
		RF: []float64{0, 1.5}, RZ: []int32{-1, 0, 1},
		RMsg:  []Inner{{Name: "x", Flag: ptr(true)}, {}},
		RPMsg: []*Inner{{Count: 2}, {}},
		RBy:   [][]byte{{1}, {}},
		MSS:   map[string]string{"b": "2", "a": "1", "": ""},
		MSM:   map[string]Inner{"y": {}, "x": {Name: "x"}},
		MSP:   map[string]*Inner{"p": {Count: 3}, "q": {}},
		MSI:   map[NamedStr]NamedInt{"mem": 0, "cpu": 10},
		MIS:   map[int32]string{5: "five", -1: "neg", 0: ""},
		MBB:   map[bool]bool{true: false, false: true},
		Lists: []InnerList{{{Name: "a"}, {Name: "b"}}, {{Name: "c"}}, {}},
		Par:   ptr(intstr.FromInt32(0)),
		ParV:  intstr.FromInt32(-3),
		IOS:   ptr(intstr.FromString("50%")),
		Meta: metav1.ObjectMeta{
			Name: "wf", Namespace: "ns", Labels: map[string]string{"a": "b"},
			CreationTimestamp: metav1.Unix(1700000000, 0),
		},
		Time:     metav1.Unix(1700000001, 0),
		PTime:    &metav1.Time{},
		Ctr:      &corev1.Container{Name: "main", Image: "alpine", Command: []string{"sh", "-c"}},
		Ctrs:     []corev1.Container{{Name: "a"}, {}},
		Q:        ptr(resource.MustParse("100m")),
		RL:       corev1.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("1Gi")},
		Dura:     &metav1.Duration{Duration: 90e9},
		Embedded: Embedded{E: "emb"},
		Sparse:   "far",
	}
}
