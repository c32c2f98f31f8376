package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Mode says what happens to a tag that does not resolve (rule 0.2, 6.9).
type Mode uint8

const (
	// Lenient leaves an unknown simple tag, and an expression tag that fails
	// or gives nil, exactly as written. Leaf template bodies (container, args,
	// env, script source), exit-handler and hook arguments use it.
	Lenient Mode = iota
	// Strict fails on any tag that does not resolve, with ErrUnresolved
	// ("failed to resolve {{X}}") for an unknown variable and ErrExpression
	// for an expression that fails. Loop expansion uses it.
	Strict
	// StrictRefs is strict for variables under "steps" and "tasks" (a
	// missing one is ErrUnresolved, so the caller waits) and lenient for the
	// rest, as Argo's ReplaceStrict with the prefixes steps and tasks (rule
	// 4.1 step 1, rule 6.9). Two details follow Argo:
	//   - a simple tag under ".outputs.artifacts." may stay unresolved, since
	//     artifact references are resolved later;
	//   - an expression tag whose variables all exist must evaluate: if it
	//     fails or gives nil, that is ErrExpression. If some non-strict
	//     variable is missing, a failure leaves the tag as written.
	StrictRefs
)

// String returns the name of the mode.
func (m Mode) String() string {
	switch m {
	case Lenient:
		return "Lenient"
	case Strict:
		return "Strict"
	case StrictRefs:
		return "StrictRefs"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// strictFor reports whether a missing variable path must fail.
func (m Mode) strictFor(path string) bool {
	switch m {
	case Strict:
		return true
	case StrictRefs:
		return isRef(path)
	}
	return false
}

// isRef reports whether path is under steps or tasks (a whole dot segment, so
// "stepsX" is not).
func isRef(path string) bool {
	for _, p := range [...]string{"steps", "tasks"} {
		if path == p || strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}

// deferredRoots are variables that a later pass provides: the loop item,
// retry attempt variables, and the final workflow status and failures. An
// expression that reads one of them while it is missing is left as written
// in a non-strict mode, even when evaluating it would succeed (for example
// "workflow.status == 'Failed'" would otherwise give false, Argo issues 5388
// and 10393).
func isDeferred(path string) bool {
	for _, root := range [...]string{"item", "retries", "lastRetry", "workflow.status", "workflow.failures"} {
		if path == root || strings.HasPrefix(path, root+".") {
			return true
		}
	}
	return false
}

// Replace substitutes the tags of plain text s from scope. Simple tags
// {{key}} are looked up exactly (after trimming blanks); expression tags
// {{= expr }} are evaluated with expr-lang over Expand(scope) plus the helper
// functions. A string result is inserted as it is; any other result as its
// JSON encoding ({{=1+1}} gives 2, {{=[1,2]}} gives [1,2]). An unterminated
// "{{" is left as it is in every mode. It is DefaultBudget.Replace.
func Replace(s string, scope Scope, mode Mode) (string, error) {
	return DefaultBudget.Replace(s, scope, mode)
}

// Replace is the package-level Replace within budget b. The budget is for
// the whole pass: all the expression tags of s together may build at most
// b.Bytes and run at most b.Time. A tag that exceeds it fails with ErrBudget
// (and ErrExpression) in every mode, Lenient included.
func (b Budget) Replace(s string, scope Scope, mode Mode) (string, error) {
	r := replacer{scope: scope, mode: mode, budget: b}
	return r.run(s)
}

// ReplaceJSON is Replace for JSON text, such as a template, step or argument
// list marshalled to JSON (rule 0.2). Tags are found inside JSON strings,
// their bodies are JSON-unescaped before use, and every inserted value is
// JSON-string-escaped, so values with quotes or newlines keep the JSON
// structure. The input must be valid JSON, and the output is checked to be;
// otherwise the error is ErrInvalidJSON. It is DefaultBudget.ReplaceJSON.
func ReplaceJSON(jsonText string, scope Scope, mode Mode) (string, error) {
	return DefaultBudget.ReplaceJSON(jsonText, scope, mode)
}

// ReplaceJSON is the package-level ReplaceJSON within budget b, for the
// whole pass as Budget.Replace.
func (b Budget) ReplaceJSON(jsonText string, scope Scope, mode Mode) (string, error) {
	if !json.Valid([]byte(jsonText)) {
		return "", fmt.Errorf("%w: cannot substitute tags in text that is not JSON", ErrInvalidJSON)
	}
	r := replacer{scope: scope, mode: mode, jsonText: true, budget: b}
	out, err := r.run(jsonText)
	if err != nil {
		return "", err
	}
	if !json.Valid([]byte(out)) {
		return "", fmt.Errorf("%w: the text after substitution is not JSON", ErrInvalidJSON)
	}
	return out, nil
}

// replacer holds one substitution pass. env, the expression environment, and
// its meter are built on the first expression tag.
type replacer struct {
	scope    Scope
	mode     Mode
	jsonText bool
	budget   Budget
	meter    *meter
	env      map[string]any
}

func (r *replacer) run(s string) (string, error) {
	tags := scanTags(s, r.jsonText)
	if len(tags) == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, t := range tags {
		b.WriteString(s[last:t.Start])
		out, err := r.tag(s[t.Start:t.End], t)
		if err != nil {
			return "", err
		}
		b.WriteString(out)
		last = t.End
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// tag returns the replacement for one tag; raw is the tag as written.
func (r *replacer) tag(raw string, t Tag) (string, error) {
	body := t.Body
	if r.jsonText {
		text, err := unescapeJSON(body)
		if err != nil {
			return r.unusable(raw, err)
		}
		body = text
	}
	if t.Expr {
		return r.expression(raw, body)
	}
	return r.simple(raw, body)
}

// unusable handles a tag whose body cannot be decoded from the JSON text (it
// spans the end of a JSON string). Strict mode fails; the error is terminal.
func (r *replacer) unusable(raw string, err error) (string, error) {
	if r.mode == Strict {
		return "", fmt.Errorf("%w: tag %s: %w", ErrInvalidJSON, raw, err)
	}
	return raw, nil
}

// simple resolves {{key}}.
func (r *replacer) simple(raw, key string) (string, error) {
	v, ok := r.scope[key]
	if !ok {
		if r.mode.strictFor(key) && !(r.mode == StrictRefs && strings.Contains(key, ".outputs.artifacts.")) {
			return "", fmt.Errorf("%w {{%s}}", ErrUnresolved, key)
		}
		return raw, nil
	}
	switch v := v.(type) {
	case nil:
		return "", fmt.Errorf("{{%s}} %w: its producer was skipped or omitted and declares no default;"+
			" use a default or an expression with ??", key, ErrAbsentOptional)
	case string:
		return r.encode(v), nil
	}
	if r.mode == Strict {
		return "", fmt.Errorf("{{%s}} %w: it is a %T", key, ErrNotString, v)
	}
	return raw, nil
}

// expression resolves {{= src }}.
func (r *replacer) expression(raw, src string) (string, error) {
	tree, err := parseTree(src)
	if err != nil {
		return r.failed(raw, src, false, err)
	}
	env := r.environment()
	var missing []string
	for _, segs := range referencedPaths(tree) {
		if !lookupPath(env, segs) {
			missing = append(missing, strings.Join(segs, "."))
		}
	}
	if path := longestStrict(missing, r.mode); path != "" {
		return "", fmt.Errorf("%w {{=%s}}: %s is missing", ErrUnresolved, src, path)
	}
	for _, path := range missing {
		if isDeferred(path) {
			return raw, nil
		}
	}
	v, err := r.meter.evaluate(src, env)
	if err == nil && v == nil {
		err = errors.New("the result is nil")
	}
	if err != nil {
		return r.failed(raw, src, len(missing) > 0, err)
	}
	text, err := r.resultText(v)
	if err != nil {
		return r.failed(raw, src, len(missing) > 0, err)
	}
	return r.encode(text), nil
}

// longestStrict returns the longest missing path that must resolve in mode,
// or "". The walk reports a.b before a.b.c; the full path reads better.
func longestStrict(missing []string, mode Mode) string {
	longest := ""
	for _, path := range missing {
		if mode.strictFor(path) && len(path) > len(longest) {
			longest = path
		}
	}
	return longest
}

// failed decides what a failing expression tag gives: the tag as written, or
// an error (Strict always; StrictRefs when no variable was missing).
func (r *replacer) failed(raw, src string, someMissing bool, err error) (string, error) {
	if errors.Is(err, ErrBudget) {
		return "", budgetFailure(err, ErrExpression, fmt.Sprintf("{{=%s}}", clip(src)))
	}
	if r.mode == Strict || (r.mode == StrictRefs && !someMissing) {
		return "", newTextError(ErrExpression, err,
			fmt.Sprintf("failed to evaluate expression {{=%s}}: %v", src, err))
	}
	return raw, nil
}

func (r *replacer) environment() map[string]any {
	if r.env == nil {
		r.meter = r.budget.newMeter()
		r.env = withFunctions(Expand(r.scope), r.meter)
	}
	return r.env
}

// encode prepares a value for insertion: as it is in plain text, escaped as
// the inside of a JSON string in JSON text.
func (r *replacer) encode(v string) string {
	if !r.jsonText {
		return v
	}
	return escapeJSON(v)
}

// resultText turns an expression result into text: a string as it is, any
// other value as its JSON encoding (Go's json.Marshal, as Argo), charged
// before it is made.
func (r *replacer) resultText(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	n, err := sizeOf(v, jsonSize, r.meter.room())
	if err == nil {
		err = r.meter.charge("the JSON of the result", n)
	}
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("cannot encode the result as JSON: %w", err)
	}
	return string(b), nil
}

// escapeJSON returns s encoded as a JSON string without the outer quotes.
// Argo uses strconv.Quote, which gives the same value after decoding for
// valid text but writes Go escapes such as \x1b that are not JSON; a JSON
// encoder keeps the result valid for any input.
func escapeJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return ""
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}

// unescapeJSON decodes the inside of a JSON string.
func unescapeJSON(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var out string
	if err := json.Unmarshal([]byte(`"`+s+`"`), &out); err != nil {
		return "", fmt.Errorf("cannot decode the JSON escapes of the tag: %w", err)
	}
	return out, nil
}
