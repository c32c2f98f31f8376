package expr

import (
	"errors"
	"strings"
	"testing"
)

func TestEvalWhen(t *testing.T) {
	tests := []struct {
		when string
		want bool
	}{
		{"", true},
		{"heads == heads", true},
		{"heads == tails", false},
		{"heads != tails", true},
		{"1 == 1.0", true},
		{"3 < 10", true},
		{"'3' < '10'", false},
		{"tails =~ hea", false},
		{"heads =~ hea", true},
		{"heads !~ tai", true},
		{"true", true},
		{"false", false},
		{"true == true", true},
		{"a in (a, b)", true},
		{"c in (a, b)", false},
		{"'a b' == 'a b'", true},
		{`"x" == 'x'`, true},
		{"!(a == b)", true},
		{"2 >= 2 && 3 <= 4", true},
		{"5 > 6 || 6 > 5", true},
		// examples/conditionals-complex.yaml after substitution.
		{"( heads == heads &&\n  tails == tails\n) ||\n( heads == tails &&\n  tails == tails )", true},
		// examples/loops-maps.yaml style: {{item.evenness}} == even.
		{"odd == even", false},
		// examples/conditionals.yaml after substitution of {{= }} tags.
		{"false", false},
	}
	for _, tc := range tests {
		got, err := EvalWhen(tc.when)
		if err != nil {
			t.Errorf("EvalWhen(%q): %v", tc.when, err)
			continue
		}
		if got != tc.want {
			t.Errorf("EvalWhen(%q) = %v, want %v", tc.when, got, tc.want)
		}
	}
}

func TestEvalWhenErrors(t *testing.T) {
	tests := []struct {
		when     string
		sentinel error
		text     string
	}{
		{"hello world == x", ErrInvalidWhen,
			"Invalid 'when' expression 'hello world == x': Cannot transition token types from VARIABLE [hello] to VARIABLE [world]"},
		{"a-b == a-b", ErrInvalidWhen, "Failed to evaluate 'when' expression 'a-b == a-b'"},
		{"a =~ ^a", ErrInvalidWhen, "Invalid 'when' expression 'a =~ ^a'"},
		{"{{workflow.scheduledTime}} == x", ErrInvalidWhen, "the tag {{workflow.scheduledTime}} was not resolved"},
		{"{{x == 1", ErrInvalidWhen, "Invalid 'when' expression '{{x == 1'"},
		{"(a == b", ErrInvalidWhen, "Invalid 'when' expression '(a == b'"},
		{"1 + 1", ErrWhenNotBool, "Expected boolean evaluation for '1 + 1'. Got 2"},
		{"heads", ErrWhenNotBool, "Expected boolean evaluation for 'heads'. Got heads"},
	}
	for _, tc := range tests {
		_, err := EvalWhen(tc.when)
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("EvalWhen(%q) = %v, want %v", tc.when, err, tc.sentinel)
			continue
		}
		if !strings.Contains(err.Error(), tc.text) {
			t.Errorf("EvalWhen(%q) error %q does not contain %q", tc.when, err, tc.text)
		}
		if IsMissingVariable(err) {
			t.Errorf("EvalWhen(%q) error counts as a missing variable", tc.when)
		}
	}
}

// TestWhenAfterReplace is the whole path of rule 4.1: substitute, then
// evaluate.
func TestWhenAfterReplace(t *testing.T) {
	scope := Scope{
		"steps.flip-coin.outputs.result": "heads",
		"inputs.parameters.should-print": "true",
		"workflow.parameters.json":       `[{"name":"should-print","value":"true"}]`,
		"steps.x.outputs.result":         "hello world",
	}
	tests := []struct {
		when string
		want bool
	}{
		{"{{steps.flip-coin.outputs.result}} == heads", true},
		{"{{inputs.parameters.should-print}} == true", true},
		{`{{= inputs.parameters["should-print"] == 'true'}}`, true},
		{"{{=jsonpath(workflow.parameters.json, '$[0].value') == 'true'}}", true},
		{"'{{steps.x.outputs.result}}' == 'hello world'", true},
		{"{{=steps.x.outputs.result == 'hello world'}}", true},
	}
	for _, tc := range tests {
		w, err := Replace(tc.when, scope, StrictRefs)
		if err != nil {
			t.Fatalf("Replace(%q): %v", tc.when, err)
		}
		got, err := EvalWhen(w)
		if err != nil || got != tc.want {
			t.Errorf("when %q -> %q = %v, %v; want %v", tc.when, w, got, err, tc.want)
		}
	}
}
