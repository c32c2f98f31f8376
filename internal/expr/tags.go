package expr

import "strings"

// Tag is one {{ ... }} tag found in a text.
type Tag struct {
	// Start is the byte offset of the opening "{{".
	Start int
	// End is the byte offset just past the closing "}}", so s[Start:End] is
	// the whole tag as written.
	End int
	// Body is the text between the braces with surrounding blanks trimmed.
	// For an expression tag it is the text after "=", trimmed.
	Body string
	// Expr is true for an expression tag "{{= ... }}" (the "=" must follow
	// "{{" directly; "{{ =x}}" is a simple tag whose key is "=x", as in Argo).
	Expr bool
}

// Tags returns the tags of s in order. It never fails: text that does not form
// a tag is not reported. The rules follow Argo's scanner (fasttemplate):
//   - A simple tag ends at the first "}}". If its body contains "{{", the
//     text up to the last of them is plain text and the tag starts there
//     (Argo resolves such a "nested" tag the same way).
//   - An expression tag ends at the first "}}" that is outside string literals
//     and outside braces opened in the expression, so "{{={'k':1}}}" is one tag
//     with body "{'k':1}". If no such "}}" exists, it ends at the first "}}".
//   - An unterminated "{{" (no "}}" after it) and everything after it are text.
func Tags(s string) []Tag {
	return scanTags(s, false)
}

// scanTags finds the tags of s. With jsonText, s is JSON text: string escapes
// such as \" are decoded while looking for the end of an expression tag, and
// an unescaped '"' (the end of the JSON string) stops the search.
func scanTags(s string, jsonText bool) []Tag {
	var tags []Tag
	for i := 0; i < len(s); {
		open := strings.Index(s[i:], "{{")
		if open < 0 {
			break
		}
		tag, resume, found := scanTag(s, i+open, jsonText)
		if found {
			tags = append(tags, tag)
		}
		i = resume
	}
	return tags
}

// scanTag reads the tag that opens at start. It returns found=false with the
// offset to resume scanning from when there is no tag there: len(s) for an
// unterminated tag, or the offset of the last nested "{{".
func scanTag(s string, start int, jsonText bool) (tag Tag, resume int, found bool) {
	bodyStart := start + 2
	if bodyStart < len(s) && s[bodyStart] == '=' {
		end := expressionEnd(s, bodyStart+1, jsonText)
		if end < 0 {
			return Tag{}, len(s), false
		}
		body := strings.TrimSpace(s[bodyStart+1 : end])
		return Tag{Start: start, End: end + 2, Body: body, Expr: true}, end + 2, true
	}
	rel := strings.Index(s[bodyStart:], "}}")
	if rel < 0 {
		return Tag{}, len(s), false
	}
	body := s[bodyStart : bodyStart+rel]
	if inner := strings.LastIndex(body, "{{"); inner >= 0 {
		return Tag{}, bodyStart + inner, false
	}
	end := bodyStart + rel + 2
	return Tag{Start: start, End: end, Body: strings.TrimSpace(body)}, end, true
}

// expressionEnd returns the offset of the "}}" that closes an expression tag
// whose body starts at from, or -1 when there is no "}}" at all.
func expressionEnd(s string, from int, jsonText bool) int {
	first := strings.Index(s[from:], "}}")
	if first < 0 {
		return -1
	}
	if end := balancedEnd(s, from, jsonText); end >= 0 {
		return end
	}
	return from + first
}

// rawQuote is what logicalChar returns for an unescaped '"' in JSON text.
const rawQuote = -1

// balancedEnd looks for the first "}}" outside string literals and outside
// braces opened after from. It gives up (-1) at the end of s, at the end of
// the JSON string in JSON text, or at a "{{" outside strings (likely the next
// tag), which also keeps scanning linear.
func balancedEnd(s string, from int, jsonText bool) int {
	depth := 0
	quote := 0
	for p := from; p < len(s); {
		c, w := logicalChar(s, p, jsonText)
		switch {
		case c == rawQuote:
			return -1
		case quote != 0:
			if c == '\\' && p+w < len(s) {
				_, w2 := logicalChar(s, p+w, jsonText)
				w += w2
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '{':
			if strings.HasPrefix(s[p:], "{{") {
				return -1
			}
			depth++
		case c == '}':
			if depth > 0 {
				depth--
			} else if p+1 < len(s) && s[p+1] == '}' {
				return p
			}
		}
		p += w
	}
	return -1
}

// logicalChar decodes the character at p and returns it with its width in s.
// In plain text every byte is a character. In JSON text a backslash escape is
// one character (\" is '"', \\ is '\', \u0027 is a single quote), and an unescaped '"'
// is rawQuote.
func logicalChar(s string, p int, jsonText bool) (c, width int) {
	if !jsonText {
		return int(s[p]), 1
	}
	switch {
	case s[p] == '"':
		return rawQuote, 1
	case s[p] != '\\' || p+1 >= len(s):
		return int(s[p]), 1
	case s[p+1] == 'u':
		return unicodeEscape(s, p)
	default:
		return jsonEscapeChar(s[p+1]), 2
	}
}

// jsonEscapeChar maps the letter after a JSON backslash to its character.
func jsonEscapeChar(b byte) int {
	switch b {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	}
	return int(b)
}

// unicodeEscape decodes "\uXXXX" at p. An incomplete escape counts as the
// letter 'u'.
func unicodeEscape(s string, p int) (c, width int) {
	if p+6 > len(s) {
		return 'u', 2
	}
	v := 0
	for _, h := range []byte(s[p+2 : p+6]) {
		d := hexDigit(h)
		if d < 0 {
			return 'u', 2
		}
		v = v*16 + d
	}
	return v, 6
}

func hexDigit(h byte) int {
	switch {
	case h >= '0' && h <= '9':
		return int(h - '0')
	case h >= 'a' && h <= 'f':
		return int(h-'a') + 10
	case h >= 'A' && h <= 'F':
		return int(h-'A') + 10
	}
	return -1
}
