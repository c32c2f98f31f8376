package v1alpha1

import (
	"encoding/json"
	"testing"
)

func TestItemRoundTrip(t *testing.T) {
	tests := []struct {
		name       string
		in         string // JSON as written in a spec
		wantJSON   string // JSON written back
		wantKind   ItemKind
		wantString string // what {{item}} stands for
	}{
		{"string", `"hello world"`, `"hello world"`, ItemString, "hello world"},
		{"escaped string", `"a\"b\n"`, `"a\"b\n"`, ItemString, "a\"b\n"},
		{"integer", `42`, `42`, ItemNumber, "42"},
		{"float kept as written", `1.50`, `1.50`, ItemNumber, "1.50"},
		{"negative", `-3`, `-3`, ItemNumber, "-3"},
		{"true", `true`, `true`, ItemBool, "true"},
		{"false", `false`, `false`, ItemBool, "false"},
		{"list", `[1, "a", {"b": 2}]`, `[1,"a",{"b":2}]`, ItemList, `[1,"a",{"b":2}]`},
		{"map", `{"os": "debian", "version": 9}`, `{"os":"debian","version":9}`, ItemMap, `{"os":"debian","version":9}`},
		{"map keys sorted in String", `{"z": 1, "a": [true]}`, `{"z":1,"a":[true]}`, ItemMap, `{"a":[true],"z":1}`},
		{"nested map", `{"m": {"y": 1.0, "x": null}}`, `{"m":{"y":1.0,"x":null}}`, ItemMap, `{"m":{"x":null,"y":1.0}}`},
		{"null", `null`, `null`, ItemNull, "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var item Item
			if err := json.Unmarshal([]byte(tt.in), &item); err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(item)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.wantJSON {
				t.Errorf("marshal: got %s, want %s", out, tt.wantJSON)
			}
			if got := item.Kind(); got != tt.wantKind {
				t.Errorf("Kind: got %s, want %s", got, tt.wantKind)
			}
			if got := item.String(); got != tt.wantString {
				t.Errorf("String: got %q, want %q", got, tt.wantString)
			}
		})
	}
}

func TestItemsInStep(t *testing.T) {
	in := `{"name":"s","withItems":["a",1,true,[1,2],{"k":"v"}]}`
	var step WorkflowStep
	if err := json.Unmarshal([]byte(in), &step); err != nil {
		t.Fatal(err)
	}
	if len(step.WithItems) != 5 {
		t.Fatalf("got %d items", len(step.WithItems))
	}
	out, err := json.Marshal(step)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"s","arguments":{},"withItems":["a",1,true,[1,2],{"k":"v"}]}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}

func TestNewItem(t *testing.T) {
	item, err := NewItem(map[string]any{"b": 1, "a": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if item.Kind() != ItemMap || item.String() != `{"a":"x","b":1}` {
		t.Fatalf("got %s %s", item.Kind(), item.String())
	}
	var empty Item
	if out, _ := json.Marshal(empty); string(out) != "null" {
		t.Fatalf("empty item marshals to %s", out)
	}
	if err := json.Unmarshal([]byte(`{bad`), &item); err == nil {
		t.Fatal("want an error for invalid JSON")
	}
}
