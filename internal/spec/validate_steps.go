package spec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// steps checks a steps template: unique step names, resolvable calls, loops,
// and that each step refers only to steps of earlier groups.
func (v *specValidator) steps(t *v1alpha1.Template, path string, base *scope) {
	refs := newNodeRefs("steps.", "this template has no such step")
	groupOf := map[string]int{}
	callees := make([][]*v1alpha1.Template, len(t.Steps))
	seen := map[string]bool{}
	for gi, g := range t.Steps {
		callees[gi] = make([]*v1alpha1.Template, len(g))
		for si := range g {
			s := &g[si]
			sp := idx(idx(path+".steps", gi), si)
			v.checkStepName(sp+".name", s.Name, seen)
			callees[gi][si] = v.resolveCall(sp, s.Template, s.TemplateRef, s.Inline)
			if _, dup := groupOf[s.Name]; !dup {
				groupOf[s.Name] = gi
				refs.declare(s.Name, callees[gi][si], loopOf(s.WithItems, s.WithParam, s.WithSequence).any())
			}
		}
	}
	for gi, g := range t.Steps {
		gp := idx(path+".steps", gi)
		for si := range g {
			s := &g[si]
			sp := idx(gp, si)
			callee := callees[gi][si]
			if s.Inline != nil {
				v.template(s.Inline, sp+".inline")
			}
			loop := loopOf(s.WithItems, s.WithParam, s.WithSequence)
			v.checkLoop(sp, loop)
			own := base.withView(&view{refs: refs, visible: earlierGroup(groupOf, gi), self: s.Name})
			if loop.any() {
				own = own.clone()
				addItemScope(own, loop)
			}
			own.checkValue(v.r, s, sp, skipCallFields)
			v.checkArgumentsOf(sp+".arguments", s.Arguments, callee, nil)
			self := own.withView(&view{refs: refs, visible: earlierGroup(groupOf, gi), self: s.Name, selfOutputs: true})
			v.checkStepExits(sp, s.OnExit, s.Hooks, self)
		}
	}
	all := base.withView(&view{refs: refs, visible: earlierGroup(groupOf, len(t.Steps))})
	v.checkTemplateOutputs(t, path, all)
}

func (v *specValidator) checkStepName(path, name string, seen map[string]bool) {
	switch {
	case name == "":
		v.r.add(path, "a step needs a name")
	case seen[name]:
		v.r.add(path, "step name %q is not unique", name)
	default:
		if msg := invalidFieldName(name); msg != "" {
			v.r.add(path, "step name %q is invalid: %s", name, msg)
		}
	}
	seen[name] = true
}

// skipCallFields prunes what is checked elsewhere: inline templates (their
// own scope), hooks and onExit (with the step's own outputs in scope) and
// arguments (checked with the callee).
func skipCallFields(field string) bool {
	switch field {
	case "inline", "hooks", "onExit":
		return true
	}
	return false
}

// checkStepExits checks a step's or task's onExit and hooks.
func (v *specValidator) checkStepExits(path, onExit string, hooks v1alpha1.LifecycleHooks, self *scope) {
	if onExit != "" {
		if _, ok := v.byName[onExit]; !ok && !strings.Contains(onExit, "{{") {
			v.r.add(path+".onExit", "template %q not found", onExit)
		}
	}
	v.checkHooks(path+".hooks", hooks, self)
}

// checkTemplateOutputs checks the outputs of a steps or dag template, whose
// valueFrom may refer to any of its steps or tasks.
func (v *specValidator) checkTemplateOutputs(t *v1alpha1.Template, path string, sc *scope) {
	sc.checkValue(v.r, t.Outputs, path+".outputs", nil)
}

// loop describes the loop of a step or task.
type loop struct {
	items    []v1alpha1.Item
	param    string
	sequence *v1alpha1.Sequence
}

func loopOf(items []v1alpha1.Item, param string, seq *v1alpha1.Sequence) loop {
	return loop{items: items, param: param, sequence: seq}
}

func (l loop) any() bool { return len(l.items) > 0 || l.param != "" || l.sequence != nil }

func (v *specValidator) checkLoop(path string, l loop) {
	n := 0
	for _, set := range []bool{len(l.items) > 0, l.param != "", l.sequence != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		v.r.add(path, "set only one of withItems, withParam and withSequence")
	}
	if l.param != "" && !strings.Contains(l.param, "{{") {
		var list []any
		if err := json.Unmarshal([]byte(l.param), &list); err != nil {
			v.r.add(path+".withParam", "withParam value could not be parsed as a JSON list: %s: %v", l.param, err)
		}
	}
	if s := l.sequence; s != nil {
		sp := path + ".withSequence"
		if s.Count != nil && s.End != nil {
			v.r.add(sp, "set only one of count and end")
		}
		if s.Count == nil && s.End == nil {
			v.r.add(sp, "neither end nor count was specified in withSequence")
		}
		for _, f := range []struct {
			name string
			val  *intstr.IntOrString
		}{{"count", s.Count}, {"start", s.Start}, {"end", s.End}} {
			if f.val != nil && !validIntOrTag(*f.val) {
				v.r.add(sp+"."+f.name, "must be an integer or a {{variable}}, got %q", f.val.String())
			}
		}
		if s.Format != "" && !strings.Contains(s.Format, "%") {
			v.r.add(sp+".format", "format %q has no %% verb for the number", s.Format)
		}
	}
}

// addItemScope makes {{item}} and {{item.<key>}} resolvable inside a loop.
func addItemScope(sc *scope, l loop) {
	switch {
	case l.param != "" || l.sequence != nil:
		sc.add("item")
		sc.addPrefix("item.")
	case len(l.items) > 0:
		sc.add("item")
		for _, it := range l.items {
			var m map[string]any
			if err := json.Unmarshal([]byte(it.Value), &m); err != nil || m == nil {
				if strings.HasPrefix(strings.TrimSpace(string([]byte(it.Value))), "[") {
					sc.addPrefix("item.")
				}
				continue
			}
			for k := range m {
				sc.add("item." + k)
				sc.addPrefix("item." + k + ".")
			}
		}
		sc.setHint("item", "no item of the loop has that key")
	}
}

// addNodeScope adds the variables a finished step or task offers to later ones.
func addNodeScope(sc *scope, prefix string, callee *v1alpha1.Template, loop bool) {
	for _, k := range []string{"status", "id", "startedAt", "finishedAt", "hostNodeName", "exitCode"} {
		sc.add(prefix + "." + k)
	}
	delete(sc.hints, prefix) // sc is new: it has no parent to hint for prefix
	if callee == nil {
		sc.addPrefix(prefix + ".") // the callee is resolved at run time
		return
	}
	if callee.Daemon != nil && *callee.Daemon {
		sc.add(prefix + ".ip")
	}
	if isLeaf(callee) && callee.Suspend == nil {
		sc.add(prefix + ".outputs.result")
	}
	for _, p := range callee.Outputs.Parameters {
		sc.add(prefix + ".outputs.parameters." + p.Name)
	}
	for _, a := range callee.Outputs.Artifacts {
		sc.add(prefix + ".outputs.artifacts." + a.Name)
	}
	if loop {
		sc.add(prefix+".outputs.parameters", prefix+".outputs.result")
	}
	sc.setHint(prefix+".outputs", fmt.Sprintf("template %q declares no such output", callee.Name))
}

func validIntOrTag(v intstr.IntOrString) bool {
	if v.Type == intstr.Int || strings.Contains(v.StrVal, "{{") {
		return true
	}
	_, err := strconv.Atoi(strings.TrimSpace(v.StrVal))
	return err == nil
}
