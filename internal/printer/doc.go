// Package printer renders workflows exactly as the argo CLI (v4.1.2) prints
// them, byte for byte, so that braid's CLI output can stand in for argo's
// (shared/reference/ARGO-API.md §5; node model in ARGO-SEMANTICS.md §1).
//
// # What it owns
//
//	WriteGet(w, wf, Options) error            `argo get` (also submit, retry, resubmit): header block + node tree
//	WriteWatchFrame(stdout, stderr, wf, o)    one `argo watch` frame: ClearScreen to stderr, the get view to stdout
//	WriteList(w, wfs, ListOptions) error      `argo list` / `argo archive list` (ListOptions.UID)
//	SortWorkflows(wfs)                        the list order: unfinished newest-created first, then latest-finished first
//	WaitLine(wf) string                       "steps-xk9vq Succeeded at 2026-11-30 09:00:20 +0000 UTC"
//	LogLine(pod, content, color) string       "<pod>: <content>", coloured by pod name
//	WorkflowStatus(wf) string                 Running (Suspended), Failed (Terminated), Pending, or the phase
//	PodName(wf, node) string                  the pod name the CLI shows for a Pod node (v1 or v2 format)
//	PodNameFormat(wf) string                  "v1" or "v2" from the pod-name-format annotation
//	HumanDuration(d) string                   "20 seconds", "16 minutes 5 seconds"
//	ShortDuration(d) string                   "0s", "7s", "15m", "3h", "2d"
//
// The line-returning helpers leave the newline to the caller; the Write
// functions write complete lines.
//
// # The get view
//
// The header lines are "%-20s %v\n" (so an empty value leaves a trailing
// space, as in argo). The tree is built from boundaryID for Steps and DAG
// nodes and from children for StepGroup and Retry nodes; Container and
// TaskGroup nodes are not drawn; StepGroups, Retry nodes with one child and
// Omitted nodes are hidden, a hidden StepGroup's children continuing its
// line with "──", "┬─", "├─", "└─". Siblings go by startedAt, then loop
// index, then displayName. The table is text/tabwriter with padding 2, whose
// widths count runes, colour escapes included: that is why the STEP header
// carries a no-op colour, and why rows have trailing pad spaces.
//
// # Time
//
// Every time is used as a client of the API sees it: truncated to whole
// seconds (the JSON form has no fraction). Relative texts and the durations
// of unfinished nodes use Options.Now (time.Now() when zero), and times are
// shown in Now's location. WaitLine uses local time, as the CLI does.
//
// # What it must not do
//
// It performs no I/O beyond the writers it is given, reads no environment
// (TERM=dumb and POD_NAMES are the caller's business: set Options.NoColor,
// or the pod-name-format annotation) and holds no state. It imports only the
// API types (pkg/apis/v1alpha1 and the Kubernetes metav1 types they embed),
// pkg/nodeselector (--node-field-selector, shared with internal/wfops) and
// the standard library, text/tabwriter included: no braid internal package,
// no YAML encoder (the caller renders -o yaml).
package printer
