package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/braidwf/braid/pkg/wirecodec"
)

// The REST JSON of an object is what the gateway wrote when objects
// travelled as google.protobuf.Struct: these helpers make that reference
// (encoding/json, `fields` applied, a Struct, protojson), so that tests
// check the typed messages' REST JSON against it byte for byte.

// toStruct is v's Struct, with Argo's `fields` applied.
func toStructFields(v any, fields string) (*structpb.Struct, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(fields) != "" {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		if data, err = json.Marshal(filterFields(m, fields)); err != nil {
			return nil, err
		}
	}
	out := &structpb.Struct{}
	if err := protojson.Unmarshal(data, out); err != nil {
		return nil, err
	}
	return out, nil
}

func toStruct(v any) (*structpb.Struct, error) { return toStructFields(v, "") }

// structJSON is the gateway's JSON of v's Struct, with `fields` applied.
func structJSON(t testing.TB, v any, fields string) []byte {
	t.Helper()
	s, err := toStructFields(v, fields)
	if err != nil {
		t.Fatal(err)
	}
	m := &compactJSONPb{runtime.JSONPb{MarshalOptions: protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}}}
	b, err := m.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wireCodec makes a test's gRPC client speak Argo's wire format, as the
// server does.
var wireCodec = grpc.WithDefaultCallOptions(grpc.ForceCodecV2(wirecodec.CodecV2{}))

// filterFields applies Argo's `fields`: a comma-separated list of dotted
// paths to keep, or with a leading "-", to drop. Lists are walked through:
// items.metadata.name keeps the name of every item.
func filterFields(m map[string]any, fields string) map[string]any {
	fields = strings.TrimSpace(fields)
	if strings.HasPrefix(fields, "-") {
		dropFields(m, parseFields(fields[1:]))
		return m
	}
	out, _ := keepFields(m, parseFields(fields)).(map[string]any)
	return out
}
