package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// states is a test helper: task name -> state.
type states map[string]TaskState

func (s states) get(task string) TaskState { return s[task] }

func phase(p string) TaskState { return TaskState{Phase: p} }

func TestParseDepends(t *testing.T) {
	tests := []struct {
		in     string
		tasks  []string
		normal string
	}{
		{"", nil, ""},
		{"A", []string{"A"}, "A"},
		{"A && (C.Succeeded || C.Failed)", []string{"A", "C"}, "A && (C.Succeeded || C.Failed)"},
		{"B.Failed&&C", []string{"B", "C"}, "B.Failed && C"},
		{"should-execute-2.Succeeded || should-not-execute", []string{"should-execute-2", "should-not-execute"},
			"should-execute-2.Succeeded || should-not-execute"},
		{"!A.Skipped && !(B.Omitted)", []string{"A", "B"}, "!A.Skipped && !(B.Omitted)"},
		{"A.AnySucceeded || A.AllFailed || A.Daemoned || A.Errored", []string{"A"},
			"A.AnySucceeded || A.AllFailed || A.Daemoned || A.Errored"},
		{"producer-1 && producer-2 && producer-3", []string{"producer-1", "producer-2", "producer-3"},
			"producer-1 && producer-2 && producer-3"},
		{" c-loop\n", []string{"c-loop"}, "c-loop"},
	}
	for _, tc := range tests {
		d, err := ParseDepends(tc.in)
		if err != nil {
			t.Errorf("ParseDepends(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.tasks, d.Tasks()); diff != "" {
			t.Errorf("ParseDepends(%q).Tasks() (-want +got):\n%s", tc.in, diff)
		}
		if got := d.String(); got != tc.normal {
			t.Errorf("ParseDepends(%q).String() = %q, want %q", tc.in, got, tc.normal)
		}
	}
}

func TestParseDependsErrors(t *testing.T) {
	tests := []struct {
		in       string
		sentinel error
		text     string
	}{
		{"A.Foo", ErrTaskResult, "invalid task result 'Foo' for task 'A'"},
		{"A.succeeded", ErrTaskResult, "'succeeded'"},
		{"A.Successful || B", ErrTaskResult, "'Successful'"},
		{"(A && B", ErrDepends, "unbalanced parentheses"},
		{"A && B)", ErrDepends, "unbalanced parentheses"},
		{"((A)", ErrDepends, "unbalanced parentheses"},
		{"A &&", ErrDepends, "unexpected end, a task name is missing"},
		{"A B", ErrDepends, "'B' at offset 2 needs '&&' or '||'"},
		{"A & B", ErrDepends, "must be doubled"},
		{"A | B", ErrDepends, "must be doubled"},
		{"a_b", ErrDepends, "unexpected character '_'"},
		{"1task", ErrDepends, "starts with a digit"},
		{"()", ErrDepends, "expected a task name, '(' or '!' at offset 1, found ')'"},
		{"&& A", ErrDepends, "expected a task name, '(' or '!' at offset 0, found '&&'"},
		{"(A) (B)", ErrDepends, "'(' at offset 4 needs '&&' or '||' before it"},
		{"A.", ErrTaskResult, "''"},
		{strings.Repeat("(", 1000) + "A" + strings.Repeat(")", 1000), ErrDepends, "nested more than"},
	}
	for _, tc := range tests {
		_, err := ParseDepends(tc.in)
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("ParseDepends(%.40q) = %v, want %v", tc.in, err, tc.sentinel)
			continue
		}
		if !strings.Contains(err.Error(), tc.text) {
			t.Errorf("ParseDepends(%.40q) error %q does not contain %q", tc.in, err, tc.text)
		}
	}
}

