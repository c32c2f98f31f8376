package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// refSource resolves steps.* or tasks.* variables lazily, so that a pass
// never builds the scope of completed steps it does not refer to.
type refSource interface {
	// lookup returns the value of a steps./tasks. key, nil for an absent
	// optional (rule 6.6).
	lookup(key string) (any, bool)
	// addAll adds every key the source can resolve (for expressions).
	addAll(dst expr.Scope)
	// err returns the first error met while computing values (an aggregate
	// over results that are not JSON, rule 5.6).
	err() error
}

// vars is a variable scope: local values layered over a parent, over the
// workflow's globals. The innermost refs source answers steps./tasks. keys.
type vars struct {
	r      *pass
	parent *vars
	local  map[string]any
	refs   refSource
}

func (r *pass) newVars(parent *vars) *vars { return &vars{r: r, parent: parent} }

func (v *vars) set(key string, val any) {
	if v.local == nil {
		v.local = make(map[string]any, 8)
	}
	v.local[key] = val
}

func isRefKey(key string) bool {
	return strings.HasPrefix(key, "steps.") || strings.HasPrefix(key, "tasks.")
}

func (v *vars) innermostRefs() refSource {
	for s := v; s != nil; s = s.parent {
		if s.refs != nil {
			return s.refs
		}
	}
	return nil
}

// lookup finds a variable: local values first (innermost wins), then the
// steps./tasks. references, then the globals.
func (v *vars) lookup(key string) (any, bool) {
	for s := v; s != nil; s = s.parent {
		if val, ok := s.local[key]; ok {
			return val, true
		}
	}
	if isRefKey(key) {
		if refs := v.innermostRefs(); refs != nil {
			return refs.lookup(key)
		}
		return nil, false
	}
	return v.r.global(key)
}

// full returns the whole flat scope, for expressions.
func (v *vars) full() expr.Scope {
	dst := make(expr.Scope, 64)
	v.r.addGlobals(dst)
	if refs := v.innermostRefs(); refs != nil {
		refs.addAll(dst)
	}
	var chain []*vars
	for s := v; s != nil; s = s.parent {
		chain = append(chain, s)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for k, val := range chain[i].local {
			dst[k] = val
		}
	}
	return dst
}

// env returns the nested expression environment (rule 6.8a).
func (v *vars) env() map[string]any { return expr.Expand(v.full()) }

func (v *vars) refErr() error {
	if refs := v.innermostRefs(); refs != nil {
		return refs.err()
	}
	return nil
}

// scopeFor returns a scope holding what text's tags refer to: only the keys
// of its simple tags, or the full scope when an expression tag is present.
// It returns nil when text has no tags at all.
func (v *vars) scopeFor(text string) expr.Scope {
	if !strings.Contains(text, "{{") {
		return nil
	}
	tags := expr.Tags(text)
	if len(tags) == 0 {
		return nil
	}
	for _, t := range tags {
		if t.Expr || strings.IndexByte(t.Body, '\\') >= 0 {
			return v.full()
		}
	}
	m := make(expr.Scope, len(tags))
	for _, t := range tags {
		if val, ok := v.lookup(t.Body); ok {
			m[t.Body] = val
		}
	}
	return m
}

// replace substitutes the tags of plain text.
func (v *vars) replace(text string, mode expr.Mode) (string, error) {
	scope := v.scopeFor(text)
	if scope == nil {
		return text, nil
	}
	out, err := v.r.lim.Expression.Replace(text, scope, mode)
	if err == nil {
		err = v.refErr()
	}
	return out, err
}

// substitute returns in with its tags substituted through its JSON form
// (rule 0.2). When in has no tags it is returned as it is, so callers must
// treat the result as read-only.
func substitute[T any](v *vars, in *T, mode expr.Mode) (*T, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode for substitution: %w", err)
	}
	text := string(data)
	scope := v.scopeFor(text)
	if scope == nil {
		return in, nil
	}
	out, err := v.r.lim.Expression.ReplaceJSON(text, scope, mode)
	if err != nil {
		return nil, err
	}
	if err := v.refErr(); err != nil {
		return nil, err
	}
	var res T
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		return nil, fmt.Errorf("decode after substitution: %w", err)
	}
	return &res, nil
}

// global returns a workflow-level variable (rule 6.1).
func (r *pass) global(key string) (any, bool) {
	if key == "workflow.failures" {
		if !r.afterRoot {
			return nil, false
		}
		return r.failuresValue(), true
	}
	v, ok := r.globalMap()[key]
	return v, ok
}

func (r *pass) addGlobals(dst expr.Scope) {
	for k, v := range r.globalMap() {
		dst[k] = v
	}
	if r.afterRoot {
		dst["workflow.failures"] = r.failuresValue()
	}
}

// setGlobal changes a global during the pass (workflow.status after the
// root ran, workflow.outputs.* after an export).
func (r *pass) setGlobal(key string, val any) {
	if key == "workflow.status" {
		r.statusVar, _ = val.(string)
	}
	if r.globals != nil {
		r.globals[key] = val
	}
}

