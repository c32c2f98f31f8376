package engine

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// A containerSet runs as one Pod node with a node of type Container for
// each of its containers, named <pod node>.<container> (rule 1.4), made
// Pending with the pod node. A container without dependencies is a child
// of the pod node; one with dependencies is a child of each of them, so
// the pod node's outbound nodes are the containers nothing depends on
// (rule 1.8). The runtime's reports of the containers move their nodes on
// (StepResult.Containers); when the pod ends, a container it never reported
// ends with the pod.

// containerSetOf is the containerSet of a Pod node's template, or nil.
func (f *facts) containerSetOf(n v1alpha1.NodeStatus) *v1alpha1.ContainerSetTemplate {
	if n.Type != v1alpha1.NodeTypePod {
		return nil
	}
	if t := f.nodeTemplate(n); t != nil {
		return t.ContainerSet
	}
	return nil
}

// containerNodeName is the name of container c's node under pod.
func containerNodeName(pod, c string) string { return pod + "." + c }

// newContainerNodes makes the Container nodes of a containerSet's new Pod
// node, Pending, linked by their dependencies. False: the node limit was
// reached (newNode).
func (r *pass) newContainerNodes(pod v1alpha1.NodeStatus, cs *v1alpha1.ContainerSetTemplate, in invocation) bool {
	for i := range cs.Containers {
		c := &cs.Containers[i]
		n, ok := r.newNode(nodeInit{name: containerNodeName(pod.Name, c.Name), typ: v1alpha1.NodeTypeContainer,
			h: in.h, scope: in.scope, boundaryID: pod.BoundaryID, phase: v1alpha1.NodePending})
		if !ok {
			return false
		}
		n.DisplayName = c.Name
		r.put(n)
	}
	for i := range cs.Containers {
		c := &cs.Containers[i]
		id := r.id(containerNodeName(pod.Name, c.Name))
		if len(c.Dependencies) == 0 {
			r.addChild(pod.ID, id)
			continue
		}
		for _, dep := range c.Dependencies {
			r.addChild(r.id(containerNodeName(pod.Name, dep)), id)
		}
	}
	return true
}

// mergeContainers moves the pod's Container nodes on from res. When the pod
// has ended (final), a container with no final state ends with the pod's
// phase: it did not run to its end.
func (r *pass) mergeContainers(pod v1alpha1.NodeStatus, res StepResult, final bool) {
	cs := r.containerSetOf(pod)
	if cs == nil {
		return
	}
	got := make(map[string]ContainerResult, len(res.Containers))
	for _, c := range res.Containers {
		got[c.Name] = c
	}
	for i := range cs.Containers {
		name := cs.Containers[i].Name
		n, ok := r.nodes[r.id(containerNodeName(pod.Name, name))]
		if !ok || n.Phase.Fulfilled() {
			continue
		}
		c, reported := got[name]
		if final && (!reported || !c.Phase.Fulfilled()) {
			c = ContainerResult{Name: name, Phase: pod.Phase, Message: pod.Message}
			if pod.Phase == v1alpha1.NodeSucceeded {
				c.Phase, c.Message = v1alpha1.NodeOmitted, "the pod ended before the container ran"
			}
		}
		r.putContainer(n, c)
	}
}

// putContainer writes one container's state to its node.
func (r *pass) putContainer(n v1alpha1.NodeStatus, c ContainerResult) {
	switch {
	case c.Phase == "" || c.Phase == n.Phase:
		return
	case c.Phase == v1alpha1.NodePending:
		return
	}
	n.Phase, n.Message = c.Phase, c.Message
	if n.Phase == v1alpha1.NodeFailed && n.Message == "" && c.ExitCode != nil {
		n.Message = fmt.Sprintf("%s: Error (exit code %d)", n.DisplayName, *c.ExitCode)
	}
	if !c.StartedAt.IsZero() {
		n.StartedAt = metav1.NewTime(c.StartedAt.UTC())
	}
	if n.Phase.Fulfilled() {
		n.FinishedAt = metav1.NewTime(r.now)
		if !c.FinishedAt.IsZero() {
			n.FinishedAt = metav1.NewTime(c.FinishedAt.UTC())
		}
	}
	n.Progress = ownProgress(n.Phase)
	r.put(n)
}

// containerSetOutbound is the outbound nodes of a containerSet's Pod node:
// its Container children's, or the node itself when it has none.
func (f *facts) containerSetOutbound(n v1alpha1.NodeStatus) []string {
	var out []string
	for _, c := range n.Children {
		if ch, ok := f.nodes[c]; ok && ch.Type == v1alpha1.NodeTypeContainer {
			out = append(out, f.outbound(c)...)
		}
	}
	if len(out) == 0 {
		return []string{n.ID}
	}
	return out
}