func TestDependsEval(t *testing.T) {
	continueOn := func(task string) ContinueOn {
		return map[string]ContinueOn{"E": {Error: true}, "F": {Failed: true}, "G": {Error: true, Failed: true}}[task]
	}
	tests := []struct {
		name   string
		expr   string
		states states
		want   bool
	}{
		{"bare succeeded", "A", states{"A": phase("Succeeded")}, true},
		{"bare skipped", "A", states{"A": phase("Skipped")}, true},
		{"bare failed", "A", states{"A": phase("Failed")}, false},
		{"bare omitted cascades", "A", states{"A": phase("Omitted")}, false},
		{"bare daemoned running", "A", states{"A": {Phase: "Running", Daemoned: true}}, true},
		{"bare daemoned pending", "A", states{"A": {Phase: "Pending", Daemoned: true}}, false},
		{"continueOn error", "E", states{"E": phase("Error")}, true},
		{"continueOn error not failed", "E", states{"E": phase("Failed")}, false},
		{"continueOn failed", "F", states{"F": phase("Failed")}, true},
		{"continueOn both", "G && E", states{"G": phase("Error"), "E": phase("Error")}, true},
		{"explicit result ignores continueOn", "F.Succeeded", states{"F": phase("Failed")}, false},
		{"Errored is the Error phase", "A.Errored", states{"A": phase("Error")}, true},
		{"Skipped", "A.Skipped", states{"A": phase("Skipped")}, true},
		{"Omitted", "A.Omitted", states{"A": phase("Omitted")}, true},
		{"Daemoned", "A.Daemoned", states{"A": {Phase: "Succeeded", Daemoned: true}}, true},
		{"not", "!A.Failed", states{"A": phase("Succeeded")}, true},
		// examples/dag-enhanced-depends.yaml: A, B pass; C fails.
		{"enhanced D", "A && (C.Succeeded || C.Failed)", states{"A": phase("Succeeded"), "C": phase("Failed")}, true},
		{"enhanced E", "B.Failed && C", states{"B": phase("Succeeded"), "C": phase("Failed")}, false},
		{"precedence", "A.Failed || B && C", states{"A": phase("Failed")}, true},
		{"hyphenated names", "should-execute-2.Succeeded || should-not-execute",
			states{"should-execute-2": phase("Skipped"), "should-not-execute": phase("Skipped")}, true},
		{"AnySucceeded", "A.AnySucceeded", states{"A": TaskGroupState("Failed", []string{"Failed", "Succeeded"})}, true},
		{"AllFailed", "A.AllFailed", states{"A": TaskGroupState("Failed", []string{"Failed", "Failed"})}, true},
		{"AllFailed with an error", "A.AllFailed", states{"A": TaskGroupState("Error", []string{"Failed", "Error"})}, false},
		{"AllFailed no iterations", "A.AllFailed", states{"A": TaskGroupState("Skipped", nil)}, false},
		{"AnySucceeded not fanned out", "A.AnySucceeded", states{"A": phase("Succeeded")}, false},
		{"empty", "", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDepends(tc.expr)
			if err != nil {
				t.Fatalf("ParseDepends(%q): %v", tc.expr, err)
			}
			got, err := d.Rewrite(continueOn).Eval(tc.states.get)
			if err != nil || got != tc.want {
				t.Errorf("Eval(%q) = %v, %v; want %v", tc.expr, got, err, tc.want)
			}
		})
	}
}

func TestDependsRewrite(t *testing.T) {
	continueOn := func(task string) ContinueOn {
		return map[string]ContinueOn{"A": {Error: true, Failed: true}}[task]
	}
	d, err := ParseDepends("A && !B.Failed || C")
	if err != nil {
		t.Fatal(err)
	}
	want := "(A.Succeeded || A.Skipped || A.Daemoned || A.Errored || A.Failed) && !B.Failed ||" +
		" (C.Succeeded || C.Skipped || C.Daemoned)"
	if got := d.Rewrite(continueOn).String(); got != want {
		t.Errorf("Rewrite = %q, want %q", got, want)
	}
	if got := d.String(); got != "A && !B.Failed || C" {
		t.Errorf("Rewrite changed the original: %q", got)
	}
	if got := d.Rewrite(nil).String(); !strings.HasPrefix(got, "(A.Succeeded || A.Skipped || A.Daemoned) &&") {
		t.Errorf("Rewrite(nil) = %q", got)
	}
}

func TestDependenciesToDepends(t *testing.T) {
	d, err := DependenciesToDepends([]string{"A", "b-2", "C"})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.String(); got != "A && b-2 && C" {
		t.Errorf("String = %q", got)
	}
	if diff := cmp.Diff([]string{"A", "b-2", "C"}, d.Tasks()); diff != "" {
		t.Errorf("Tasks (-want +got):\n%s", diff)
	}
	cont := func(task string) ContinueOn { return ContinueOn{Failed: task == "C"} }
	want := "(A.Succeeded || A.Skipped || A.Daemoned) && (b-2.Succeeded || b-2.Skipped || b-2.Daemoned) &&" +
		" (C.Succeeded || C.Skipped || C.Daemoned || C.Failed)"
	if got := d.Rewrite(cont).String(); got != want {
		t.Errorf("Rewrite = %q, want %q", got, want)
	}
	ok, err := d.Rewrite(cont).Eval(states{"A": phase("Succeeded"), "b-2": phase("Skipped"), "C": phase("Failed")}.get)
	if err != nil || !ok {
		t.Errorf("Eval = %v, %v", ok, err)
	}
	empty, err := DependenciesToDepends(nil)
	if ok, _ := empty.Eval(nil); err != nil || !ok || empty.String() != "" {
		t.Errorf("empty dependencies: %v %v %q", ok, err, empty.String())
	}
	for _, bad := range []string{"", "a b", "1a", "A.Succeeded"} {
		if _, err := DependenciesToDepends([]string{bad}); !errors.Is(err, ErrDepends) {
			t.Errorf("DependenciesToDepends(%q) = %v, want ErrDepends", bad, err)
		}
	}
}

func TestDependsEvalNilState(t *testing.T) {
	d, err := ParseDepends("A")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Eval(nil); !errors.Is(err, ErrDepends) {
		t.Errorf("Eval(nil) = %v, want ErrDepends", err)
	}
}
