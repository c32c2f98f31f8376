package server

import (
	"encoding/json"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// toStruct carries a Go API object as a Struct whose JSON is the object's
// encoding/json form.
func toStruct(v any) (*structpb.Struct, error) {
	return toStructFields(v, "")
}

// toStructFields is toStruct that keeps only the JSON paths in fields, or
// drops them when fields starts with "-" (Argo's `fields` parameter).
func toStructFields(v any, fields string) (*structpb.Struct, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encode %T: %v", v, err)
	}
	if strings.TrimSpace(fields) != "" {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, status.Errorf(codes.Internal, "decode %T: %v", v, err)
		}
		if data, err = json.Marshal(filterFields(m, fields)); err != nil {
			return nil, status.Errorf(codes.Internal, "encode %T: %v", v, err)
		}
	}
	out := &structpb.Struct{}
	if err := protojson.Unmarshal(data, out); err != nil {
		return nil, status.Errorf(codes.Internal, "convert %T: %v", v, err)
	}
	return out, nil
}

// fieldTree is a set of dotted JSON paths.
type fieldTree map[string]fieldTree

func parseFields(list string) fieldTree {
	t := fieldTree{}
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n := t
		parts := strings.Split(p, ".")
		for i, k := range parts {
			c, ok := n[k]
			if ok && c == nil { // a shorter path already keeps all of it
				break
			}
			if i == len(parts)-1 {
				n[k] = nil
				break
			}
			if !ok {
				c = fieldTree{}
				n[k] = c
			}
			n = c
		}
	}
	return t
}

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

func keepFields(v any, t fieldTree) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range t {
			val, ok := x[k]
			if !ok {
				continue
			}
			if sub == nil {
				out[k] = val
			} else {
				out[k] = keepFields(val, sub)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = keepFields(e, t)
		}
		return out
	default:
		return v
	}
}

func dropFields(v any, t fieldTree) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range t {
			if sub == nil {
				delete(x, k)
			} else if val, ok := x[k]; ok {
				dropFields(val, sub)
			}
		}
	case []any:
		for _, e := range x {
			dropFields(e, t)
		}
	}
}

// fieldsKeep says whether Argo's `fields` parameter keeps any part of the
// dotted JSON path: an empty list keeps everything.
func fieldsKeep(fields, path string) bool {
	fields = strings.TrimSpace(fields)
	if fields == "" {
		return true
	}
	drop := strings.HasPrefix(fields, "-")
	t := parseFields(strings.TrimPrefix(fields, "-"))
	for _, k := range strings.Split(path, ".") {
		sub, ok := t[k]
		switch {
		case !ok: // the list does not name it
			return drop
		case sub == nil: // the list names it whole
			return !drop
		}
		t = sub
	}
	// The list names parts of it: some of it is kept either way.
	return true
}
