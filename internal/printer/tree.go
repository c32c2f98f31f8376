package printer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	"github.com/braidwf/braid/pkg/nodeselector"
)

// treeNode is one drawable node and the nodes drawn below it.
type treeNode struct {
	st       *v1alpha1.NodeStatus
	start    time.Time // as the CLI sees it: whole seconds
	children []*treeNode
}

// drawKind says how a node type takes part in the tree.
type drawKind int

const (
	notDrawn drawKind = iota // Container, TaskGroup: not in the tree at all
	boundary                 // Steps, DAG: collect the nodes whose boundaryID is theirs
	grouping                 // StepGroup, Retry: take their children as tree children
	leaf                     // Pod, Skipped, Suspend, HTTP, Plugin
)

func kindOf(t v1alpha1.NodeType) drawKind {
	switch t {
	case v1alpha1.NodeTypeSteps, v1alpha1.NodeTypeDAG:
		return boundary
	case v1alpha1.NodeTypeStepGroup, v1alpha1.NodeTypeRetry:
		return grouping
	case v1alpha1.NodeTypePod, v1alpha1.NodeTypeSkipped, v1alpha1.NodeTypeSuspend,
		v1alpha1.NodeTypeHTTP, v1alpha1.NodeTypePlugin:
		return leaf
	}
	return notDrawn
}

// buildForest turns the flat node map into trees and returns the roots by
// node ID. A node listed as a child by a StepGroup or Retry hangs under it;
// otherwise it hangs under its boundary node, and a node without a boundary
// is a root. A node whose boundary is not a drawn Steps or DAG node is left
// out, as the CLI does.
func buildForest(wf *v1alpha1.Workflow, now time.Time) (map[string]*treeNode, error) {
	ids := make([]string, 0, len(wf.Status.Nodes))
	for id := range wf.Status.Nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)

	drawn := make(map[string]*treeNode, len(ids))
	for _, id := range ids {
		st := wf.Status.Nodes[id]
		if st.Type == "" {
			return nil, fmt.Errorf("node %s has no type: workflows created by Argo 2.0 or older cannot be shown", id)
		}
		if kindOf(st.Type) == notDrawn {
			continue
		}
		drawn[id] = &treeNode{st: &st, start: wireTime(st.StartedAt, now)}
	}

	groupOf := make(map[string]*treeNode)
	for _, id := range ids {
		if n := drawn[id]; n != nil && kindOf(n.st.Type) == grouping {
			for _, child := range n.st.Children {
				groupOf[child] = n
			}
		}
	}

	roots := make(map[string]*treeNode)
	for _, id := range ids {
		n := drawn[id]
		if n == nil {
			continue
		}
		if g := groupOf[id]; g != nil {
			g.children = append(g.children, n)
			continue
		}
		if n.st.BoundaryID == "" {
			roots[id] = n
			continue
		}
		if b := drawn[n.st.BoundaryID]; b != nil && kindOf(b.st.Type) == boundary {
			b.children = append(b.children, n)
		}
	}
	for _, n := range drawn {
		sortSiblings(n.children)
	}
	return roots, nil
}

// sortSiblings orders siblings by start time; at equal times two loop
// iterations ("name(N:...)") go by N and anything else by displayName.
func sortSiblings(nodes []*treeNode) {
	sort.SliceStable(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		if !a.start.Equal(b.start) {
			return a.start.Before(b.start)
		}
		ia, ib := loopIndex(a.st.DisplayName), loopIndex(b.st.DisplayName)
		if ia >= 0 && ib >= 0 {
			return ia < ib
		}
		return a.st.DisplayName < b.st.DisplayName
	})
}

// loopIndex is the N of a loop iteration's name "step(N:desc)", or -1.
func loopIndex(name string) int {
	open, colon := strings.IndexByte(name, '('), strings.IndexByte(name, ':')
	if open < 0 || colon <= open {
		return -1
	}
	n, err := strconv.Atoi(name[open+1 : colon])
	if err != nil {
		return -1
	}
	return n
}

// treeRenderer draws trees into a tabwriter.
type treeRenderer struct {
	wf      *v1alpha1.Workflow
	out     *tabwriter.Writer
	p       palette
	output  string
	now     time.Time
	filter  *nodeselector.Selector
	phases  []string
	visited map[*treeNode]bool
}

