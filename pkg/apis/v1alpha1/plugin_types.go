package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Object is a free-form JSON object kept as its JSON text, so that fields
// this package does not model survive a decode and encode unchanged.
//
// +kubebuilder:validation:Type=object
// +kubebuilder:pruning:PreserveUnknownFields
type Object struct {
	// Value is the object's JSON text.
	Value json.RawMessage `json:"-" protobuf:"bytes,1,opt,name=value"`
}

// MarshalJSON writes the object's JSON text ({} when empty).
func (o Object) MarshalJSON() ([]byte, error) {
	if len(o.Value) == 0 {
		return []byte("{}"), nil
	}
	return o.Value, nil
}

// UnmarshalJSON keeps the text of a JSON object.
func (o *Object) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return fmt.Errorf("expected a JSON object, got %.40s", data)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return fmt.Errorf("invalid object: %w", err)
	}
	o.Value = buf.Bytes()
	return nil
}

// Plugin is the body of a plugin template: an object whose single key names
// the executor plugin and whose value is that plugin's own configuration.
//
// +kubebuilder:validation:Type=object
// +kubebuilder:pruning:PreserveUnknownFields
type Plugin struct {
	Object `json:",inline" protobuf:"bytes,1,opt,name=object"`
}
