package kube

import (
	"encoding/json"
	"strings"
	"testing"
)

const condObj = `{
  "metadata": {"name": "x", "annotations": {"a.b/c": "yes"}},
  "data": {"state": "done", "empty": "", "n": "7"},
  "status": {"phase": "Failed", "succeeded": 2, "ratio": 0.5, "ready": true, "none": null,
             "conditions": [{"type": "Complete", "status": "True"}], "obj": {"k": 1}}
}`

func TestConditionMatches(t *testing.T) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(condObj), &obj); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cond string
		want bool
	}{
		{"data.state == done", true},
		{"data.state = done", true},
		{"data.state==done", true},
		{"data.state == running", false},
		{"data.state != running", true},
		{"data.state != done", false},
		{"data.missing != x", true},
		{"data.missing == x", false},
		{"status.phase in (Failed,Error)", true},
		{"status.phase in (Failed, Error)", true},
		{"status.phase in (Succeeded)", false},
		{"status.phase notin (Succeeded, Error)", true},
		{"status.phase notin (Failed)", false},
		{"status.missing notin (Failed)", true},
		{"status.succeeded > 0", true},
		{"status.succeeded > 2", false},
		{"status.succeeded < 3", true},
		{"status.ratio < 1", true},
		{"status.phase > 0", false},
		{"status.missing > 0", false},
		{"data.n > 6", true},
		{"status.ready == true", true},
		{"status.succeeded == 2", true},
		{"status.none == ", true},
		{"data.empty =", true},
		{"status.phase", true},
		{"status.completionTime", false},
		{"!status.completionTime", true},
		{"!status.phase", false},
		{"status.conditions.0.type == Complete", true},
		{"status.conditions.1.type == Complete", false},
		{"status.conditions.x.type == Complete", false},
		{`metadata.annotations.a\.b/c == yes`, true},
		{`status.obj == {"k":1}`, true}, // a map compares as its JSON
		{"data.state == done, status.succeeded > 1", true},
		{"data.state == done, status.succeeded > 5", false},
		{"data.state == done,status.phase in (Failed),!status.x", true},
	}
	for _, tt := range tests {
		c, err := parseCondition(tt.cond)
		if err != nil {
			t.Errorf("parse %q: %v", tt.cond, err)
			continue
		}
		if got, _ := c.matches(obj); got != tt.want {
			t.Errorf("%q matches = %v, want %v", tt.cond, got, tt.want)
		}
	}
}

func TestConditionErrors(t *testing.T) {
	bad := []struct{ cond, want string }{
		{"status.phase ==", ""}, // valid: equals ""
		{"status.phase >= 1", "not an operator"},
		{"status.phase > x", "want a number"},
		{"status.phase in Failed", `want "("`},
		{"status.phase in ()", "lists no value"},
		{"status.phase in (a", `want "," or ")"`},
		{"status.phase in (", `miss ")"`},
		{"status.phase in (a b)", `want "," or ")"`},
		{"status.phase in (a,)", "want a value"},
		{"status.phase == a b", `want ","`},
		{"status.phase ==, x", ""},
		{"a ,", "must follow"},
		{", a", "want a field path"},
		{"a.", "empty part"},
		{"a..b", "empty part"},
		{"status.phase ~ x", "want an operator"},
		{"! == x", "want a field path"},
	}
	for _, tt := range bad {
		_, err := parseCondition(tt.cond)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.cond, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: error %v, want one containing %q", tt.cond, err, tt.want)
		}
	}
	if c, err := parseCondition(""); err != nil || c != nil {
		t.Errorf(`parseCondition("") = %v, %v; want nil, nil`, c, err)
	}
}

func TestConditionString(t *testing.T) {
	c, err := parseCondition("a.b==x, c in (1,2), !d, e, f>1, g<2, h notin (z), i!=y")
	if err != nil {
		t.Fatal(err)
	}
	want := "a.b == x, c in (1,2), !d, e, f > 1, g < 2, h notin (z), i != y"
	if got := c.String(); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	again, err := parseCondition(c.String())
	if err != nil || again.String() != want {
		t.Errorf("reparse: %v, %v", again, err)
	}
}

// FuzzCondition: parsing never panics, and a parsed condition prints to a
// form that parses to the same thing and evaluates without panicking.
func FuzzCondition(f *testing.F) {
	for _, s := range []string{"status.phase == Succeeded", "status.phase in (Failed,Error)", "status.succeeded > 0",
		"!a.b, c notin (x, y)", `a\.b.0 != 1`, "a <", "((", "a in (b,c", "=!=", `\`} {
		f.Add(s)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(condObj), &obj); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCondition(s)
		if err != nil {
			return
		}
		c.matches(obj)
		again, err := parseCondition(c.String())
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", s, c.String(), err)
		}
		if again.String() != c.String() {
			t.Fatalf("%q: %q reparses as %q", s, c.String(), again.String())
		}
	})
}
