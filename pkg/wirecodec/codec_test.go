package wirecodec

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func echo[T any](_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	in := new(T)
	if err := dec(in); err != nil {
		return nil, err
	}
	return in, nil
}

// TestGRPCRoundTrip registers the codec as gRPC's "proto" codec and sends
// tagged structs, a k8s type and a protobuf-go message through a real
// server on 127.0.0.1.
func TestGRPCRoundTrip(t *testing.T) {
	Register()
	if c, ok := encoding.GetCodecV2("proto").(CodecV2); !ok {
		t.Fatalf("registered codec is %T", c)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "wt.Echo",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{
			{MethodName: "Kinds", Handler: echo[Kinds]},
			{MethodName: "Big", Handler: echo[benchWF]},
			{MethodName: "Meta", Handler: echo[metav1.ObjectMeta]},
			{MethodName: "Str", Handler: echo[wrapperspb.StringValue]},
		},
	}, struct{}{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	conn, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var k Kinds
	if err := conn.Invoke(ctx, "/wt.Echo/Kinds", sampleKinds(), &k); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sampleKinds(), &k, quantityEqual); diff != "" {
		t.Errorf("Kinds (-sent +received):\n%s", diff)
	}

	wf := bigWorkflow(2000) // large enough for pooled buffers
	var big benchWF
	if err := conn.Invoke(ctx, "/wt.Echo/Big", wf, &big); err != nil {
		t.Fatal(err)
	}
	wf.TypeMeta = metav1.TypeMeta{}
	if diff := cmp.Diff(wf, &big); diff != "" {
		t.Errorf("workflow (-sent +received):\n%s", diff)
	}

	meta := &metav1.ObjectMeta{Name: "m", Annotations: map[string]string{"a": "b"}}
	var gotMeta metav1.ObjectMeta
	if err := conn.Invoke(ctx, "/wt.Echo/Meta", meta, &gotMeta); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(meta, &gotMeta); diff != "" {
		t.Errorf("ObjectMeta (-sent +received):\n%s", diff)
	}

	var s wrapperspb.StringValue
	if err := conn.Invoke(ctx, "/wt.Echo/Str", wrapperspb.String("hi"), &s); err != nil {
		t.Fatal(err)
	}
	if s.GetValue() != "hi" {
		t.Errorf("StringValue: %q", s.GetValue())
	}
}

// Both codec interfaces agree with Marshal, and CodecV2 decodes a message
// that arrives split over several buffers.
func TestCodecs(t *testing.T) {
	k := sampleKinds()
	want, err := Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := Codec{}.Marshal(k)
	if err != nil || string(v1) != string(want) {
		t.Fatalf("Codec.Marshal differs: %v", err)
	}
	bs, err := CodecV2{}.Marshal(k)
	if err != nil || string(bs.Materialize()) != string(want) {
		t.Fatalf("CodecV2.Marshal differs: %v", err)
	}
	split := mem.BufferSlice{mem.SliceBuffer(want[:7]), mem.SliceBuffer(want[7:100]), mem.SliceBuffer(want[100:])}
	var got Kinds
	if err := (CodecV2{}).Unmarshal(split, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(k, &got, quantityEqual); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if (Codec{}).Name() != "proto" || (CodecV2{}).Name() != "proto" {
		t.Error("codec name is not proto")
	}

	// protobuf-go messages go to protobuf-go.
	pm, err := Codec{}.Marshal(wrapperspb.Int64(-1))
	if err != nil {
		t.Fatal(err)
	}
	if ref, _ := proto.Marshal(wrapperspb.Int64(-1)); string(pm) != string(ref) {
		t.Errorf("protobuf-go message: %x, want %x", pm, ref)
	}
	var iv wrapperspb.Int64Value
	if err := (Codec{}).Unmarshal(pm, &iv); err != nil || iv.GetValue() != -1 {
		t.Errorf("protobuf-go message decode: %v %v", iv.GetValue(), err)
	}
}
