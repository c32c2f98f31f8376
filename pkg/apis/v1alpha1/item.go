package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ItemKind is the JSON kind of an Item.
type ItemKind string

// Item kinds.
const (
	ItemNull   ItemKind = "null"
	ItemString ItemKind = "string"
	ItemNumber ItemKind = "number"
	ItemBool   ItemKind = "bool"
	ItemList   ItemKind = "list"
	ItemMap    ItemKind = "map"
)

// Item is one entry of withItems: any JSON value (string, number, bool, list
// or map). It keeps the value's JSON text, compacted, and writes it back
// unchanged.
//
// +kubebuilder:validation:Type=""
// +kubebuilder:pruning:PreserveUnknownFields
type Item struct {
	// Value is the item's JSON text.
	Value json.RawMessage `json:"-" protobuf:"bytes,1,opt,name=value"`
}

// NewItem returns the Item holding the JSON encoding of v.
func NewItem(v any) (Item, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return Item{}, fmt.Errorf("encode item: %w", err)
	}
	return Item{Value: data}, nil
}

// MarshalJSON writes the item's JSON text (null when empty).
func (i Item) MarshalJSON() ([]byte, error) {
	if len(i.Value) == 0 {
		return []byte("null"), nil
	}
	return i.Value, nil
}

// UnmarshalJSON keeps any valid JSON value.
func (i *Item) UnmarshalJSON(data []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return fmt.Errorf("invalid item: %w", err)
	}
	i.Value = buf.Bytes()
	return nil
}

// Kind returns the JSON kind of the item.
func (i Item) Kind() ItemKind {
	v := bytes.TrimSpace(i.Value)
	if len(v) == 0 {
		return ItemNull
	}
	switch v[0] {
	case '"':
		return ItemString
	case '{':
		return ItemMap
	case '[':
		return ItemList
	case 't', 'f':
		return ItemBool
	case 'n':
		return ItemNull
	default:
		return ItemNumber
	}
}

// String returns the text {{item}} stands for: a string item's own text, a
// number or boolean as written, and a list or map as JSON with map keys
// sorted.
func (i Item) String() string {
	switch i.Kind() {
	case ItemString:
		var s string
		if err := json.Unmarshal(i.Value, &s); err == nil {
			return s
		}
	case ItemList, ItemMap:
		dec := json.NewDecoder(bytes.NewReader(i.Value))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil {
			if out, err := json.Marshal(v); err == nil {
				return string(out)
			}
		}
	case ItemNull:
		return "null"
	}
	return string(i.Value)
}
