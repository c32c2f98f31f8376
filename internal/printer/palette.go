package printer

import (
	"strconv"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// ANSI SGR colour codes used by the argo CLI.
const (
	fgRed     = 31
	fgGreen   = 32
	fgYellow  = 33
	fgBlue    = 34
	fgMagenta = 35
	fgCyan    = 36
	fgWhite   = 37
	fgDefault = 39
)

// colorize wraps s as ESC[<code>m s ESC[0m.
func colorize(s string, code int) string {
	return "\x1b[" + strconv.Itoa(code) + "m" + s + "\x1b[0m"
}

// palette holds the icons, connectors and colour switch of one rendering.
type palette struct {
	color bool
	utf8  bool
}

func newPalette(o Options) palette { return palette{color: !o.NoColor, utf8: !o.NoUTF8} }

func (p palette) paint(s string, code int) string {
	if !p.color {
		return s
	}
	return colorize(s, code)
}

// phaseIcon is the icon of a node phase; Omitted and unknown phases have
// none.
func (p palette) phaseIcon(phase v1alpha1.NodePhase) string {
	var glyph, word string
	var code int
	switch phase {
	case v1alpha1.NodePending:
		glyph, word, code = "◷", "Pending", fgYellow
	case v1alpha1.NodeRunning:
		glyph, word, code = "●", "Running", fgCyan
	case v1alpha1.NodeSucceeded:
		glyph, word, code = "✔", "Succeeded", fgGreen
	case v1alpha1.NodeSkipped:
		glyph, word, code = "○", "Skipped", fgDefault
	case v1alpha1.NodeFailed:
		glyph, word, code = "✖", "Failed", fgRed
	case v1alpha1.NodeError:
		glyph, word, code = "⚠", "Error", fgRed
	default:
		return ""
	}
	return p.pick(glyph, word, code)
}

// PhaseIcon is the icon the tree shows for a node phase ("" for Omitted),
// with o's colour and UTF-8 choices.
func PhaseIcon(phase v1alpha1.NodePhase, o Options) string { return newPalette(o).phaseIcon(phase) }

// suspendIcon replaces the phase icon of a running Suspend node.
func (p palette) suspendIcon() string { return p.pick("ǁ", "Suspend", fgCyan) }

// conditionIcon is the icon of a workflow condition; only MetricsError and
// SpecWarning have one.
func (p palette) conditionIcon(t v1alpha1.ConditionType) string {
	switch t {
	case v1alpha1.ConditionTypeMetricsError:
		return p.pick("✖", "Error", fgRed)
	case v1alpha1.ConditionTypeSpecWarning:
		return p.pick("⚠", "Warning", fgYellow)
	}
	return ""
}

func (p palette) pick(glyph, word string, code int) string {
	if p.utf8 {
		return p.paint(glyph, code)
	}
	return p.paint(word, code)
}

// Tree connectors: a child's own connector and the continuation its
// descendants draw below it.
type connector struct{ own, below string }

var (
	utf8Mid    = connector{"├─", "│ "}
	utf8Last   = connector{"└─", "  "}
	utf8First  = connector{"┬─", "│ "} // first of several children of a hidden step group
	utf8Only   = connector{"──", "  "} // only child of a hidden step group
	asciiMid   = connector{"|-", "| "}
	asciiLast  = connector{"`-", "  "}
	asciiFirst = connector{"+-", "| "}
	asciiOnly  = connector{"--", "  "}
)

// childConnector picks the connector of child i (of last+1) of a node.
// Children of a hidden step group continue their parent's line: "──" for an
// only child, "┬─" for the first. Children of other hidden nodes draw none.
func (p palette) childConnector(parentHidden, groupIndent bool, i, last int) connector {
	mid, end, first, only := utf8Mid, utf8Last, utf8First, utf8Only
	if !p.utf8 {
		mid, end, first, only = asciiMid, asciiLast, asciiFirst, asciiOnly
	}
	switch {
	case parentHidden && !groupIndent:
		return connector{}
	case parentHidden && last == 0:
		return only
	case parentHidden && i == 0:
		return first
	case i == last:
		return end
	default:
		return mid
	}
}
