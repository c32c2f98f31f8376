package wirecodec

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type dpb = descriptorpb.FieldDescriptorProto

const (
	tString  = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tBytes   = descriptorpb.FieldDescriptorProto_TYPE_BYTES
	tBool    = descriptorpb.FieldDescriptorProto_TYPE_BOOL
	tInt64   = descriptorpb.FieldDescriptorProto_TYPE_INT64
	tInt32   = descriptorpb.FieldDescriptorProto_TYPE_INT32
	tUint32  = descriptorpb.FieldDescriptorProto_TYPE_UINT32
	tUint64  = descriptorpb.FieldDescriptorProto_TYPE_UINT64
	tSint32  = descriptorpb.FieldDescriptorProto_TYPE_SINT32
	tSint64  = descriptorpb.FieldDescriptorProto_TYPE_SINT64
	tFixed32 = descriptorpb.FieldDescriptorProto_TYPE_FIXED32
	tFixed64 = descriptorpb.FieldDescriptorProto_TYPE_FIXED64
	tSfix32  = descriptorpb.FieldDescriptorProto_TYPE_SFIXED32
	tSfix64  = descriptorpb.FieldDescriptorProto_TYPE_SFIXED64
	tFloat   = descriptorpb.FieldDescriptorProto_TYPE_FLOAT
	tDouble  = descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
	tMsg     = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
)

func opt(name string, num int32, t descriptorpb.FieldDescriptorProto_Type) *dpb {
	return &dpb{
		Name: proto.String(name), Number: proto.Int32(num), Type: t.Enum(),
		Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
	}
}

func rep(name string, num int32, t descriptorpb.FieldDescriptorProto_Type) *dpb {
	f := opt(name, num, t)
	f.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	return f
}

func msgField(f *dpb, typeName string) *dpb {
	f.TypeName = proto.String(typeName)
	return f
}

// mapField declares map<key, value> name = num inside message parent.
func mapField(parent *descriptorpb.DescriptorProto, name string, num int32, entry string,
	key, val *dpb) *dpb {
	parent.NestedType = append(parent.NestedType, &descriptorpb.DescriptorProto{
		Name:    proto.String(entry),
		Field:   []*dpb{key, val},
		Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
	})
	return msgField(rep(name, num, tMsg), ".wt.Kinds."+entry)
}

// kindsDescriptor is the proto2 file that the test types stand for. The
// k8s types (which marshal themselves) are declared as bytes: their
// contents are compared with their own Marshal output.
func kindsDescriptor(t testing.TB) protoreflect.MessageDescriptor {
	t.Helper()
	inner := &descriptorpb.DescriptorProto{Name: proto.String("Inner"), Field: []*dpb{
		opt("name", 1, tString), opt("count", 2, tInt64), opt("flag", 3, tBool),
	}}
	list := &descriptorpb.DescriptorProto{Name: proto.String("InnerList"), Field: []*dpb{
		msgField(rep("items", 1, tMsg), ".wt.Inner"),
	}}
	embedded := &descriptorpb.DescriptorProto{Name: proto.String("Embedded"), Field: []*dpb{opt("e", 1, tString)}}
	empty := &descriptorpb.DescriptorProto{Name: proto.String("Empty")}
	kinds := &descriptorpb.DescriptorProto{Name: proto.String("Kinds")}
	kinds.Field = []*dpb{
		opt("s", 1, tString), opt("b", 2, tBool), opt("i64", 3, tInt64), opt("i32", 4, tInt32),
		opt("u32", 5, tUint32), opt("u64", 6, tUint64), opt("z32", 7, tSint32), opt("z64", 8, tSint64),
		opt("fu32", 9, tFixed32), opt("fu64", 10, tFixed64), opt("sf32", 11, tSfix32), opt("sf64", 12, tSfix64),
		opt("f32", 13, tFloat), opt("f64", 14, tDouble), opt("by", 15, tBytes), opt("raw", 16, tBytes),
		opt("num", 17, tString), opt("named", 18, tString), opt("dur", 19, tInt64), opt("int", 20, tInt64),
		opt("ps", 21, tString), opt("pb", 22, tBool), opt("pi32", 23, tInt32), opt("pi64", 24, tInt64),
		opt("pf64", 25, tDouble),
		msgField(opt("msg", 26, tMsg), ".wt.Inner"), msgField(opt("pmsg", 27, tMsg), ".wt.Inner"),
		msgField(opt("pempty", 28, tMsg), ".wt.Empty"),
		rep("rs", 29, tString), rep("ri", 30, tInt64), rep("rb", 31, tBool), rep("rf", 32, tDouble),
		rep("rz", 33, tSint32),
		msgField(rep("rmsg", 34, tMsg), ".wt.Inner"), msgField(rep("rpmsg", 35, tMsg), ".wt.Inner"),
		rep("rby", 36, tBytes),
		mapField(kinds, "mss", 37, "MssEntry", opt("key", 1, tString), opt("value", 2, tString)),
		mapField(kinds, "msm", 38, "MsmEntry", opt("key", 1, tString), msgField(opt("value", 2, tMsg), ".wt.Inner")),
		mapField(kinds, "msp", 39, "MspEntry", opt("key", 1, tString), msgField(opt("value", 2, tMsg), ".wt.Inner")),
		mapField(kinds, "msi", 40, "MsiEntry", opt("key", 1, tString), opt("value", 2, tInt64)),
		mapField(kinds, "mis", 41, "MisEntry", opt("key", 1, tInt32), opt("value", 2, tString)),
		mapField(kinds, "mbb", 42, "MbbEntry", opt("key", 1, tBool), opt("value", 2, tBool)),
		msgField(rep("lists", 43, tMsg), ".wt.InnerList"),
		opt("par", 44, tInt64), opt("parv", 45, tInt64), opt("ios", 46, tBytes),
		opt("meta", 47, tBytes), opt("time", 48, tBytes), opt("ptime", 49, tBytes),
		opt("ctr", 50, tBytes), rep("ctrs", 51, tBytes), opt("q", 52, tBytes),
		msgField(opt("embedded", 53, tMsg), ".wt.Embedded"),
		mapField(kinds, "rl", 54, "RlEntry", opt("key", 1, tString), opt("value", 2, tBytes)),
		opt("dura", 55, tBytes),
		opt("sparse", 100000, tString),
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("wt.proto"), Package: proto.String("wt"), Syntax: proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{inner, list, embedded, empty, kinds},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatalf("descriptor: %v", err)
	}
	return fd.Messages().ByName("Kinds")
}

