package expr

import "fmt"

// The depends grammar (rule 3.1), with the usual precedence (! over && over ||):
//
//	or      = and { "||" and }
//	and     = unary { "&&" unary }
//	unary   = "!" unary | primary
//	primary = "(" or ")" | operand
//	operand = name [ "." result ]
//	name    = [a-zA-Z0-9] [-a-zA-Z0-9]*   (not starting with a digit)
//	result  = [a-zA-Z]+                   (one of the task results)
//
// Argo finds operands with the regular expressions of common/ancestry.go and
// hands the rest to expr-lang; this grammar accepts the same valid
// expressions and rejects the rest up front with a message that says why.

type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokOperand
	tokAnd
	tokOr
	tokNot
	tokLParen
	tokRParen
)

type dependsToken struct {
	kind tokenKind
	pos  int
	op   Operand
}

type dependsParser struct {
	src    string
	tokens []dependsToken
	next   int
}

// lex splits src into tokens and validates each operand.
func (p *dependsParser) lex() error {
	for i := 0; i < len(p.src); {
		c := p.src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == '!':
			p.tokens = append(p.tokens, dependsToken{kind: singleCharToken(c), pos: i})
			i++
		case c == '&' || c == '|':
			if i+1 >= len(p.src) || p.src[i+1] != c {
				return fmt.Errorf("%w: '%c' at offset %d must be doubled ('%c%c')", ErrDepends, c, i, c, c)
			}
			kind := tokAnd
			if c == '|' {
				kind = tokOr
			}
			p.tokens = append(p.tokens, dependsToken{kind: kind, pos: i})
			i += 2
		case isNameStart(c):
			tok, width, err := p.lexOperand(i)
			if err != nil {
				return err
			}
			p.tokens = append(p.tokens, tok)
			i += width
		default:
			return fmt.Errorf("%w: unexpected character %q at offset %d", ErrDepends, c, i)
		}
	}
	p.tokens = append(p.tokens, dependsToken{kind: tokEOF, pos: len(p.src)})
	return nil
}

func singleCharToken(c byte) tokenKind {
	switch c {
	case '(':
		return tokLParen
	case ')':
		return tokRParen
	}
	return tokNot
}

// lexOperand reads "name" or "name.Result" at i.
func (p *dependsParser) lexOperand(i int) (dependsToken, int, error) {
	n := nameLength(p.src, i)
	name := p.src[i : i+n]
	if isDigit(name[0]) {
		return dependsToken{}, 0, fmt.Errorf("%w: task name '%s' at offset %d starts with a digit", ErrDepends, name, i)
	}
	tok := dependsToken{kind: tokOperand, pos: i, op: Operand{Task: name}}
	if i+n >= len(p.src) || p.src[i+n] != '.' {
		return tok, n, nil
	}
	r := i + n + 1
	for r < len(p.src) && isLetter(p.src[r]) {
		r++
	}
	result := p.src[i+n+1 : r]
	if !isResult(result) {
		return dependsToken{}, 0, fmt.Errorf("%w '%s' for task '%s': it must be one of Succeeded, Failed,"+
			" Errored, Skipped, Omitted, Daemoned, AnySucceeded or AllFailed", ErrTaskResult, result, name)
	}
	tok.op.Result = result
	return tok, r - i, nil
}

// nameLength returns the length of the task name that starts at i (0 if none).
func nameLength(s string, i int) int {
	if i >= len(s) || !isNameStart(s[i]) {
		return 0
	}
	j := i + 1
	for j < len(s) && (isNameStart(s[j]) || s[j] == '-') {
		j++
	}
	return j - i
}

func isNameStart(c byte) bool { return isLetter(c) || isDigit(c) }
func isLetter(c byte) bool    { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool     { return c >= '0' && c <= '9' }

func (p *dependsParser) peek() dependsToken { return p.tokens[p.next] }

func (p *dependsParser) take() dependsToken {
	t := p.tokens[p.next]
	if t.kind != tokEOF {
		p.next++
	}
	return t
}

// operandExpected reports a missing operand at the current position.
func (p *dependsParser) operandExpected() error {
	t := p.peek()
	if t.kind == tokEOF {
		return fmt.Errorf("%w: unexpected end, a task name is missing", ErrDepends)
	}
	return fmt.Errorf("%w: expected a task name, '(' or '!' at offset %d, found %s", ErrDepends, t.pos, p.describe(t))
}

// operatorExpected reports what follows a complete operand where only "&&",
// "||", ")" or the end may.
func (p *dependsParser) operatorExpected() error {
	t := p.peek()
	if t.kind == tokRParen {
		return fmt.Errorf("%w: unbalanced parentheses: ')' at offset %d has no '('", ErrDepends, t.pos)
	}
	return fmt.Errorf("%w: %s at offset %d needs '&&' or '||' before it", ErrDepends, p.describe(t), t.pos)
}

// describe names a token for a message.
func (p *dependsParser) describe(t dependsToken) string {
	switch t.kind {
	case tokOperand:
		return "'" + t.op.Task + "'"
	case tokAnd:
		return "'&&'"
	case tokOr:
		return "'||'"
	case tokNot:
		return "'!'"
	case tokLParen:
		return "'('"
	case tokRParen:
		return "')'"
	}
	return "the end"
}

func (p *dependsParser) parseOr(depth int) (*dependsNode, error) {
	return p.parseBinary(depth, tokOr, kindOr, p.parseAnd)
}

func (p *dependsParser) parseAnd(depth int) (*dependsNode, error) {
	return p.parseBinary(depth, tokAnd, kindAnd, p.parseUnary)
}

// parseBinary parses operand { op operand }, left-associative.
func (p *dependsParser) parseBinary(depth int, op tokenKind, kind dependsKind,
	operand func(int) (*dependsNode, error)) (*dependsNode, error) {
	left, err := operand(depth)
	if err != nil {
		return nil, err
	}
	for p.peek().kind == op {
		p.take()
		right, err := operand(depth)
		if err != nil {
			return nil, err
		}
		left = &dependsNode{kind: kind, kids: []*dependsNode{left, right}}
	}
	return left, nil
}

func (p *dependsParser) parseUnary(depth int) (*dependsNode, error) {
	if depth > maxDependsDepth {
		return nil, fmt.Errorf("%w: nested more than %d deep", ErrDepends, maxDependsDepth)
	}
	t := p.peek()
	switch t.kind {
	case tokNot:
		p.take()
		inner, err := p.parseUnary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &dependsNode{kind: kindNot, kids: []*dependsNode{inner}}, nil
	case tokLParen:
		return p.parseParen(depth)
	case tokOperand:
		p.take()
		return &dependsNode{kind: kindOperand, op: t.op}, nil
	}
	return nil, p.operandExpected()
}

func (p *dependsParser) parseParen(depth int) (*dependsNode, error) {
	open := p.take()
	inner, err := p.parseOr(depth + 1)
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokRParen {
		if p.peek().kind == tokEOF {
			return nil, fmt.Errorf("%w: unbalanced parentheses: '(' at offset %d is not closed", ErrDepends, open.pos)
		}
		return nil, p.operatorExpected()
	}
	p.take()
	return &dependsNode{kind: kindParen, kids: []*dependsNode{inner}}, nil
}