// renderTree draws the STEP table: the header, the tree of the root node,
// and the tree of the workflow's onExit node below a spacer row.
func renderTree(wf *v1alpha1.Workflow, o Options, p palette, now time.Time) (string, error) {
	filter, phases, err := newNodeFilter(o)
	if err != nil {
		return "", err
	}
	roots, err := buildForest(wf, now)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	r := &treeRenderer{
		wf: wf, out: tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0), p: p, output: o.Output,
		now: now, filter: filter, phases: phases, visited: map[*treeNode]bool{},
	}
	step := p.paint("STEP", fgDefault) // keeps the header as wide as the coloured rows
	switch o.Output {
	case "wide":
		fmt.Fprintf(r.out, "%s\tTEMPLATE\tPODNAME\tDURATION\tARTIFACTS\tMESSAGE\tRESOURCESDURATION\tNODENAME\n", step)
	case "short":
		fmt.Fprintf(r.out, "%s\tTEMPLATE\tPODNAME\tDURATION\tMESSAGE\tNODENAME\n", step)
	default:
		fmt.Fprintf(r.out, "%s\tTEMPLATE\tPODNAME\tDURATION\tMESSAGE\n", step)
	}
	main := roots[wf.Name]
	if main == nil {
		// The root node exists but is not a drawable type.
		return "", fmt.Errorf("failed to get the entrypoint node %s", wf.Name)
	}
	r.render(main, " ", " ")
	if exit := roots[v1alpha1.NodeID(wf.Name, wf.Name+".onExit")]; exit != nil {
		fmt.Fprint(r.out, "\t\t\t\t\t\n")
		r.render(exit, " ", " ")
	}
	if err := r.out.Flush(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// hidden says whether n is left out of the table, and whether its children
// then continue its line with the step-group connectors.
func (r *treeRenderer) hidden(n *treeNode) (hide, groupIndent bool) {
	st := n.st
	switch {
	case st.Type == v1alpha1.NodeTypeRetry && len(st.Children) == 1:
		return true, false
	case st.Type == v1alpha1.NodeTypeStepGroup:
		return true, true
	case st.Type == v1alpha1.NodeTypeSkipped && st.Phase == v1alpha1.NodeOmitted:
		return true, false
	case !r.keep(st):
		return true, false
	}
	return false, false
}

// keep applies --status and --node-field-selector.
func (r *treeRenderer) keep(st *v1alpha1.NodeStatus) bool {
	if len(r.phases) > 0 {
		for _, ph := range r.phases {
			if string(st.Phase) == ph {
				return true
			}
		}
		return false
	}
	return r.filter == nil || r.filter.Matches(st)
}

// render draws n with prefix nodePrefix; its descendants start their
// prefixes with childPrefix. A hidden node's first child takes the node's
// own line prefix.
func (r *treeRenderer) render(n *treeNode, nodePrefix, childPrefix string) {
	if r.visited[n] { // a cycle in children: draw each node once
		return
	}
	r.visited[n] = true
	hide, groupIndent := r.hidden(n)
	if !hide {
		r.row(n, nodePrefix)
	}
	last := len(n.children) - 1
	for i, c := range n.children {
		conn := r.p.childConnector(hide, groupIndent, i, last)
		own := childPrefix
		if hide && i == 0 {
			own = nodePrefix
		}
		r.render(c, own+conn.own, childPrefix+conn.below)
	}
}

// row writes the table row of one node.
func (r *treeRenderer) row(n *treeNode, prefix string) {
	st := n.st
	icon := r.p.phaseIcon(st.Phase)
	if isActiveSuspend(st) {
		icon = r.p.suspendIcon()
	}
	name := icon + " " + st.DisplayName
	template := st.TemplateName
	if st.TemplateRef != nil {
		template = st.TemplateRef.Name + "/" + st.TemplateRef.Template
	}
	var pod, duration, host string
	if st.Type == v1alpha1.NodeTypePod {
		pod = PodName(r.wf, st)
		duration = spanShort(n.start, wireTime(st.FinishedAt, r.now), r.now)
		host = st.HostNodeName
	}
	switch r.output {
	case "wide":
		fmt.Fprintf(r.out, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			prefix, name, template, pod, duration, artifactNames(st), st.Message, resourcesDuration(st.ResourcesDuration), host)
	case "short":
		fmt.Fprintf(r.out, "%s%s\t%s\t%s\t%s\t%s\t%s\n", prefix, name, template, pod, duration, st.Message, host)
	default:
		// The empty last cell makes MESSAGE a padded column, as in the CLI.
		fmt.Fprintf(r.out, "%s%s\t%s\t%s\t%s\t%s\t\n", prefix, name, template, pod, duration, st.Message)
	}
}

// artifactNames is the ARTIFACTS cell: the node's output artifact names.
func artifactNames(st *v1alpha1.NodeStatus) string {
	if st.Outputs == nil {
		return ""
	}
	names := make([]string, len(st.Outputs.Artifacts))
	for i, a := range st.Outputs.Artifacts {
		names[i] = a.Name
	}
	return strings.Join(names, ",")
}
