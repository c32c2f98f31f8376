package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// progressView shows a running workflow. On a terminal it redraws the
// `argo get` view in place, at most every redrawEvery; otherwise it prints
// one line for each change of a node's phase.
type progressView struct {
	w       io.Writer
	tty     bool
	noColor bool

	mu       sync.Mutex
	lastDraw time.Time
	lines    int                // lines of the last frame, to move back over them
	pending  *v1alpha1.Workflow // a frame skipped by the throttle
	phases   map[string]v1alpha1.NodePhase
	wfPhase  v1alpha1.WorkflowPhase
	stop     chan struct{}
	stopped  sync.WaitGroup
}

const redrawEvery = 100 * time.Millisecond

func newProgressView(w io.Writer, noColor bool) *progressView {
	v := &progressView{w: w, tty: isTerminal(w), noColor: noColor, phases: map[string]v1alpha1.NodePhase{}, stop: make(chan struct{})}
	if v.tty {
		v.stopped.Add(1)
		go v.ticker()
	}
	return v
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb"
}

// observe is the controller's Observer.
func (v *progressView) observe(wf *v1alpha1.Workflow, changed []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.tty {
		v.printLines(wf, changed)
		return
	}
	if time.Since(v.lastDraw) >= redrawEvery {
		v.draw(wf)
		return
	}
	v.pending = wf.DeepCopy()
}

func (v *progressView) ticker() {
	defer v.stopped.Done()
	t := time.NewTicker(redrawEvery)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			return
		case <-t.C:
			v.mu.Lock()
			if v.pending != nil {
				v.draw(v.pending)
			}
			v.mu.Unlock()
		}
	}
}

// draw replaces the previous frame with the get view of wf.
func (v *progressView) draw(wf *v1alpha1.Workflow) {
	var buf bytes.Buffer
	_ = printer.WriteGet(&buf, wf, printer.Options{NoColor: v.noColor, Now: time.Now()})
	if v.lines > 0 {
		fmt.Fprintf(v.w, "\x1b[%dA\x1b[J", v.lines)
	}
	v.lines = bytes.Count(buf.Bytes(), []byte("\n"))
	_, _ = v.w.Write(buf.Bytes())
	v.lastDraw = time.Now()
	v.pending = nil
}

// printLines prints one line per node whose phase changed, and one per
// change of the workflow's phase.
func (v *progressView) printLines(wf *v1alpha1.Workflow, changed []string) {
	for _, id := range changed {
		n, ok := wf.Status.Nodes[id]
		if !ok || v.phases[id] == n.Phase {
			continue
		}
		v.phases[id] = n.Phase
		line := fmt.Sprintf("%s %s %s %s %s", time.Now().Format("15:04:05"), phaseIcon(n), n.Name, n.Type, n.Phase)
		if n.Phase.Completed() && !n.StartedAt.IsZero() && !n.FinishedAt.IsZero() {
			line += " " + printer.ShortDuration(n.FinishedAt.Sub(n.StartedAt.Time))
		}
		if n.Message != "" {
			line += ": " + n.Message
		}
		fmt.Fprintln(v.w, line)
	}
	if wf.Status.Phase != v.wfPhase {
		v.wfPhase = wf.Status.Phase
		fmt.Fprintf(v.w, "%s workflow %s %s\n", time.Now().Format("15:04:05"), wf.Name, wf.Status.Phase)
	}
}

func phaseIcon(n v1alpha1.NodeStatus) string {
	if icon := printer.PhaseIcon(n.Phase, printer.Options{NoColor: true}); icon != "" {
		return icon
	}
	return " "
}

// note prints a message outside the frame.
func (v *progressView) note(msg string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	fmt.Fprintln(v.w, msg)
	v.lines = 0
}

// finish draws the final view: the full get view with the outputs.
func (v *progressView) finish(wf *v1alpha1.Workflow) {
	if v.tty {
		close(v.stop)
		v.stopped.Wait()
	}
	if wf == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tty {
		v.draw(wf)
		return
	}
	fmt.Fprintln(v.w)
	_ = printer.WriteGet(v.w, wf, printer.Options{NoColor: true, Now: time.Now()})
}
