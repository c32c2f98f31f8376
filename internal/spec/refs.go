package spec

import (
	"fmt"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// nodeRefs resolves steps.<name>.* or tasks.<name>.* keys lazily: what a
// step or task offers is built once per name, and whether it is visible
// from a given place is asked only when a tag refers to it. This keeps
// validation linear in the size of a template with thousands of steps.
type nodeRefs struct {
	prefix  string // "steps." or "tasks."
	offers  map[string]*scope
	callees map[string]*v1alpha1.Template
	loops   map[string]bool
	unknown string // hint when no step or task has the name
}

func newNodeRefs(prefix, unknown string) *nodeRefs {
	return &nodeRefs{prefix: prefix, offers: map[string]*scope{}, callees: map[string]*v1alpha1.Template{}, loops: map[string]bool{}, unknown: unknown}
}

// declare records a step or task and the template it calls (nil when unresolved).
func (n *nodeRefs) declare(name string, callee *v1alpha1.Template, loop bool) {
	n.callees[name] = callee
	n.loops[name] = loop
}

// offer is the scope of the variables a finished step or task provides.
func (n *nodeRefs) offer(name string) *scope {
	if sc, ok := n.offers[name]; ok {
		return sc
	}
	sc := newScope()
	addNodeScope(sc, n.prefix+name, n.callees[name], n.loops[name])
	n.offers[name] = sc
	return sc
}

// view is what one place may see: visible says whether a step or task may
// be referred to there (with a hint when not), and self names the step or
// task whose own status is in scope (all its outputs when selfOutputs).
type view struct {
	refs        *nodeRefs
	visible     func(name string) (bool, string)
	self        string
	selfOutputs bool
}

// resolve reports whether key resolves in this view, or a hint why not.
// handled is false for keys outside the view's prefix.
func (w *view) resolve(key string) (ok, handled bool, hint string) {
	rest, found := strings.CutPrefix(key, w.refs.prefix)
	if !found {
		return false, false, ""
	}
	name, _, _ := strings.Cut(rest, ".")
	if _, declared := w.refs.callees[name]; !declared {
		return false, true, w.refs.unknown
	}
	if name == w.self {
		if key == w.refs.prefix+name+".status" || w.selfOutputs {
			return w.refs.offer(name).has(key), true, ""
		}
	}
	if vis, why := w.visible(name); !vis {
		return false, true, why
	}
	if w.refs.offer(name).has(key) {
		return true, true, ""
	}
	return false, true, w.refs.offer(name).hint(key)
}

// withView returns a copy of s that resolves node references through w.
func (s *scope) withView(w *view) *scope {
	c := *s
	c.view = w
	return &c
}

func earlierGroup(groupOf map[string]int, current int) func(string) (bool, string) {
	return func(name string) (bool, string) {
		if groupOf[name] < current {
			return true, ""
		}
		return false, fmt.Sprintf("step %q is not in an earlier step group", name)
	}
}
