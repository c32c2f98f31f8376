package builtins

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// cowWidth is the widest line of the speech bubble, as cowsay's default.
const cowWidth = 40

const cow = `    \
     \   /)  (\
      \ ( o..o )____________
         \ (__)            ,\
          '-.____________,'  ~
            ||  ||    ||  ||
`

// Cowsay prints args, joined by spaces, in a speech bubble above a cow, and
// returns 0. Long messages are wrapped at 40 columns; newlines are kept.
func Cowsay(args []string, stdout io.Writer) int {
	lines := wrap(strings.Join(args, " "), cowWidth)
	width := 0
	for _, l := range lines {
		width = max(width, utf8.RuneCountInString(l))
	}
	var b strings.Builder
	b.WriteString(" " + strings.Repeat("_", width+2) + "\n")
	for i, l := range lines {
		left, right := "|", "|"
		switch {
		case len(lines) == 1:
			left, right = "<", ">"
		case i == 0:
			left, right = "/", "\\"
		case i == len(lines)-1:
			left, right = "\\", "/"
		}
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(l))
		fmt.Fprintf(&b, "%s %s%s %s\n", left, l, pad, right)
	}
	b.WriteString(" " + strings.Repeat("-", width+2) + "\n")
	b.WriteString(cow)
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return 1
	}
	return 0
}

// wrap splits s into lines of at most width runes, breaking at spaces where
// it can and inside words only when a word is longer than a line.
func wrap(s string, width int) []string {
	s = strings.ReplaceAll(s, "\t", "    ")
	var out []string
	for para := range strings.SplitSeq(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			for utf8.RuneCountInString(word) > width {
				if line != "" {
					out = append(out, line)
					line = ""
				}
				r := []rune(word)
				out = append(out, string(r[:width]))
				word = string(r[width:])
			}
			switch {
			case line == "":
				line = word
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
				line += " " + word
			default:
				out = append(out, line)
				line = word
			}
		}
		out = append(out, line)
	}
	return out
}