// dyn wraps a dynamic message with terse setters for building expectations.
type dyn struct{ m *dynamicpb.Message }

func newDyn(md protoreflect.MessageDescriptor) dyn { return dyn{dynamicpb.NewMessage(md)} }

func (d dyn) fd(name string) protoreflect.FieldDescriptor {
	return d.m.Descriptor().Fields().ByName(protoreflect.Name(name))
}

func (d dyn) set(name string, v any) dyn {
	d.m.Set(d.fd(name), protoreflect.ValueOf(v))
	return d
}

func (d dyn) msg(name string) dyn { return dyn{d.m.Mutable(d.fd(name)).Message().(*dynamicpb.Message)} }

func (d dyn) add(name string, vs ...any) dyn {
	l := d.m.Mutable(d.fd(name)).List()
	for _, v := range vs {
		l.Append(protoreflect.ValueOf(v))
	}
	return d
}

func (d dyn) addMsg(name string) dyn {
	l := d.m.Mutable(d.fd(name)).List()
	e := l.NewElement()
	l.Append(e)
	return dyn{e.Message().(*dynamicpb.Message)}
}

func (d dyn) put(name string, k, v any) dyn {
	d.m.Mutable(d.fd(name)).Map().Set(protoreflect.ValueOf(k).MapKey(), protoreflect.ValueOf(v))
	return d
}

func (d dyn) putMsg(name string, k any) dyn {
	return dyn{d.m.Mutable(d.fd(name)).Map().Mutable(protoreflect.ValueOf(k).MapKey()).Message().(*dynamicpb.Message)}
}

