package engine

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// id returns the ID of the node named name (rule 1.2).
func (f *facts) id(name string) string { return v1alpha1.NodeID(f.wf.Name, name) }

// byName returns the node named name. It computes the ID into a scratch
// buffer, so a look-up allocates nothing: a pass makes one per node it walks.
func (f *facts) byName(name string) (v1alpha1.NodeStatus, bool) {
	if name == f.wf.Name {
		n, ok := f.nodes[name]
		return n, ok
	}
	h := uint32(fnvOffset)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * fnvPrime
	}
	return f.byHash(h)
}

// byParts is byName(a + b + c) without building the name.
func (f *facts) byParts(a, b, c string) (v1alpha1.NodeStatus, bool) {
	if len(a)+len(b)+len(c) == len(f.wf.Name) && a+b+c == f.wf.Name {
		n, ok := f.nodes[f.wf.Name]
		return n, ok
	}
	h := uint32(fnvOffset)
	for _, s := range [3]string{a, b, c} {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint32(s[i])) * fnvPrime
		}
	}
	return f.byHash(h)
}

// FNV-1a 32-bit, as v1alpha1.NodeID.
const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

func (f *facts) byHash(h uint32) (v1alpha1.NodeStatus, bool) {
	k := append(f.keyBuf[:0], f.wf.Name...)
	k = append(k, '-')
	k = strconv.AppendUint(k, uint64(h), 10)
	f.keyBuf = k
	n, ok := f.nodes[string(k)]
	return n, ok
}

// fulfilled reports whether the node needs no more work (rule 2.1): it
// completed, was skipped or omitted, or is a daemon that is up.
func fulfilled(n v1alpha1.NodeStatus) bool {
	return n.Phase.Fulfilled() || (isDaemoned(n) && n.Phase != v1alpha1.NodePending)
}

func isDaemoned(n v1alpha1.NodeStatus) bool { return n.Daemoned != nil && *n.Daemoned }

func isHooked(n v1alpha1.NodeStatus) bool { return n.NodeFlag != nil && n.NodeFlag.Hooked }

func isRetried(n v1alpha1.NodeStatus) bool { return n.NodeFlag != nil && n.NodeFlag.Retried }

// isLeafType reports whether nodes of type t stand for a process the runtime
// runs (the nodes that get a Launch).
func isLeafType(t v1alpha1.NodeType) bool {
	return t == v1alpha1.NodeTypePod || t == v1alpha1.NodeTypeHTTP || t == v1alpha1.NodeTypePlugin
}

// nodeInit describes a node to create.
type nodeInit struct {
	name       string
	typ        v1alpha1.NodeType
	h          callSite
	scope      string
	boundaryID string
	phase      v1alpha1.NodePhase
	flag       *v1alpha1.NodeFlag
	message    string
	inputs     *v1alpha1.Inputs
}

// newNode creates and stores a node (ctl/operator.go initializeNode). When
// Limits.MaxNodes would be passed it creates nothing and returns false: the
// workflow ends Error at the end of the pass (stopFor), and the caller's
// invocation is held (holdNodeLimit).
func (r *pass) newNode(in nodeInit) (v1alpha1.NodeStatus, bool) {
	if len(r.nodes) >= r.lim.MaxNodes {
		r.stopFor(&limitError{node: in.name, what: fmt.Sprintf("the workflow would have %d nodes", len(r.nodes)+1),
			key: "maxNodes", limit: r.lim.MaxNodes})
		return v1alpha1.NodeStatus{}, false
	}
	n := v1alpha1.NodeStatus{
		ID:            r.id(in.name),
		Name:          in.name,
		DisplayName:   r.displayName(in.name, in.boundaryID),
		Type:          in.typ,
		TemplateName:  in.h.template,
		TemplateRef:   in.h.ref,
		TemplateScope: in.scope,
		BoundaryID:    in.boundaryID,
		Phase:         in.phase,
		NodeFlag:      in.flag,
		StartedAt:     metav1.NewTime(r.now),
		Message:       in.message,
	}
	if in.inputs != nil && (len(in.inputs.Parameters) > 0 || len(in.inputs.Artifacts) > 0) {
		n.Inputs = in.inputs.DeepCopy()
	}
	if n.Phase.Fulfilled() {
		n.FinishedAt = n.StartedAt
	}
	if isExecutable(n.Type) {
		n.Progress = ownProgress(n.Phase)
	}
	r.create(n)
	return n, true
}

