package engine

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// id returns the ID of the node named name (rule 1.2).
func (r *run) id(name string) string { return v1alpha1.NodeID(r.wf.Name, name) }

// byName returns the node named name. It computes the ID into a scratch
// buffer, so a look-up allocates nothing: a pass makes one per node it walks.
func (r *run) byName(name string) (v1alpha1.NodeStatus, bool) {
	if name == r.wf.Name {
		n, ok := r.nodes[name]
		return n, ok
	}
	h := uint32(fnvOffset)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * fnvPrime
	}
	return r.byHash(h)
}

// byParts is byName(a + b + c) without building the name.
func (r *run) byParts(a, b, c string) (v1alpha1.NodeStatus, bool) {
	if len(a)+len(b)+len(c) == len(r.wf.Name) && a+b+c == r.wf.Name {
		n, ok := r.nodes[r.wf.Name]
		return n, ok
	}
	h := uint32(fnvOffset)
	for _, s := range [3]string{a, b, c} {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint32(s[i])) * fnvPrime
		}
	}
	return r.byHash(h)
}

// FNV-1a 32-bit, as v1alpha1.NodeID.
const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

func (r *run) byHash(h uint32) (v1alpha1.NodeStatus, bool) {
	k := append(r.keyBuf[:0], r.wf.Name...)
	k = append(k, '-')
	k = strconv.AppendUint(k, uint64(h), 10)
	r.keyBuf = k
	n, ok := r.nodes[string(k)]
	return n, ok
}

// put stores n and records it as changed. Every write of a node goes through
// put, so Result.Changed is exact and the parallelism counters stay right.
func (r *run) put(n v1alpha1.NodeStatus) {
	_, seen := r.changed[n.ID]
	if !seen || r.activePods >= 0 || r.bcounts != nil {
		old, existed := r.nodes[n.ID]
		if r.activePods >= 0 || r.bcounts != nil {
			r.count(old, existed, n)
		}
		if !seen {
			r.changed[n.ID] = prevNode{existed: existed, progress: old.Progress, rd: old.ResourcesDuration}
			r.changedIDs = append(r.changedIDs, n.ID)
		}
	}
	r.nodes[n.ID] = n
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
	h          holder
	scope      string
	boundaryID string
	phase      v1alpha1.NodePhase
	flag       *v1alpha1.NodeFlag
	message    string
	inputs     *v1alpha1.Inputs
}

// newNode creates and stores a node (ctl/operator.go initializeNode). It
// refuses with errNodeLimit when Limits.MaxNodes would be passed.
func (r *run) newNode(in nodeInit) (v1alpha1.NodeStatus, error) {
	if len(r.nodes) >= r.lim.MaxNodes {
		r.stopFor(&limitError{node: in.name, what: fmt.Sprintf("the workflow would have %d nodes", len(r.nodes)+1),
			key: "maxNodes", limit: r.lim.MaxNodes})
		return v1alpha1.NodeStatus{}, errNodeLimit
	}
	r.created++
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
	r.put(n)
	return n, nil
}

// placeholder creates a Skipped-type node that never runs (rule 1.10).
func (r *run) placeholder(name string, h holder, scope, boundaryID string, phase v1alpha1.NodePhase, msg string) (v1alpha1.NodeStatus, error) {
	return r.newNode(nodeInit{name: name, typ: v1alpha1.NodeTypeSkipped, h: h, scope: scope,
		boundaryID: boundaryID, phase: phase, flag: &v1alpha1.NodeFlag{}, message: msg})
}

var stepsOrDagSeparator = regexp.MustCompile(`^(\[\d+\])?\.`)

// displayName follows rule 1.5: the name without the boundary's name and one
// leading "[N]." or ".".
func (r *run) displayName(name, boundaryID string) string {
	b, ok := r.nodes[boundaryID]
	if boundaryID == "" || !ok {
		return name
	}
	d := strings.TrimPrefix(name, b.Name)
	return stepsOrDagSeparator.ReplaceAllString(d, "")
}

// setPhase changes a node's phase, and its message when one is given, and
// sets finishedAt when the node becomes fulfilled (ctl/operator.go
// markNodePhase). It returns the stored node.
func (r *run) setPhase(id string, phase v1alpha1.NodePhase, message ...string) v1alpha1.NodeStatus {
	n, ok := r.nodes[id]
	if !ok {
		return n
	}
	changed := false
	if n.Phase != phase {
		n.Phase = phase
		changed = true
	}
	if len(message) > 0 && n.Message != message[0] {
		n.Message = message[0]
		changed = true
	}
	if fulfilled(n) && n.FinishedAt.IsZero() {
		n.FinishedAt = metav1.NewTime(r.now)
		changed = true
	}
	if changed {
		r.put(n)
	}
	return n
}

// markError sets a node Error with the error's text.
func (r *run) markError(id string, err error) v1alpha1.NodeStatus {
	return r.setPhase(id, v1alpha1.NodeError, err.Error())
}

// addChild appends childID to the parent's children once (rule 1.7).
func (r *run) addChild(parentID, childID string) {
	p, ok := r.nodes[parentID]
	if !ok {
		return
	}
	if len(p.Children) < childSetMin {
		if slices.Contains(p.Children, childID) {
			return
		}
	} else {
		set := r.childSet(p)
		if _, dup := set[childID]; dup {
			return
		}
		set[childID] = struct{}{}
	}
	p.Children = append(p.Children, childID)
	r.put(p)
}

// childSetMin is how many children a node has before addChild looks them up
// in a set: a loop of 100,000 iterations would otherwise cost a scan of
// its children for every iteration it adds.
const childSetMin = 64

// childSet returns the set of p's children, built once per pass (only
// addChild appends to Children).
func (r *run) childSet(p v1alpha1.NodeStatus) map[string]struct{} {
	if r.childSets == nil {
		r.childSets = map[string]map[string]struct{}{}
	}
	set, ok := r.childSets[p.ID]
	if !ok {
		set = make(map[string]struct{}, len(p.Children)+1)
		for _, c := range p.Children {
			set[c] = struct{}{}
		}
		r.childSets[p.ID] = set
	}
	return set
}

// outbound returns the outbound nodes of a node (rule 1.8).
func (r *run) outbound(id string) []string {
	n, ok := r.nodes[id]
	if !ok {
		return nil
	}
	switch n.Type {
	case v1alpha1.NodeTypePod:
		if r.containerSetOf(n) != nil {
			return r.containerSetOutbound(n)
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
			out = append(out, r.outbound(c)...)
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
		out = append(out, r.outbound(o)...)
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
func (r *run) attempts(retry v1alpha1.NodeStatus) ([]string, *v1alpha1.NodeStatus) {
	var ids []string
	var last *v1alpha1.NodeStatus
	for _, c := range retry.Children {
		n, ok := r.nodes[c]
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
func (r *run) lastAttemptOf(n v1alpha1.NodeStatus) v1alpha1.NodeStatus {
	if n.Type != v1alpha1.NodeTypeRetry {
		return n
	}
	if _, last := r.attempts(n); last != nil {
		return *last
	}
	return n
}

// hooksFulfilled reports whether every hook and exit node hanging from the
// node has finished (common.CheckAllHooksFullfilled).
func (r *run) hooksFulfilled(n v1alpha1.NodeStatus) bool {
	for _, c := range n.Children {
		if cn, ok := r.nodes[c]; ok && isHooked(cn) && !isRetried(cn) && !fulfilled(cn) {
			return false
		}
	}
	return true
}
