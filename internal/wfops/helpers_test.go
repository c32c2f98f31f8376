package wfops

import (
	"errors"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// testNow is the clock value every test passes.
var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// mustWorkflow parses a Workflow whose status.nodes are keyed by node NAME,
// with children, boundaryID and outboundNodes given as names too; it fills
// in the real IDs (v1alpha1.NodeID), each node's name, a displayName as
// rule 1.5 computes it when none is given, and type Pod when none is given.
func mustWorkflow(t *testing.T, y string) *v1alpha1.Workflow {
	t.Helper()
	var wf v1alpha1.Workflow
	if err := yaml.UnmarshalStrict([]byte(y), &wf); err != nil {
		t.Fatalf("bad fixture: %v", err)
	}
	id := func(name string) string {
		if name == "" {
			return ""
		}
		return v1alpha1.NodeID(wf.Name, name)
	}
	ids := func(names []string) []string {
		var out []string
		for _, n := range names {
			out = append(out, id(n))
		}
		return out
	}
	nodes := v1alpha1.Nodes{}
	for name, n := range wf.Status.Nodes {
		n.Name, n.ID = name, id(name)
		if n.DisplayName == "" {
			n.DisplayName = fixtureDisplayName(name, n.BoundaryID)
		}
		if n.Type == "" {
			n.Type = v1alpha1.NodeTypePod
		}
		n.BoundaryID = id(n.BoundaryID)
		n.Children, n.OutboundNodes = ids(n.Children), ids(n.OutboundNodes)
		if n.Phase.Fulfilled() && n.FinishedAt.IsZero() {
			n.StartedAt.Time = testNow.Add(-time.Hour)
			n.FinishedAt.Time = testNow.Add(-time.Minute)
		}
		nodes[n.ID] = n
	}
	wf.Status.Nodes = nodes
	return &wf
}

var fixtureSep = regexp.MustCompile(`^(\[\d+\])?\.`)

func fixtureDisplayName(name, boundaryName string) string {
	if boundaryName == "" {
		return name
	}
	return fixtureSep.ReplaceAllString(strings.TrimPrefix(name, boundaryName), "")
}

// treeLines renders the nodes as sorted "name Phase [child names]" lines.
func treeLines(wf *v1alpha1.Workflow) []string {
	var out []string
	for _, n := range wf.Status.Nodes {
		var kids []string
		for _, c := range n.Children {
			if cn, ok := wf.Status.Nodes[c]; ok {
				kids = append(kids, cn.Name)
			} else {
				kids = append(kids, "?"+c)
			}
		}
		line := n.Name + " " + string(n.Phase)
		if len(kids) > 0 {
			line += " [" + strings.Join(kids, " ") + "]"
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// names turns node IDs into sorted node names using the original workflow.
func names(wf *v1alpha1.Workflow, ids []string) []string {
	out := []string{}
	for _, id := range ids {
		if n, ok := wf.Status.Nodes[id]; ok {
			out = append(out, n.Name)
		} else {
			out = append(out, "?"+id)
		}
	}
	sort.Strings(out)
	return out
}

// checkErr fails unless err wraps want (nil: no error) and contains text.
func checkErr(t *testing.T, err, want error, text string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want one wrapping %q", err, want)
	}
	if !strings.Contains(err.Error(), text) {
		t.Fatalf("error %q does not contain %q", err, text)
	}
}

func byName(t *testing.T, wf *v1alpha1.Workflow, name string) v1alpha1.NodeStatus {
	t.Helper()
	n, ok := wf.Status.Nodes[wf.NodeID(name)]
	if !ok {
		t.Fatalf("no node %s", name)
	}
	return n
}

func ids(wf *v1alpha1.Workflow, names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, wf.NodeID(n))
	}
	return out
}

func sortStrings(s []string) []string {
	sort.Strings(s)
	return s
}
