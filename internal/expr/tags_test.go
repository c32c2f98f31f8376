package expr

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTags(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Tag
	}{
		{"none", "plain text", nil},
		{"simple", "a {{ inputs.parameters.x }} b", []Tag{{Start: 2, End: 27, Body: "inputs.parameters.x"}}},
		{"expression", "{{=1+1}}", []Tag{{Start: 0, End: 8, Body: "1+1", Expr: true}}},
		{"expression with blanks", "{{= 1 + 1 }}", []Tag{{Start: 0, End: 12, Body: "1 + 1", Expr: true}}},
		{"space before = is simple", "{{ =x}}", []Tag{{Start: 0, End: 7, Body: "=x"}}},
		{"map literal", "{{={'k':1}}}", []Tag{{Start: 0, End: 12, Body: "{'k':1}", Expr: true}}},
		{"nested map", "{{={'a':{'b':1}}}}!", []Tag{{Start: 0, End: 18, Body: "{'a':{'b':1}}", Expr: true}}},
		{"braces in strings", "{{=sprig.trim('}}')}}", []Tag{{Start: 0, End: 21, Body: "sprig.trim('}}')", Expr: true}}},
		{"unbalanced falls back to first }}", "{{='{'}}", []Tag{{Start: 0, End: 8, Body: "'{'", Expr: true}}},
		{"expression then }", "{{=x}}}", []Tag{{Start: 0, End: 6, Body: "x", Expr: true}}},
		{"two tags", "{{a}}-{{=b}}", []Tag{{Start: 0, End: 5, Body: "a"}, {Start: 6, End: 12, Body: "b", Expr: true}}},
		{"unterminated", "x {{a", nil},
		{"unterminated after a tag", "{{a}} {{b", []Tag{{Start: 0, End: 5, Body: "a"}}},
		{"unterminated expression", "{{=1+1", nil},
		{"nested simple", "{{a {{b}}", []Tag{{Start: 4, End: 9, Body: "b"}}},
		{"nested expression", "{{ {{=1}} }}", []Tag{{Start: 3, End: 9, Body: "1", Expr: true}}},
		{"empty", "{{}}", []Tag{{Start: 0, End: 4, Body: ""}}},
		{"triple brace", "{{{x}}}", []Tag{{Start: 0, End: 6, Body: "{x"}}},
		{"multi-line expression", "{{=\n  1 +\n  2\n}}", []Tag{{Start: 0, End: 16, Body: "1 +\n  2", Expr: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Tags(tc.in)); diff != "" {
				t.Errorf("Tags(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestScanTagsJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"escaped double quotes", `"{{=x == \"}}\" ? 1 : 2}}"`, []string{`x == \"}}\" ? 1 : 2`}},
		{"map in JSON", `{"a":"{{={'k':1}}}"}`, []string{`{'k':1}`}},
		{"stops at the end of the JSON string", `["{{={", "}}"]`, []string{`{", "`}},
		{"escaped backslash in string", `"{{='\\\\'}}"`, []string{`'\\\\'`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, tag := range scanTags(tc.in, true) {
				got = append(got, tag.Body)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scanTags(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// TestScanLinear guards against quadratic scanning on hostile input.
func TestScanLinear(t *testing.T) {
	const n = 100000
	for _, in := range []string{
		strings.Repeat("{{a", n) + "}}",
		strings.Repeat("{{={}}", n),
		strings.Repeat("{{='", n) + "}}",
		strings.Repeat("{{={", n) + "}}",
		strings.Repeat("{{=", n),
	} {
		start := time.Now()
		Tags(in)
		scanTags(in, true)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("scanning %.20q... took %v", in, d)
		}
	}
}
