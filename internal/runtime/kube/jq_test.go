package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestEvalJQ(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"name": "cm", "labels": map[string]any{"a": "1"}},
		"spec": map[string]any{"replicas": int64(3), "ports": []any{int64(80), int64(443)}}}
	cases := []struct{ filter, want, err string }{
		{".metadata.name", "cm", ""},
		{".spec.replicas", "3", ""},
		{".metadata.labels", `{"a":"1"}`, ""},
		{".spec.ports[]", "80\n443", ""},
		{".missing", "null", ""},
		{"empty", "", ""},
		{".metadata.name | error", "", "cm"},
		{".[", "", "unexpected"},
	}
	for _, tc := range cases {
		got, err := evalJQ(tc.filter, obj)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want one saying %q", tc.filter, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.filter, got, err, tc.want)
		}
	}
}

func TestResourceOutputsJQ(t *testing.T) {
	tmpl := mustTemplate(t, `
resource: {action: get, manifest: "{}"}
outputs:
  parameters:
  - {name: name, valueFrom: {jqFilter: .metadata.name}}
  - {name: path, valueFrom: {jsonPath: "{.metadata.name}"}}
  - {name: dflt, valueFrom: {jqFilter: ".x | error", default: d}}`)
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "cm"}}}
	outs, err := outputs(tmpl, obj)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range outs.Parameters {
		got[p.Name] = p.Value.String()
	}
	if got["name"] != "cm" || got["path"] != "cm" || got["dflt"] != "d" {
		t.Errorf("outputs %v", got)
	}
}
