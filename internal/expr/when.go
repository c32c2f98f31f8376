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
// boolean evaluation for '<w>'. Got <v>". It is DefaultBudget.EvalWhen.
func EvalWhen(condition string) (bool, error) {
	return DefaultBudget.EvalWhen(condition)
}

// EvalWhen is the package-level EvalWhen within budget b. govaluate cannot
// be stopped once it runs, so the condition is checked before: it must be at
// most b.Bytes long, nest parentheses at most maxValueDepth deep, and every
// word of it that could be a regular expression (for =~ and !~) must
// compile within b.Bytes. A condition that fails these checks is ErrBudget
// (and ErrInvalidWhen). What remains runs in time linear in its length.
func (b Budget) EvalWhen(condition string) (bool, error) {
	if condition == "" {
		return true, nil
	}
	if err := b.newMeter().checkWhen(condition); err != nil {
		return false, budgetFailure(err, ErrInvalidWhen, fmt.Sprintf("'when' expression '%s'", clip(condition)))
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
	value, ok := result.(bool)
	if !ok {
		return false, newTextError(ErrWhenNotBool, nil,
			fmt.Sprintf("Expected boolean evaluation for '%s'. Got %v", condition, result))
	}
	return value, nil
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

// checkWhen checks a condition before govaluate parses it.
func (m *meter) checkWhen(condition string) error {
	if int64(len(condition)) > m.budget.Bytes {
		return m.exceeded("the condition is %d bytes, more than %d (limits.maxExpressionBytes)",
			len(condition), m.budget.Bytes)
	}
	depth, deepest := 0, 0
	for i := 0; i < len(condition); i++ {
		switch condition[i] {
		case '(':
			depth++
			deepest = max(deepest, depth)
		case ')':
			depth--
		}
	}
	if deepest > maxValueDepth {
		return m.exceeded("the condition nests parentheses %d deep, more than %d", deepest, maxValueDepth)
	}
	if !strings.Contains(condition, "=~") && !strings.Contains(condition, "!~") {
		return nil
	}
	words := strings.FieldsFunc(condition, func(r rune) bool { return r == ' ' || r == '\'' || r == '"' || r == '`' })
	for _, w := range words {
		if err := m.fits("=~ compiling its regular expression", regexpSize(w)); err != nil {
			return err
		}
	}
	return nil
}
