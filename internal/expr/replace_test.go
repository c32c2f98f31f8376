package expr

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// artifact stands for a non-string scope value such as an artifact.
type artifact struct {
	Name string
	Key  string
}

func testScope() Scope {
	return Scope{
		"inputs.parameters.x":                  "hello",
		"inputs.parameters.n":                  "3",
		"inputs.parameters.my-param":           "mine",
		"inputs.parameters.quoted":             "say \"hi\"\nbye",
		"inputs.parameters.config":             `{"a":1,"b":"two","employees":[{"name":"Baris","age":43},{"name":"Mo","age":42},{"name":"Jai","age":44}]}`,
		"workflow.name":                        "wf",
		"workflow.creationTimestamp":           "2024-05-01T10:00:00Z",
		"workflow.parameters.json":             `[{"name":"should-print","value":"true"}]`,
		"steps.flip-coin.outputs.result":       "heads",
		"steps.skipped.outputs.parameters.o":   nil,
		"tasks.producer.outputs.parameters.m":  nil,
		"steps.gen.outputs.artifacts.out":      artifact{Name: "out", Key: "k/out.tgz"},
		"item":                                 `{"a":"1","k":"v"}`,
		"item.a":                               "1",
		"item.k":                               "v",
		"steps.loop.outputs.parameters":        `[{"o":"a"}]`,
		"steps.loop.outputs.parameters.o":      `["a"]`,
		"workflow.outputs.parameters.exported": "g",
	}
}

func TestReplace(t *testing.T) {
	tests := []struct {
		name string
		in   string
		mode Mode
		want string
	}{
		// Rule 0.2 [run] results.
		{"int", "{{=1+1}}", Lenient, "2"},
		{"list", "{{=[1,2]}}", Lenient, "[1,2]"},
		{"bool", "{{=1==1}}", Lenient, "true"},
		{"map", "{{={'k':1}}}", Lenient, `{"k":1}`},
		{"float", "{{=10/4}}", Lenient, "2.5"},
		{"string raw", "{{='a\"b'}}", Lenient, `a"b`},
		{"simple", "x={{inputs.parameters.x}}.", Lenient, "x=hello."},
		{"simple with blanks", "{{ inputs.parameters.x }}", Lenient, "hello"},
		{"hyphenated simple", "{{inputs.parameters.my-param}}", Strict, "mine"},
		{"hyphenated index", "{{=inputs.parameters['my-param']}}", Strict, "mine"},
		{"double-quoted index", `{{= inputs.parameters["my-param"] == 'mine'}}`, Strict, "true"},
		{"steps index", "{{=steps['flip-coin'].outputs.result}}", Strict, "heads"},
		// Lenient leaves unknown and failing tags literal.
		{"unknown simple", "a {{foo}} b", Lenient, "a {{foo}} b"},
		{"unknown simple keeps blanks", "{{ foo }}", Lenient, "{{ foo }}"},
		{"failing expression", "{{=asInt('x')}}", Lenient, "{{=asInt('x')}}"},
		{"unknown name", "{{=nope + 1}}", Lenient, "{{=nope + 1}}"},
		{"nil result", "{{=steps.skipped.outputs.parameters.o}}", Lenient, "{{=steps.skipped.outputs.parameters.o}}"},
		{"syntax error", "{{=1 +}}", Lenient, "{{=1 +}}"},
		{"unterminated", "a {{x", Strict, "a {{x"},
		// ?? for absent optionals (rule 6.6).
		{"?? nil", "{{=steps.skipped.outputs.parameters.o ?? 'fb'}}", StrictRefs, "fb"},
		{"?? nil task", "{{= tasks.producer.outputs.parameters.m ?? 'expr-fallback'}}", StrictRefs, "expr-fallback"},
		{"?? value", "{{=steps['flip-coin'].outputs.result ?? 'fb'}}", StrictRefs, "heads"},
		// Helpers.
		{"asInt", "hello {{=asInt(inputs.parameters.n) * 10}}", Strict, "hello 30"},
		{"asFloat", "{{=asFloat(inputs.parameters.n) / 2}}", Strict, "1.5"},
		{"sprig.upper", "{{=sprig.upper(inputs.parameters.x)}}", Strict, "HELLO"},
		{"sprig.trim", "{{=sprig.trim('  a  ')}}", Strict, "a"},
		{"sprig.date", "{{=sprig.date('2006', sprig.toDate('2006-01-02T15:04:05Z07:00', workflow.creationTimestamp))}}", Strict, "2024"},
		{"toJson filter", "{{=toJson(filter([1, 3], {# > 1}))}}", Strict, "[3]"},
		{"toJson map", "{{=toJson({'b':1,'a':'x'})}}", Strict, `{"a":"x","b":1}`},
		{"jsonpath scalar", "{{=jsonpath(inputs.parameters.config, '$.a')}}", Strict, "1"},
		{"jsonpath string", "{{=jsonpath(inputs.parameters.config, '$.b')}}", Strict, "two"},
		{"jsonpath filter", `{{=jsonpath(inputs.parameters.config, '$.employees[?(@.name=="Baris")].age')}}`, Strict, "[43]"},
		{"jsonpath and filter", "{{=jsonpath(inputs.parameters.config, '$.employees[?(@.age>42 && @.age<44)].age')}}", Strict, "[43]"},
		{"jsonpath slice", "{{=jsonpath(inputs.parameters.config, '$.employees[0:1]')}}", Strict, `[{"age":43,"name":"Baris"}]`},
		{"jsonpath wildcard", "{{=jsonpath(inputs.parameters.config, '$.employees[*].name')}}", Strict, `["Baris","Mo","Jai"]`},
		{"jsonpath workflow.parameters.json", "{{=jsonpath(workflow.parameters.json, '$[0].value') == 'true'}}", Strict, "true"},
		// Expansion (rule 6.8a).
		{"item map of strings", "{{=asInt(item.a) + 1}}", Strict, "2"},
		{"item simple", "{{item}}", Strict, `{"a":"1","k":"v"}`},
		{"item expression is map", "{{=item}}", Strict, `{"a":"1","k":"v"}`},
		{"parameters map", "{{=steps.loop.outputs.parameters.o}}", Strict, `["a"]`},
		// StrictRefs (rule 4.1, 6.9).
		{"refs: unknown global stays", "{{workflow.scheduledTime}}", StrictRefs, "{{workflow.scheduledTime}}"},
		{"refs: unknown artifact stays", "{{steps.x.outputs.artifacts.a}}", StrictRefs, "{{steps.x.outputs.artifacts.a}}"},
		{"refs: item stays", "{{item.missing}}", StrictRefs, "{{item.missing}}"},
		{"refs: artifact value stays", "{{steps.gen.outputs.artifacts.out}}", StrictRefs, "{{steps.gen.outputs.artifacts.out}}"},
		{"refs: struct field in expression", "{{=steps.gen.outputs.artifacts.out.Key}}", StrictRefs, "k/out.tgz"},
		{"stepsX is not a ref", "{{stepsX.a}}", StrictRefs, "{{stepsX.a}}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Replace(tc.in, testScope(), tc.mode)
			if err != nil {
				t.Fatalf("Replace(%q, %v): %v", tc.in, tc.mode, err)
			}
			if got != tc.want {
				t.Errorf("Replace(%q, %v) = %q, want %q", tc.in, tc.mode, got, tc.want)
			}
		})
	}
}