// globalMap builds the global variables once per pass.
func (r *pass) globalMap() map[string]any {
	if r.globals != nil {
		return r.globals
	}
	g := make(map[string]any, 64)
	wf := r.wf
	g["workflow.name"] = wf.Name
	g["workflow.namespace"] = wf.Namespace
	g["workflow.uid"] = string(wf.UID)
	g["workflow.mainEntrypoint"] = r.spec.Entrypoint
	g["workflow.serviceAccountName"] = r.spec.ServiceAccountName
	g["workflow.status"] = r.statusVar
	g["workflow.duration"] = r.duration
	addTimeVars(g, wf.CreationTimestamp.Time)
	if v, ok := wf.Annotations["workflows.argoproj.io/scheduled-time"]; ok {
		g["workflow.scheduledTime"] = v
	}
	if r.spec.Priority != nil {
		g["workflow.priority"] = strconv.Itoa(int(*r.spec.Priority))
	}
	addParameterVars(g, r.spec.Arguments.Parameters)
	labels, annotations := wf.Labels, wf.Annotations
	if r.meta != nil {
		labels, annotations = r.meta.Labels, r.meta.Annotations
	}
	addMetadataVars(g, labels, annotations, r.spec.WorkflowMetadata)
	if out := wf.Status.Outputs; out != nil {
		for _, p := range out.Parameters {
			if p.Value != nil {
				g["workflow.outputs.parameters."+p.Name] = p.Value.String()
			}
		}
		for _, a := range out.Artifacts {
			g["workflow.outputs.artifacts."+a.Name] = a
		}
	}
	r.globals = g
	return g
}

func addTimeVars(g map[string]any, t time.Time) {
	g["workflow.creationTimestamp"] = t.Format(time.RFC3339)
	for c, layout := range strftimeChars {
		g["workflow.creationTimestamp."+string(c)] = t.Format(layout)
	}
	g["workflow.creationTimestamp.s"] = strconv.FormatInt(t.Unix(), 10)
	g["workflow.creationTimestamp.RFC3339"] = t.Format(time.RFC3339)
}

// strftimeChars are the strftime characters Argo supports for
// workflow.creationTimestamp.<c> (util/strftime), as Go layouts.
var strftimeChars = map[rune]string{
	'B': "January", 'b': "Jan", 'm': "01", 'A': "Monday", 'a': "Mon", 'd': "02",
	'H': "15", 'I': "03", 'M': "04", 'S': "05", 'Y': "2006", 'y': "06",
	'p': "PM", 'Z': "MST", 'z': "-0700", 'L': ".000",
}

func addParameterVars(g map[string]any, params []v1alpha1.Parameter) {
	if data, err := json.Marshal(params); err == nil {
		g["workflow.parameters"] = string(data)
		g["workflow.parameters.json"] = string(data)
	}
	for _, p := range params {
		switch {
		case p.Value != nil:
			g["workflow.parameters."+p.Name] = p.Value.String()
		case p.ValueFrom != nil && p.ValueFrom.Default != nil:
			g["workflow.parameters."+p.Name] = p.ValueFrom.Default.String()
		}
	}
}

func addMetadataVars(g map[string]any, wfLabels, wfAnnotations map[string]string, md *v1alpha1.WorkflowMetadata) {
	labels := map[string]string{}
	annotations := map[string]string{}
	for k, v := range wfLabels {
		labels[k] = v
	}
	for k, v := range wfAnnotations {
		annotations[k] = v
	}
	if md != nil {
		for k, v := range md.Labels {
			labels[k] = v
		}
		for k, v := range md.Annotations {
			annotations[k] = v
		}
	}
	addMapVars(g, "workflow.labels", labels, wfLabels == nil && (md == nil || md.Labels == nil))
	addMapVars(g, "workflow.annotations", annotations, wfAnnotations == nil && (md == nil || md.Annotations == nil))
}

func addMapVars(g map[string]any, prefix string, m map[string]string, isNil bool) {
	text := "null"
	if !isNil {
		if data, err := json.Marshal(m); err == nil {
			text = string(data)
		}
	}
	g[prefix] = text
	g[prefix+".json"] = text
	for k, v := range m {
		g[prefix+"."+k] = v
	}
}

// failedNode is one entry of workflow.failures (rule 6.4).
type failedNode struct {
	DisplayName  string `json:"displayName"`
	Message      string `json:"message"`
	TemplateName string `json:"templateName"`
	Phase        string `json:"phase"`
	PodName      string `json:"podName"`
	FinishedAt   any    `json:"finishedAt"`
}

// failuresValue computes workflow.failures: a Go-quoted JSON list of the
// Failed and Error nodes, sorted by node ID so that it is deterministic.
func (f *facts) failuresValue() string {
	if f.failures != nil {
		return *f.failures
	}
	var list []failedNode
	for _, id := range sortedIDs(f.nodes) {
		n := f.nodes[id]
		if !n.Phase.FailedOrError() {
			continue
		}
		var finished any
		if !n.FinishedAt.IsZero() {
			finished = n.FinishedAt.UTC().Format(time.RFC3339)
		}
		list = append(list, failedNode{
			DisplayName: n.DisplayName, Message: n.Message, TemplateName: nodeTemplateName(n),
			Phase: string(n.Phase), PodName: podName(f.wf.Name, n.Name, nodeTemplateName(n)), FinishedAt: finished,
		})
	}
	data, err := json.Marshal(list)
	if err != nil {
		data = []byte("null")
	}
	s := strconv.Quote(string(data))
	f.failures = &s
	return s
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
