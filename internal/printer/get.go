package printer

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Options control the `argo get` view (also used by watch, submit, retry and
// resubmit).
type Options struct {
	// NoColor turns off ANSI colours (--no-color). The CLI also turns them
	// off when TERM is "dumb"; that check is the caller's.
	NoColor bool
	// NoUTF8 swaps the icons and tree connectors for ASCII (--no-utf8).
	NoUTF8 bool
	// Output is "" (the default view), "wide", "short", "name" or "json".
	// "yaml" is left to the caller, which owns the YAML encoder.
	Output string
	// Now is the clock reading for "ago" texts and for the durations of
	// unfinished nodes; the zero value means time.Now(). Times are shown in
	// Now's location (the CLI shows local time).
	Now time.Time
	// StatusFilter keeps only nodes in one of these phases (--status).
	StatusFilter []string
	// NodeFieldSelector keeps only nodes matching this field selector
	// (--node-field-selector), for example "phase!=Succeeded".
	NodeFieldSelector string
}

// Header labels are printed as "%-20s %v\n".
const headerFmt = "%-20s %v\n"

// WriteGet writes the `argo get` view of wf: the header block, then the node
// tree when status.nodes holds the root node. With Output "short" only the
// tree is written (or the header block when there is no tree); "name" and
// "json" write the name or the 4-space-indented JSON. It fails for an
// unknown Output, an invalid selector, or a node without a type.
func WriteGet(w io.Writer, wf *v1alpha1.Workflow, o Options) error {
	var out string
	switch o.Output {
	case "name":
		out = wf.Name + "\n"
	case "json":
		b, err := json.MarshalIndent(wf, "", "    ")
		if err != nil {
			return err
		}
		out = string(b) + "\n"
	case "", "wide", "short":
		var err error
		if out, err = getView(wf, o); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown output format: %s", o.Output)
	}
	_, err := io.WriteString(w, out)
	return err
}

// getView is the header block and the tree.
func getView(wf *v1alpha1.Workflow, o Options) (string, error) {
	now := o.now()
	p := newPalette(o)
	var b strings.Builder
	h := header{b: &b, now: now}
	h.identity(wf, p)
	h.times(wf)
	h.arguments(wf)
	h.outputs(wf.Status.Outputs)

	if _, ok := wf.Status.Nodes[wf.Name]; !ok {
		return b.String(), nil // no tree: even "short" shows the header
	}
	tree, err := renderTree(wf, o, p, now)
	if err != nil {
		return "", err
	}
	if o.Output == "short" {
		return tree, nil
	}
	return b.String() + "\n" + tree, nil
}

// header writes the lines of `argo get`'s header block.
type header struct {
	b   *strings.Builder
	now time.Time
}

// line writes one "Label: value" line.
func (h header) line(label string, value any) { fmt.Fprintf(h.b, headerFmt, label, value) }

// at is a wire time as shown, relative to now.
func (h header) at(mt metav1.Time) time.Time { return wireTime(mt, h.now) }

// runSpec is the spec the workflow runs: the stored one once it has started.
func runSpec(wf *v1alpha1.Workflow) *v1alpha1.WorkflowSpec {
	if wf.Status.StoredWorkflowSpec != nil {
		return wf.Status.StoredWorkflowSpec
	}
	return &wf.Spec
}

// identity writes the name, the service account, the status and the
// conditions.
func (h header) identity(wf *v1alpha1.Workflow, p palette) {
	h.line("Name:", wf.Name)
	h.line("Namespace:", wf.Namespace)
	sa := runSpec(wf).ServiceAccountName
	if sa == "" {
		if wf.Spec.WorkflowTemplateRef != nil {
			sa = "unset"
		} else {
			sa = "unset (will run with the default ServiceAccount)"
		}
	}
	h.line("ServiceAccount:", sa)
	h.line("Status:", WorkflowStatus(wf))
	if wf.Status.Message != "" {
		h.line("Message:", wf.Status.Message)
	}
	if len(wf.Status.Conditions) > 0 {
		h.line("Conditions:", "")
		for _, c := range wf.Status.Conditions {
			msg := c.Message
			if msg == "" {
				msg = string(c.Status)
			}
			h.line(p.conditionIcon(c.Type)+" "+string(c.Type), msg)
		}
	}
}

// times writes when the workflow was created, started and finished, how
// long it ran, its progress and the resources it used.
func (h header) times(wf *v1alpha1.Workflow) {
	now := h.now
	h.line("Created:", Timestamp(h.at(wf.CreationTimestamp), now))
	started, finished := h.at(wf.Status.StartedAt), h.at(wf.Status.FinishedAt)
	if !started.IsZero() {
		h.line("Started:", Timestamp(started, now))
	}
	if !finished.IsZero() {
		h.line("Finished:", Timestamp(finished, now))
	}
	if !started.IsZero() {
		h.line("Duration:", spanLong(started, finished, now))
	}
	if wf.Status.Phase == v1alpha1.WorkflowRunning && wf.Status.EstimatedDuration > 0 {
		h.line("EstimatedDuration:", HumanDuration(time.Duration(wf.Status.EstimatedDuration)*time.Second))
	}
	h.line("Progress:", wf.Status.Progress)
	if len(wf.Status.ResourcesDuration) > 0 {
		h.line("ResourcesDuration:", resourcesDuration(wf.Status.ResourcesDuration))
	}
}

// arguments writes the workflow's parameters that have a value.
func (h header) arguments(wf *v1alpha1.Workflow) {
	params := runSpec(wf).Arguments.Parameters
	if len(params) == 0 {
		return
	}
	h.line("Parameters:", "")
	for _, p := range params {
		if p.Value != nil {
			h.line("  "+p.Name+":", p.Value.String())
		}
	}
}

// outputs writes the workflow's output parameters and artifacts.
func (h header) outputs(outs *v1alpha1.Outputs) {
	if outs == nil {
		return
	}
	if len(outs.Parameters) > 0 {
		h.line("Output Parameters:", "")
		for _, p := range outs.Parameters {
			switch {
			case p.Value != nil:
				h.line("  "+p.Name+":", p.Value.String())
			case p.Default != nil:
				h.line("  "+p.Name+":", p.Default.String())
			case p.ValueFrom != nil:
				h.line("  "+p.Name+":", "")
			}
		}
	}
	if len(outs.Artifacts) > 0 {
		h.line("Output Artifacts:", "")
		for i := range outs.Artifacts {
			if v, ok := outputArtifactValue(&outs.Artifacts[i]); ok {
				h.line("  "+outs.Artifacts[i].Name+":", v)
			}
		}
	}
}

// WorkflowStatus is the STATUS of `argo list` and the Status line of
// `argo get`: the phase, except "Running (Suspended)" while spec.suspend is
// set or a Suspend node is running, "Failed (Terminated)" for a failed
// workflow that was stopped or terminated, and "Pending" for a workflow with
// no phase yet ("Unknown" if it has no creation time either).
func WorkflowStatus(wf *v1alpha1.Workflow) string {
	switch wf.Status.Phase {
	case v1alpha1.WorkflowRunning:
		if isSuspended(wf) {
			return "Running (Suspended)"
		}
	case v1alpha1.WorkflowFailed:
		if wf.Spec.Shutdown != "" {
			return "Failed (Terminated)"
		}
	case v1alpha1.WorkflowUnknown, v1alpha1.WorkflowPending:
		if wf.CreationTimestamp.IsZero() {
			return "Unknown"
		}
		return "Pending"
	}
	return string(wf.Status.Phase)
}

func isSuspended(wf *v1alpha1.Workflow) bool {
	if wf.Spec.Suspend != nil && *wf.Spec.Suspend {
		return true
	}
	for _, n := range wf.Status.Nodes {
		if isActiveSuspend(&n) {
			return true
		}
	}
	return false
}

func isActiveSuspend(n *v1alpha1.NodeStatus) bool {
	return n.Type == v1alpha1.NodeTypeSuspend && n.Phase == v1alpha1.NodeRunning
}

// resourcesDuration renders usage as "2s*(1 cpu),8s*(100Mi memory)": the
// seconds as a Go duration, times the unit of the resource. Argo's order
// follows map iteration; braid sorts by resource name.
func resourcesDuration(rd v1alpha1.ResourcesDuration) string {
	secs := make(map[string]time.Duration, len(rd))
	names := make([]string, 0, len(rd))
	for n, v := range rd {
		secs[string(n)] = time.Duration(v) * time.Second
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s*(%s %s)", secs[n], resourceUnit(n), n)
	}
	return strings.Join(parts, ",")
}

// resourceUnit is the quantity one resource-second is counted in.
func resourceUnit(name string) string {
	switch name {
	case "memory":
		return "100Mi"
	case "storage", "ephemeral-storage":
		return "10Gi"
	}
	return "1"
}

func (o Options) now() time.Time {
	if o.Now.IsZero() {
		return time.Now()
	}
	return o.Now
}

// wireTime is t as a client of the API sees it: whole seconds (the JSON form
// has no fraction), in the location of now. The zero time stays zero.
func wireTime(t metav1.Time, now time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Truncate(time.Second).In(now.Location())
}
