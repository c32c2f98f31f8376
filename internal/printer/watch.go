package printer

import (
	"io"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// ClearScreen is what the CLI writes to stderr before each watch frame:
// cursor home, clear the screen, cursor to the top-left corner.
const ClearScreen = "\x1b[H\x1b[2J\x1b[0;0H"

// WriteWatchFrame writes one `argo watch` frame: ClearScreen to stderr, then
// the `argo get` view of wf to stdout. A nil wf (no event yet) writes
// nothing. The caller stops watching once status.finishedAt is set.
func WriteWatchFrame(stdout, stderr io.Writer, wf *v1alpha1.Workflow, o Options) error {
	if wf == nil {
		return nil
	}
	if _, err := io.WriteString(stderr, ClearScreen); err != nil {
		return err
	}
	return WriteGet(stdout, wf, o)
}

// WaitLine is the line `argo wait` and `submit --wait` print for a finished
// workflow, without its newline: "<name> <phase> at <finishedAt>", the time
// in Go's default format in local time, as the CLI decodes it, for example
// "steps-xk9vq Succeeded at 2026-11-30 09:00:20 +0000 UTC".
func WaitLine(wf *v1alpha1.Workflow) string {
	var at time.Time
	if !wf.Status.FinishedAt.IsZero() {
		at = seconds(wf.Status.FinishedAt.Time).Local()
	}
	return wf.Name + " " + string(wf.Status.Phase) + " at " + at.String()
}

// LogLine is one `argo logs` line, without its newline: "<pod>: <content>".
// With color the whole line takes a colour picked from the pod name (the sum
// of its code points modulo 6 indexes green, yellow, blue, magenta, cyan,
// white), so each pod keeps its colour.
func LogLine(podName, content string, color bool) string {
	line := podName + ": " + content
	if !color {
		return line
	}
	sum := 0
	for _, c := range podName {
		sum += int(c)
	}
	codes := [...]int{fgGreen, fgYellow, fgBlue, fgMagenta, fgCyan, fgWhite}
	return colorize(line, codes[sum%len(codes)])
}
