package v1alpha1

import (
	"encoding/json"
	"testing"
)

func TestAnyStringUnmarshal(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: `"hello"`, want: "hello"},
		{in: `""`, want: ""},
		{in: `"1.50"`, want: "1.50"}, // a string stays as written
		{in: `1`, want: "1"},
		{in: `-7`, want: "-7"},
		{in: `0`, want: "0"},
		{in: `1.50`, want: "1.5"},
		{in: `0.1`, want: "0.1"},
		{in: `2.0`, want: "2"},
		{in: `1e3`, want: "1000"},
		{in: `1.5e-7`, want: "0.00000015"},
		{in: `12345678901234567890`, want: "12345678901234567890"},
		{in: `true`, want: "true"},
		{in: `false`, want: "false"},
		{in: `[1]`, wantErr: true},
		{in: `{"a":1}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got AnyString
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			out, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(tt.want)
			if string(out) != string(want) {
				t.Fatalf("marshal: got %s, want %s", out, want)
			}
		})
	}
}

func TestAnyStringNullKeepsValue(t *testing.T) {
	v := AnyString("kept")
	if err := json.Unmarshal([]byte(`null`), &v); err != nil {
		t.Fatal(err)
	}
	if v != "kept" {
		t.Fatalf("null changed the value to %q", v)
	}
}

func TestParameterValueForms(t *testing.T) {
	in := `{"name":"p","value":1.50,"default":true,"enum":[1,"b",false],"description":"d"}`
	var p Parameter
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"p","default":"true","value":"1.5","enum":["1","b","false"],"description":"d"}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	var absent Parameter
	if err := json.Unmarshal([]byte(`{"name":"q","value":null}`), &absent); err != nil {
		t.Fatal(err)
	}
	if absent.Value != nil {
		t.Fatalf("null value should stay unset, got %q", *absent.Value)
	}
}