func k8sBytes(t testing.TB, m marshaler) []byte {
	t.Helper()
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// expectedKinds is sampleKinds() as protobuf-go sees it: exactly the
// fields the presence rules write, with k8s types as their own bytes.
func expectedKinds(t testing.TB, md protoreflect.MessageDescriptor, k *Kinds) dyn {
	d := newDyn(md)
	d.set("s", "hello").set("b", true).set("i64", int64(-5)).set("i32", int32(-7)).
		set("u32", uint32(1<<31)).set("u64", uint64(1<<63+5)).set("z32", int32(-3)).
		set("z64", int64(-1<<40)).set("fu32", uint32(0xdeadbeef)).set("fu64", uint64(0x0102030405060708)).
		set("sf32", int32(-9)).set("sf64", int64(-11)).set("f32", float32(1.5)).set("f64", -2.25).
		set("by", []byte{0, 1, 2}).set("raw", []byte(`{"a":1}`)).set("num", "3.14").
		set("named", "named").set("dur", int64(42)).set("int", int64(-1)).
		set("ps", "").set("pb", false).set("pi32", int32(0)).set("pi64", int64(-1)).set("pf64", 0.0)
	d.msg("msg").set("name", "m").set("count", int64(1))
	d.msg("pmsg")
	d.msg("pempty")
	d.add("rs", "a", "", "c").add("ri", int64(0), int64(-1), int64(300)).add("rb", true, false).
		add("rf", 0.0, 1.5).add("rz", int32(-1), int32(0), int32(1))
	d.addMsg("rmsg").set("name", "x").set("flag", true)
	d.addMsg("rmsg")
	d.addMsg("rpmsg").set("count", int64(2))
	d.addMsg("rpmsg")
	d.add("rby", []byte{1}, []byte{})
	d.put("mss", "b", "2").put("mss", "a", "1").put("mss", "", "")
	d.putMsg("msm", "y")
	d.putMsg("msm", "x").set("name", "x")
	d.putMsg("msp", "p").set("count", int64(3))
	d.putMsg("msp", "q")
	d.put("msi", "mem", int64(0)).put("msi", "cpu", int64(10))
	d.put("mis", int32(5), "five").put("mis", int32(-1), "neg").put("mis", int32(0), "")
	d.put("mbb", true, false).put("mbb", false, true)
	l := d.addMsg("lists")
	l.addMsg("items").set("name", "a")
	l.addMsg("items").set("name", "b")
	d.addMsg("lists").addMsg("items").set("name", "c")
	d.addMsg("lists")
	d.set("par", int64(0)).set("parv", int64(-3)).set("ios", k8sBytes(t, k.IOS))
	d.set("meta", k8sBytes(t, &k.Meta)).set("time", k8sBytes(t, &k.Time)).set("ptime", []byte{})
	d.set("ctr", k8sBytes(t, k.Ctr)).add("ctrs", k8sBytes(t, &k.Ctrs[0]), k8sBytes(t, &k.Ctrs[1]))
	d.set("q", k8sBytes(t, k.Q))
	for name, q := range k.RL {
		d.put("rl", string(name), k8sBytes(t, &q))
	}
	d.set("dura", k8sBytes(t, k.Dura))
	d.msg("embedded").set("e", "emb")
	d.set("sparse", "far")
	return d
}

// TestDynamicpbCrossCheck checks the codec against protobuf-go itself:
// dynamicpb reads the codec's bytes as the expected message, the codec's
// bytes equal protobuf-go's deterministic encoding of that message, and the
// codec reads protobuf-go's encoding back to the original Go value.
func TestDynamicpbCrossCheck(t *testing.T) {
	md := kindsDescriptor(t)
	k := sampleKinds()
	k.TypeMeta = metav1.TypeMeta{Kind: "Workflow", APIVersion: "argoproj.io/v1alpha1"}
	k.Untagged = "not on the wire"
	got, err := Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	want := expectedKinds(t, md, sampleKinds())

	decoded := newDyn(md)
	if err := proto.Unmarshal(got, decoded.m); err != nil {
		t.Fatalf("dynamicpb cannot read the codec's output: %v", err)
	}
	if !proto.Equal(decoded.m, want.m) {
		t.Errorf("dynamicpb read a different message:\n got %v\nwant %v", decoded.m, want.m)
	}
	wantBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(want.m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantBytes) {
		t.Errorf("bytes differ from protobuf-go's deterministic encoding:\n got %x\nwant %x", got, wantBytes)
	}

	var back Kinds
	if err := Unmarshal(wantBytes, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sampleKinds(), &back, quantityEqual); diff != "" {
		t.Errorf("codec read protobuf-go's bytes differently (-want +got):\n%s", diff)
	}
}

// TestDynamicpbZeroValues: a zero Kinds writes nothing, and protobuf-go's
// encoding of explicitly set zero values decodes to the zero Go values.
func TestDynamicpbZeroValues(t *testing.T) {
	md := kindsDescriptor(t)
	var z Kinds
	z.Meta = metav1.ObjectMeta{} // always encodes its non-nullable fields
	got, err := Marshal(&z)
	if err != nil {
		t.Fatal(err)
	}
	want := newDyn(md).set("meta", k8sBytes(t, &z.Meta))
	wantBytes, _ := proto.MarshalOptions{Deterministic: true}.Marshal(want.m)
	if !bytes.Equal(got, wantBytes) {
		t.Errorf("zero value: got %x, want %x", got, wantBytes)
	}

	zeros := newDyn(md).set("s", "").set("b", false).set("i64", int64(0)).set("f64", 0.0).
		set("by", []byte{}).set("named", "").set("int", int64(0)).set("time", []byte{})
	zeros.msg("msg")
	b, _ := proto.Marshal(zeros.m)
	var back Kinds
	if err := Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	back.By = nil // present-but-empty bytes decode as []byte{}, as gogo does
	if !reflect.DeepEqual(back, Kinds{}) {
		t.Errorf("explicit zeros decoded to %+v", back)
	}
}
