package printer

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// ListOptions control the `argo list` table.
type ListOptions struct {
	// AllNamespaces adds the leading NAMESPACE column (-A).
	AllNamespaces bool
	// NoHeaders drops the header row (--no-headers).
	NoHeaders bool
	// Output is "" (the default table), "wide", "name" or "json". "yaml" is
	// left to the caller, which owns the YAML encoder.
	Output string
	// UID adds a trailing UID column (`argo archive list`).
	UID bool
	// Now is the clock reading for AGE and for the DURATION of unfinished
	// workflows; the zero value means time.Now().
	Now time.Time
}

// WriteList writes the `argo list` output for wfs, sorted as the CLI sorts
// them: unfinished workflows first, newest created first, then finished ones,
// latest finished first. wfs itself is not reordered.
func WriteList(w io.Writer, wfs []*v1alpha1.Workflow, o ListOptions) error {
	if len(wfs) == 0 {
		msg := "No workflows found\n"
		if o.Output == "json" || o.Output == "yaml" {
			msg = "[]\n"
		}
		_, err := io.WriteString(w, msg)
		return err
	}
	sorted := append([]*v1alpha1.Workflow(nil), wfs...)
	SortWorkflows(sorted)

	var b strings.Builder
	switch o.Output {
	case "", "wide":
		now := o.Now
		if now.IsZero() {
			now = time.Now()
		}
		if err := writeTable(&b, sorted, o, now); err != nil {
			return err
		}
		writeCostHint(&b, sorted)
	case "name":
		for _, wf := range sorted {
			b.WriteString(wf.Name + "\n")
		}
	case "json":
		out, err := json.MarshalIndent(sorted, "", "  ")
		if err != nil {
			return err
		}
		b.Write(out)
		b.WriteString("\n")
	default:
		return fmt.Errorf("unknown output mode: %s", o.Output)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SortWorkflows sorts wfs in the order of `argo list`: unfinished workflows
// first, newest created first, then finished ones, latest finished first.
// Ties keep their order. It is v1alpha1.SortWorkflows, which the server's
// list stream uses too.
func SortWorkflows(wfs []*v1alpha1.Workflow) { v1alpha1.SortWorkflows(wfs) }

// seconds drops the fraction the JSON form of a time does not carry.
func seconds(t time.Time) time.Time { return t.Truncate(time.Second) }

func writeTable(b *strings.Builder, wfs []*v1alpha1.Workflow, o ListOptions, now time.Time) error {
	tw := tabwriter.NewWriter(b, 0, 0, 3, ' ', 0)
	if !o.NoHeaders {
		if o.AllNamespaces {
			fmt.Fprint(tw, "NAMESPACE\t")
		}
		fmt.Fprint(tw, "NAME\tSTATUS\tAGE\tDURATION\tPRIORITY\tMESSAGE")
		if o.Output == "wide" {
			fmt.Fprint(tw, "\tP/R/C\tPARAMETERS")
		}
		if o.UID {
			fmt.Fprint(tw, "\tUID")
		}
		fmt.Fprint(tw, "\n")
	}
	for _, wf := range wfs {
		if o.AllNamespaces {
			fmt.Fprintf(tw, "%s\t", wf.Namespace)
		}
		var priority int32
		if wf.Spec.Priority != nil {
			priority = *wf.Spec.Priority
		}
		age := spanShort(wireTime(wf.CreationTimestamp, now), now, now)
		duration := spanShort(wireTime(wf.Status.StartedAt, now), wireTime(wf.Status.FinishedAt, now), now)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s", wf.Name, WorkflowStatus(wf), age, duration, priority, wf.Status.Message)
		if o.Output == "wide" {
			pending, running, completed := podCounts(wf)
			fmt.Fprintf(tw, "\t%d/%d/%d\t%s", pending, running, completed, parameterSummary(wf.Spec.Arguments.Parameters))
		}
		if o.UID {
			fmt.Fprintf(tw, "\t%s", wf.UID)
		}
		fmt.Fprint(tw, "\n")
	}
	return tw.Flush()
}

// podCounts is the P/R/C cell: Pod nodes that are pending, running, and
// fulfilled (ended, skipped, or a daemon past Pending).
func podCounts(wf *v1alpha1.Workflow) (pending, running, completed int) {
	for _, n := range wf.Status.Nodes {
		if n.Type != v1alpha1.NodeTypePod {
			continue
		}
		daemon := n.Daemoned != nil && *n.Daemoned && n.Phase != v1alpha1.NodePending
		switch {
		case n.Phase.Fulfilled() || daemon:
			completed++
		case n.Phase == v1alpha1.NodeRunning:
			running++
		default:
			pending++
		}
	}
	return pending, running, completed
}

// parameterSummary is the PARAMETERS cell: name=value for each argument
// with a value. A value longer than 50 bytes keeps its first 32 and last 15
// bytes around "...".
func parameterSummary(params []v1alpha1.Parameter) string {
	parts := make([]string, 0, len(params))
	for _, p := range params {
		if p.Value == nil {
			continue
		}
		v := p.Value.String()
		if len(v) > 50 {
			v = v[:32] + "..." + v[len(v)-15:]
		}
		parts = append(parts, p.Name+"="+v)
	}
	return strings.Join(parts, ",")
}

// writeCostHint adds the CLI's two-line hint when the list holds more than
// 100 completed or more than 100 incomplete workflows.
func writeCostHint(b *strings.Builder, wfs []*v1alpha1.Workflow) {
	completed, incomplete := 0, 0
	for _, wf := range wfs {
		if wf.Status.Phase.Completed() {
			completed++
		} else {
			incomplete++
		}
	}
	if completed <= 100 && incomplete <= 100 {
		return
	}
	b.WriteString("\nYou have at least ")
	if incomplete > 100 {
		fmt.Fprintf(b, "%d incomplete ", incomplete)
	}
	if incomplete > 100 && completed > 100 {
		b.WriteString("and ")
	}
	if completed > 100 {
		fmt.Fprintf(b, "%d completed ", completed)
	}
	b.WriteString("workflows. Reducing the total number of workflows will reduce your costs.\n")
	b.WriteString("Learn more at https://argo-workflows.readthedocs.io/en/latest/cost-optimisation/\n")
}
