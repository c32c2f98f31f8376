package engine

import (
	"strings"
	"time"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// stepRefs resolves steps.<name>.* for the groups of one steps node that
// have completed (rule 6.1): only what a tag asks for is computed.
type stepRefs struct {
	r         *pass
	stepsName string
	tmpl      *v1alpha1.Template
	tc        tmplCtx
	upTo      int // groups [0, upTo) are done
	cache     map[string]expr.Scope
	firstErr  error
}

func (s *stepRefs) err() error { return s.firstErr }

func (s *stepRefs) lookup(key string) (any, bool) {
	name, ok := refName(key, "steps.")
	if !ok {
		return nil, false
	}
	v, ok := s.entries(name)[key]
	return v, ok
}

func (s *stepRefs) addAll(dst expr.Scope) {
	for g := 0; g < s.upTo && g < len(s.tmpl.Steps); g++ {
		for _, st := range s.tmpl.Steps[g] {
			for k, v := range s.entries(st.Name) {
				dst[k] = v
			}
		}
	}
}

// refName extracts <name> from "<prefix><name>.<rest>".
func refName(key, prefix string) (string, bool) {
	if !strings.HasPrefix(key, prefix) {
		return "", false
	}
	rest := key[len(prefix):]
	dot := strings.IndexByte(rest, '.')
	if dot <= 0 {
		return "", false
	}
	return rest[:dot], true
}

func (s *stepRefs) entries(name string) expr.Scope {
	if sc, ok := s.cache[name]; ok {
		return sc
	}
	sc := expr.Scope{}
	if g, step := s.find(name); step != nil {
		if err := s.r.addStepEntries(sc, "steps."+name, groupName(s.stepsName, g), step, s.tc); err != nil && s.firstErr == nil {
			s.firstErr = err
		}
	}
	if s.cache == nil {
		s.cache = map[string]expr.Scope{}
	}
	s.cache[name] = sc
	return sc
}

// find returns the group and the step called name among the done groups,
// searching back from the last done group: references are mostly to
// recent steps, and no index is built on every pass.
func (s *stepRefs) find(name string) (int, *v1alpha1.WorkflowStep) {
	for g := s.upTo - 1; g >= 0 && g < len(s.tmpl.Steps); g-- {
		group := s.tmpl.Steps[g]
		for i := range group {
			if group[i].Name == name {
				return g, &group[i]
			}
		}
	}
	return 0, nil
}

// checkGroup computes the aggregates of the loops of a group that just
// succeeded, so that results that are not JSON fail the Steps node now
// (rule 5.6, trap 6).
func (s *stepRefs) checkGroup(g int) error {
	if g >= len(s.tmpl.Steps) {
		return nil
	}
	for i := range s.tmpl.Steps[g] {
		st := &s.tmpl.Steps[g][i]
		if !isLoopStep(st) {
			continue
		}
		sc := expr.Scope{}
		if err := s.r.addStepEntries(sc, "steps."+st.Name, groupName(s.stepsName, g), st, s.tc); err != nil {
			return err
		}
	}
	return nil
}

// addStepEntries adds the variables of one step of a done group: the node's
// own, a loop's aggregates and its group's status (rule 5.4), or a skipped
// producer's defaults (rule 6.6).
func (f *facts) addStepEntries(sc expr.Scope, prefix, group string, step *v1alpha1.WorkflowStep, tc tmplCtx) error {
	if n, ok := f.byName(group + "." + step.Name); ok {
		f.addNodeEntries(sc, prefix, n, stepSite(step), tc)
		return nil
	}
	if !isLoopStep(step) {
		return nil
	}
	g, ok := f.byName(group)
	if !ok {
		return nil
	}
	addNodeFields(sc, prefix, g)
	var iterations []v1alpha1.NodeStatus
	head := group + "." + step.Name + "("
	for _, c := range g.Children {
		if n, ok := f.nodes[c]; ok && strings.HasPrefix(n.Name, head) && n.Type != v1alpha1.NodeTypeSkipped {
			iterations = append(iterations, n)
		}
	}
	return addAggregates(sc, prefix, iterations, group+"."+step.Name, f.lim.MaxParameterBytes)
}

// addNodeEntries adds a node's variables, or a skipped producer's.
func (f *facts) addNodeEntries(sc expr.Scope, prefix string, n v1alpha1.NodeStatus, h callSite, tc tmplCtx) {
	if n.Type == v1alpha1.NodeTypeSkipped && (n.Phase == v1alpha1.NodeSkipped || n.Phase == v1alpha1.NodeOmitted) {
		addNodeFields(sc, prefix, n)
		f.addSkippedOutputs(sc, prefix, h, tc)
		return
	}
	n = f.lastAttemptOf(n)
	addNodeFields(sc, prefix, n)
	addOutputs(sc, prefix, n.Outputs)
}

// addNodeFields adds id, startedAt, finishedAt, ip, status, hostNodeName.
func addNodeFields(sc expr.Scope, prefix string, n v1alpha1.NodeStatus) {
	sc[prefix+".id"] = n.ID
	if !n.StartedAt.IsZero() {
		sc[prefix+".startedAt"] = n.StartedAt.UTC().Format(time.RFC3339)
	}
	if !n.FinishedAt.IsZero() {
		sc[prefix+".finishedAt"] = n.FinishedAt.UTC().Format(time.RFC3339)
	}
	if n.PodIP != "" {
		sc[prefix+".ip"] = n.PodIP
	}
	if n.Phase != "" {
		sc[prefix+".status"] = string(n.Phase)
	}
	if n.HostNodeName != "" {
		sc[prefix+".hostNodeName"] = n.HostNodeName
	}
}

// addOutputs adds a node's result, exit code, parameters and artifacts.
func addOutputs(sc expr.Scope, prefix string, out *v1alpha1.Outputs) {
	if out == nil {
		return
	}
	if out.Result != nil {
		sc[prefix+".outputs.result"] = *out.Result
	}
	if out.ExitCode != nil {
		sc[prefix+".exitCode"] = *out.ExitCode
	}
	for _, p := range out.Parameters {
		if p.Value != nil {
			sc[prefix+".outputs.parameters."+p.Name] = p.Value.String()
		}
	}
	for _, a := range out.Artifacts {
		sc[prefix+".outputs.artifacts."+a.Name] = a
	}
}

// addSkippedOutputs gives a producer that never ran its declared outputs:
// valueFrom.default, else absent (nil) (rule 6.6, trap 13).
func (f *facts) addSkippedOutputs(sc expr.Scope, prefix string, h callSite, tc tmplCtx) {
	t, _, err := f.resolve(h, tc)
	if err != nil {
		return
	}
	for _, p := range t.Outputs.Parameters {
		if p.ValueFrom != nil && p.ValueFrom.Default != nil {
			sc[prefix+".outputs.parameters."+p.Name] = p.ValueFrom.Default.String()
		} else {
			sc[prefix+".outputs.parameters."+p.Name] = nil
		}
	}
	if t.Outputs.Result != nil || t.Script != nil {
		sc[prefix+".outputs.result"] = nil
	}
}
