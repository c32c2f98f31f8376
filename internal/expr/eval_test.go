package expr

import (
	"errors"
	"strings"
	"testing"
)

func TestEval(t *testing.T) {
	env := Expand(Scope{
		"retries":                        "2",
		"lastRetry.exitCode":             "2",
		"lastRetry.status":               "Failed",
		"lastRetry.duration":             "12",
		"lastRetry.message":              "pod deleted",
		"steps.step-1.status":            "Running",
		"steps.flip-coin.outputs.result": "heads",
		"steps.heads.outputs.result":     "it was heads",
		"steps.tails.outputs.result":     nil,
		"workflow.status":                "Running",
		"inputs.parameters.num":          "2",
	})
	tests := []struct {
		expression string
		want       any
	}{
		// examples/retry-conditional.yaml, after tag substitution.
		{`asInt(lastRetry.exitCode) > 1 && lastRetry.status != "Error" && asInt(lastRetry.duration) < 120 && (true == true || lastRetry.message matches 'imminent node shutdown|pod deleted')`, nil},
		{`lastRetry.message matches 'imminent node shutdown|pod deleted'`, true},
		// examples/life-cycle-hooks-*.yaml.
		{`steps["step-1"].status == "Running"`, true},
		{`workflow.status == "Running"`, true},
		// examples/*conditional-parameters*.yaml valueFrom.expression.
		{`steps['flip-coin'].outputs.result == 'heads' ? steps.heads.outputs.result : steps.tails.outputs.result`, "it was heads"},
		{"asInt(inputs.parameters.num) == 1? 1: asInt(inputs.parameters.num) == 2? 1: 0", 1},
		{"steps.tails.outputs.result ?? 'fallback'", "fallback"},
		{"asInt(retries) + 1", 3},
	}
	for _, tc := range tests {
		got, err := Eval(tc.expression, env)
		if err != nil {
			t.Errorf("Eval(%q): %v", tc.expression, err)
			continue
		}
		if tc.want != nil && got != tc.want {
			t.Errorf("Eval(%q) = %#v, want %#v", tc.expression, got, tc.want)
		}
	}
	if _, ok := env["asInt"]; ok {
		t.Error("Eval changed the caller's env")
	}
}

func TestEvalBool(t *testing.T) {
	env := Expand(Scope{"lastRetry.exitCode": "2", "lastRetry.status": "Failed"})
	got, err := EvalBool(`asInt(lastRetry.exitCode) > 1 && lastRetry.status != "Error"`, env)
	if err != nil || !got {
		t.Errorf("EvalBool = %v, %v; want true", got, err)
	}
	if _, err := EvalBool("lastRetry.status", env); !errors.Is(err, ErrNotBool) {
		t.Errorf("non-bool result: got %v, want ErrNotBool", err)
	}
	if _, err := EvalBool("asInt(lastRetry.status) > 1", env); !errors.Is(err, ErrExpression) {
		t.Errorf("failing expression: got %v, want ErrExpression", err)
	}
	// asInt is expr-lang's int(): a fractional string fails, as in Argo, so
	// retry-conditional.yaml's asInt(lastRetry.duration) errors on "12.5".
	if _, err := EvalBool("asInt('12.5') < 120", env); !errors.Is(err, ErrExpression) {
		t.Errorf("asInt of a fraction: got %v, want ErrExpression", err)
	}
	if _, err := EvalBool("1 +", env); !errors.Is(err, ErrExpression) {
		t.Errorf("syntax error: got %v, want ErrExpression", err)
	}
}

func TestCheck(t *testing.T) {
	for _, ok := range []string{
		`asInt(lastRetry.exitCode) > 1 && ({{inputs.parameters.safe-to-retry}} == true || lastRetry.message matches 'a|b')`,
		`steps["step-1"].status == "Running"`,
		"cronworkflow.lastScheduledTime == nil || (now() - cronworkflow.lastScheduledTime).Seconds() > 360",
		"jsonpath(workflow.parameters.config, '$.a')",
		"map([1,2], {toJson({a: #})})[0]",
		"sprig.date('2006', workflow.creationTimestamp)",
		"tasks.producer.outputs.parameters.msg ?? 'expr-fallback'",
		"response.body contains \"google\"",
	} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"1 +", "a ==", "(a", "a matches '('", "jsonpath('x')"} {
		err := Check(bad)
		if !errors.Is(err, ErrExpression) || !strings.Contains(err.Error(), bad) {
			t.Errorf("Check(%q) = %v, want ErrExpression naming it", bad, err)
		}
	}
}

// TestExamples runs expressions from Argo's examples end to end.
func TestExamples(t *testing.T) {
	// examples/expression-reusing-verbose-snippets.yaml
	weather := Scope{"workflow.parameters.weather": `{"weekWeather": "eyJ0ZW1wcyI6IFszNCwgMjcsIDE1LCA1NywgNDZdfQo="}`}
	snippet := `{{=
    map([
        jsonpath(sprig.b64dec(jsonpath(workflow.parameters.weather, '$.weekWeather')), '$.temps')
      ], {
        toJson({
          avg: sprig.add(#[0], #[1], #[2], #[3], #[4]) / 5,
          min: sprig.min(#[0], #[1], #[2], #[3], #[4]),
          max: sprig.max(#[0], #[1], #[2], #[3], #[4])
        })
    })[0]
  }}`
	temps, err := Replace(snippet, weather, Strict)
	if err != nil || temps != `{"avg":35.8,"max":57,"min":15}` {
		t.Fatalf("week-temps = %q, %v", temps, err)
	}
	avg, err := Replace("{{=jsonpath(inputs.parameters['week-temps'], '$.avg')}}", Scope{"inputs.parameters.week-temps": temps}, Strict)
	if err != nil || avg != "35.8" {
		t.Errorf("avg = %q, %v", avg, err)
	}

	// examples/expression-tag-template-workflow.yaml
	param, err := ReplaceJSON(`{"withParam":"{{=toJson(filter([1, 3], {# > 1}))}}","value":"{{=item}}"}`, Scope{}, StrictRefs)
	if err != nil || param != `{"withParam":"[3]","value":"{{=item}}"}` {
		t.Errorf("withParam = %q, %v", param, err)
	}
	args, err := Replace("hello {{=asInt(inputs.parameters.foo) * 10}}", Scope{"inputs.parameters.foo": "3"}, Lenient)
	if err != nil || args != "hello 30" {
		t.Errorf("args = %q, %v", args, err)
	}
}