// placeholder creates a Skipped-type node that never runs (rule 1.10);
// false as newNode.
func (r *pass) placeholder(name string, h callSite, scope, boundaryID string, phase v1alpha1.NodePhase, msg string) (v1alpha1.NodeStatus, bool) {
	return r.newNode(nodeInit{name: name, typ: v1alpha1.NodeTypeSkipped, h: h, scope: scope,
		boundaryID: boundaryID, phase: phase, flag: &v1alpha1.NodeFlag{}, message: msg})
}

var stepsOrDagSeparator = regexp.MustCompile(`^(\[\d+\])?\.`)

// displayName follows rule 1.5: the name without the boundary's name and one
// leading "[N]." or ".".
func (f *facts) displayName(name, boundaryID string) string {
	b, ok := f.nodes[boundaryID]
	if boundaryID == "" || !ok {
		return name
	}
	d := strings.TrimPrefix(name, b.Name)
	return stepsOrDagSeparator.ReplaceAllString(d, "")
}

// outbound returns the outbound nodes of a node (rule 1.8).
func (f *facts) outbound(id string) []string {
	n, ok := f.nodes[id]
	if !ok {
		return nil
	}
	switch n.Type {
	case v1alpha1.NodeTypePod:
		if f.containerSetOf(n) != nil {
			return f.containerSetOutbound(n)
		}
		return []string{n.ID}
	case v1alpha1.NodeTypeSkipped, v1alpha1.NodeTypeSuspend, v1alpha1.NodeTypeHTTP,
		v1alpha1.NodeTypePlugin:
		return []string{n.ID}
	case v1alpha1.NodeTypeContainer, v1alpha1.NodeTypeTaskGroup:
		if len(n.Children) == 0 {
			return []string{n.ID}
		}
		var out []string
		for _, c := range n.Children {
			out = append(out, f.outbound(c)...)
		}
		return out
	case v1alpha1.NodeTypeRetry:
		if len(n.Children) > 0 {
			return []string{n.Children[len(n.Children)-1]}
		}
		return nil
	}
	if n.MemoizationStatus != nil && n.MemoizationStatus.Hit {
		return []string{n.ID} // a Steps or DAG node of a cache hit has no children
	}
	var out []string
	for _, o := range n.OutboundNodes {
		out = append(out, f.outbound(o)...)
	}
	return out
}

// podName returns the v2 pod name of a node (rule 1.3).
func podName(wfName, nodeName, templateName string) string {
	return v1alpha1.PodName(wfName, nodeName, templateName)
}

// nodeTemplateName is the template name used for a node's pod name and its
// workflow.failures entry: templateRef.template if set, else templateName.
func nodeTemplateName(n v1alpha1.NodeStatus) string {
	if n.TemplateRef != nil {
		return n.TemplateRef.Template
	}
	return n.TemplateName
}

// sortedIDs returns the node IDs in order, for passes that must not depend
// on map order.
func sortedIDs(nodes v1alpha1.Nodes) []string {
	ids := make([]string, 0, len(nodes))
	for id := range nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// attempts returns the attempts of a Retry node (its children that are
// not hooks) and the last of them (ctl/operator.go
// getChildNodeIdsAndLastRetriedNode). The attempts of a Retry node that is
// itself a hook (an exit handler that retries) carry the hooked flag too:
// the retried flag tells them from the Retry node's own hooks.
func (f *facts) attempts(retry v1alpha1.NodeStatus) ([]string, *v1alpha1.NodeStatus) {
	var ids []string
	var last *v1alpha1.NodeStatus
	for _, c := range retry.Children {
		n, ok := f.nodes[c]
		if !ok || (isHooked(n) && !isRetried(n)) {
			continue
		}
		ids = append(ids, c)
		nn := n
		last = &nn
	}
	return ids, last
}

// lastAttemptOf returns the node whose values stand for n in references:
// the last attempt of a Retry node, else n itself (rule 6.1).
func (f *facts) lastAttemptOf(n v1alpha1.NodeStatus) v1alpha1.NodeStatus {
	if n.Type != v1alpha1.NodeTypeRetry {
		return n
	}
	if _, last := f.attempts(n); last != nil {
		return *last
	}
	return n
}

// hooksFulfilled reports whether every hook and exit node hanging from the
// node has finished (common.CheckAllHooksFullfilled).
func (f *facts) hooksFulfilled(n v1alpha1.NodeStatus) bool {
	for _, c := range n.Children {
		if cn, ok := f.nodes[c]; ok && isHooked(cn) && !isRetried(cn) && !fulfilled(cn) {
			return false
		}
	}
	return true
}
