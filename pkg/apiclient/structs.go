package apiclient

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// ToStruct carries an API object (a Workflow, ...) as a Struct whose JSON
// is the object's encoding/json form.
func ToStruct(v any) (*structpb.Struct, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("convert %T to a Struct: %w", v, err)
	}
	return s, nil
}

// FromStruct decodes a Struct (a Workflow, a WorkflowList, ...) into the API
// type out points to.
func FromStruct(s *structpb.Struct, out any) error {
	data, err := protojson.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode Struct: %w", err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode %T: %w", out, err)
	}
	return nil
}