func TestReplaceDeferredVariables(t *testing.T) {
	// Without these keys the expressions would evaluate (to false, or nil
	// member access); they must survive for a later pass (Argo 5388, 10393).
	scope := Scope{"workflow.name": "wf"}
	for _, in := range []string{
		"{{=workflow.status == 'Failed' ? 'x' : 'y'}}",
		"{{=workflow.failures ?? '[]'}}",
		"{{=retries ?? 0}}",
		"{{=lastRetry.exitCode ?? '0'}}",
		"{{=item ?? 'none'}}",
		"{{=sprig.upper(item.name)}}",
	} {
		for _, mode := range []Mode{Lenient, StrictRefs} {
			got, err := Replace(in, scope, mode)
			if err != nil || got != in {
				t.Errorf("Replace(%q, %v) = %q, %v; want it unchanged", in, mode, got, err)
			}
		}
	}
	got, err := Replace("{{=workflow.status}}", Scope{"workflow.status": "Succeeded"}, Lenient)
	if err != nil || got != "Succeeded" {
		t.Errorf("with workflow.status set: %q, %v", got, err)
	}
}

func TestReplaceErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		mode     Mode
		sentinel error
		text     string
		missing  bool
	}{
		{"strict unknown", "{{foo}}", Strict, ErrUnresolved, "failed to resolve {{foo}}", true},
		{"strict unknown trimmed", "{{ foo }}", Strict, ErrUnresolved, "failed to resolve {{foo}}", true},
		{"strict empty", "{{}}", Strict, ErrUnresolved, "failed to resolve {{}}", true},
		{"refs unknown step", "{{steps.a.outputs.result}}", StrictRefs, ErrUnresolved,
			"failed to resolve {{steps.a.outputs.result}}", true},
		{"refs unknown task", "x {{tasks.b.outputs.parameters.p}}", StrictRefs, ErrUnresolved,
			"failed to resolve {{tasks.b.outputs.parameters.p}}", true},
		{"refs expression missing step", "{{=steps.a.outputs.result ?? 'x'}}", StrictRefs, ErrUnresolved,
			"steps.a.outputs.result is missing", true},
		{"strict expression missing", "{{=nope}}", Strict, ErrUnresolved, "nope is missing", true},
		{"strict failing expression", "{{=asInt('x')}}", Strict, ErrExpression, "failed to evaluate expression", false},
		{"strict nil expression", "{{=steps.skipped.outputs.parameters.o}}", Strict, ErrExpression, "nil", false},
		{"refs failing resolved expression", "{{=asInt(inputs.parameters.x)}}", StrictRefs, ErrExpression,
			"failed to evaluate expression", false},
		{"absent optional lenient", "{{steps.skipped.outputs.parameters.o}}", Lenient, ErrAbsentOptional,
			"{{steps.skipped.outputs.parameters.o}} refers to an absent optional value", false},
		{"absent optional strict", "{{tasks.producer.outputs.parameters.m}}", Strict, ErrAbsentOptional,
			"absent optional", false},
		{"absent optional refs", "{{tasks.producer.outputs.parameters.m}}", StrictRefs, ErrAbsentOptional,
			"absent optional", false},
		{"not a string", "{{steps.gen.outputs.artifacts.out}}", Strict, ErrNotString, "does not resolve to a string", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Replace(tc.in, testScope(), tc.mode)
			if err == nil {
				t.Fatalf("Replace(%q, %v) = %q, want an error", tc.in, tc.mode, got)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("error %q does not wrap %v", err, tc.sentinel)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %q does not contain %q", err, tc.text)
			}
			if IsMissingVariable(err) != tc.missing {
				t.Errorf("IsMissingVariable(%q) = %v, want %v", err, !tc.missing, tc.missing)
			}
		})
	}
}

