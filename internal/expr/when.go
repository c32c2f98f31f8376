package expr

import (
	"fmt"
	"strings"

	"github.com/casbin/govaluate"
)

// EvalWhen evaluates a step's or task's `when` condition after its tags were
// substituted, with govaluate semantics as Argo (rule 4.2):
//   - every bare identifier is a string literal: "heads == heads" is true;
//   - numbers are numeric ("1 == 1.0", "3 < 10" are true) while quoted
//     strings compare as strings ("'3' < '10'" is false);
//   - operators && || ! == != < > <= >= =~ !~ and "in (...)";
//   - the result must be a bool.
//
// An empty condition is true. A value with a space or a hyphen breaks the
// parse ("hello world == x") or the evaluation ("a-b == a-b"); such values
// must be quoted, or compared in a {{= }} tag. A leftover "{{" (a tag that was
// not resolved, rule 4.3) is reported with a hint naming it.
//
// Errors: ErrInvalidWhen, with the text "Invalid 'when' expression '<w>':
// <cause>" when it does not parse or "Failed to evaluate 'when' expression
// '<w>': <cause>" when it does not evaluate; and ErrWhenNotBool, "Expected
// boolean evaluation for '<w>'. Got <v>".
func EvalWhen(condition string) (bool, error) {
	if condition == "" {
		return true, nil
	}
	var result any
	parsed := false
	err := safely(func() error {
		var err error
		result, parsed, err = evalGovaluate(condition)
		return err
	})
	if err != nil {
		format := "Invalid 'when' expression '%s': %v%s"
		if parsed {
			format = "Failed to evaluate 'when' expression '%s': %v%s"
		}
		return false, newTextError(ErrInvalidWhen, err,
			fmt.Sprintf(format, condition, err, whenHint(condition, err)))
	}
	b, ok := result.(bool)
	if !ok {
		return false, newTextError(ErrWhenNotBool, nil,
			fmt.Sprintf("Expected boolean evaluation for '%s'. Got %v", condition, result))
	}
	return b, nil
}

// evalGovaluate parses the condition, turns every variable token into a string
// token (Argo's rewrite in shouldExecute), and evaluates it without
// parameters. parsed tells whether a failure came after parsing.
func evalGovaluate(condition string) (result any, parsed bool, err error) {
	expression, err := govaluate.NewEvaluableExpression(condition)
	if err != nil {
		return nil, false, err
	}
	tokens := expression.Tokens()
	for i := range tokens {
		if tokens[i].Kind == govaluate.VARIABLE {
			tokens[i].Kind = govaluate.STRING
		}
	}
	rewritten, err := govaluate.NewEvaluableExpressionFromTokens(tokens)
	if err != nil {
		return nil, false, err
	}
	result, err = rewritten.Evaluate(nil)
	return result, true, err
}

// whenHint explains the common causes of a parse error: a tag left in the
// condition, or a value that needs quotes.
func whenHint(condition string, err error) string {
	if t := Tags(condition); len(t) > 0 {
		return fmt.Sprintf(" (hint: the tag %s was not resolved)", condition[t[0].Start:t[0].End])
	}
	if strings.Contains(condition, "{{") {
		return " (hint: the condition contains '{{', an unresolved or unterminated tag)"
	}
	msg := err.Error()
	if strings.Contains(msg, "Invalid token") || strings.Contains(msg, "Cannot transition token types") ||
		strings.Contains(msg, "cannot be used with the modifier") {
		return ` (hint: try wrapping the affected expression in quotes ("))`
	}
	return ""
}