func TestReplaceJSON(t *testing.T) {
	type step struct {
		Args  []string          `json:"args"`
		When  string            `json:"when,omitempty"`
		Value string            `json:"value"`
		Env   map[string]string `json:"env,omitempty"`
	}
	in := step{
		Args:  []string{"{{inputs.parameters.quoted}}", "{{={'k':'a\"b'}}}", "{{foo}}", `{{=jsonpath(inputs.parameters.config, '$.employees[?(@.name=="Mo")].age')}}`},
		When:  `{{= inputs.parameters["my-param"] == 'mine'}}`,
		Value: "{{=inputs.parameters.quoted}}",
		Env:   map[string]string{"A": "<{{inputs.parameters.x}}&>"},
	}
	want := step{
		Args:  []string{"say \"hi\"\nbye", `{"k":"a\"b"}`, "{{foo}}", "[42]"},
		When:  "true",
		Value: "say \"hi\"\nbye",
		Env:   map[string]string{"A": "<hello&>"},
	}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ReplaceJSON(string(raw), testScope(), Lenient)
	if err != nil {
		t.Fatalf("ReplaceJSON: %v", err)
	}
	var got step
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, out)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReplaceJSON (-want +got):\n%s", diff)
	}
}

func TestReplaceJSONEscapesEveryValue(t *testing.T) {
	scope := Scope{"v": "tab\there \x1b[31mred\x1b[0m \\ \" \u2028 <&>"}
	out, err := ReplaceJSON(`{"a":"{{v}}","b":"{{=v}}"}`, scope, Strict)
	if err != nil {
		t.Fatalf("ReplaceJSON: %v", err)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, out)
	}
	if got["a"] != scope["v"] || got["b"] != scope["v"] {
		t.Errorf("got %q, want both %q", got, scope["v"])
	}
}

func TestReplaceJSONInvalid(t *testing.T) {
	if _, err := ReplaceJSON(`{"a":`, Scope{}, Lenient); !errors.Is(err, ErrInvalidJSON) {
		t.Errorf("invalid input: got %v, want ErrInvalidJSON", err)
	}
}

func TestExpand(t *testing.T) {
	got := Expand(Scope{
		"item":                         "{\"a\":\"1\"}",
		"item.a":                       "1",
		"workflow.parameters":          "[...]",
		"workflow.parameters.json":     "[...]",
		"workflow.parameters.p":        "v",
		"steps.s.outputs.parameters.o": nil,
		"a-b":                          "x",
		"a":                            "y",
	})
	want := map[string]any{
		"item":     map[string]any{"a": "1"},
		"workflow": map[string]any{"parameters": map[string]any{"json": "[...]", "p": "v"}},
		"steps":    map[string]any{"s": map[string]any{"outputs": map[string]any{"parameters": map[string]any{"o": nil}}}},
		"a-b":      "x",
		"a":        "y",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Expand (-want +got):\n%s", diff)
	}
}

func TestIsMissingVariable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("failed to resolve {{x}}"), true},
		{errors.New("failed to evaluate expression: steps.a is missing"), true},
		{errors.New("variable not in env: item"), true},
		{errors.New("boom"), false},
		{ErrAbsentOptional, false},
	} {
		if got := IsMissingVariable(tc.err); got != tc.want {
			t.Errorf("IsMissingVariable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
